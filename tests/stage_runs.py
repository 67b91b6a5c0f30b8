"""Stage scripts run as DVC runs them: a subprocess in a project folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def run_stage(name: str, workdir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", f"goldenset.stages.{name}"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_one_line_error(process: subprocess.CompletedProcess, *fragments: str) -> None:
    assert process.returncode == 1
    assert "Traceback" not in process.stderr
    lines = process.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), process.stderr
    for fragment in fragments:
        assert fragment in lines[0]
