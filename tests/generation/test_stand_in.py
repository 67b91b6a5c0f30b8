"""The loopback stand-in for the Anthropic and OpenAI APIs, started as the docs' pages start it."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import anthropic


def shell_lines(command: str, env: dict[str, str]) -> dict[str, str]:
    shown = subprocess.run(
        [sys.executable, "-m", "goldenset.llm_stand_in", command],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    return dict(
        line.removeprefix("export ").split("=", 1)
        for line in shown.splitlines()
        if line.startswith("export ")
    )


def stopped(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_start_points_both_sdks_at_a_stand_in_that_stop_stops():
    started = shell_lines("start", dict(os.environ))
    assert started["OPENAI_BASE_URL"] == started["ANTHROPIC_BASE_URL"] + "/v1"
    client = anthropic.Anthropic(
        base_url=started["ANTHROPIC_BASE_URL"], api_key=started["ANTHROPIC_API_KEY"]
    )
    passage = "<passage>The <target>seasonal</target> flu vaccine works.</passage>"
    reply = client.messages.create(
        model="claude-haiku-4-5", max_tokens=50, messages=[{"role": "user", "content": passage}]
    )
    assert reply.content[0].text == "What should I know about seasonal?"
    pid = int(started["GOLDENSET_STAND_IN_PID"])
    shell_lines("stop", {**os.environ, **started})
    assert stopped(pid)
    shell_lines("stop", {**os.environ, **started})  # a second stop finds nothing, and says nothing
