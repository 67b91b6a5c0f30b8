"""Faults found by running the generate stage against a fault-injecting Anthropic server, fixed:
a re-run answered from the cache needs no key, and a budget stop is never a finished golden set.

The stage runs as DVC runs it (a subprocess), with the real anthropic SDK against the loopback
server (ANTHROPIC_BASE_URL), and no ANTHROPIC_API_KEY where the test says so.
"""

from __future__ import annotations

import json

import pytest
import yaml

from goldenset.generation.cache import AnswerCache
from goldenset.llm_stand_in import LoopbackLLM
from tests.stages.test_generate import KEY, make_project, read_jsonl, run, stage_env

QUESTIONS = 6


def anthropic_params(**overrides) -> dict:
    base = {"provider": "anthropic", "max_questions": QUESTIONS, "concurrency": 1, "candidates": 1}
    return {**base, **overrides}


def set_params(project, **overrides) -> None:
    (project / "params.yaml").write_text(
        yaml.safe_dump({"generate": anthropic_params(**overrides)})
    )


@pytest.mark.slow
def test_a_rerun_from_a_full_cache_needs_no_key(tmp_path):
    with LoopbackLLM(api_key=KEY) as server:
        project = make_project(tmp_path, anthropic_params())
        first = run(project, stage_env(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url))
        assert first.returncode == 0, first.stderr
        assert server.requests == QUESTIONS
        golden = (project / "data" / "goldenset.jsonl").read_bytes()
        stats = json.loads((project / "data" / "generate_stats.json").read_text())
        assert stats["questions"] == QUESTIONS and stats["answers"] == QUESTIONS

        # what `dvc repro --force` does: outputs gone, the persisted cache kept, and no key
        for name in ("goldenset.jsonl", "goldenset.rejects.jsonl", "generate_stats.json"):
            (project / "data" / name).unlink()
        again = run(project, stage_env())
        assert again.returncode == 0, again.stderr
        assert f"{QUESTIONS} answers from cache, 0 LLM requests" in again.stderr
        assert (project / "data" / "goldenset.jsonl").read_bytes() == golden
        assert json.loads((project / "data" / "generate_stats.json").read_text()) == stats

        set_params(project, concurrency=4)  # a param outside the cache key: still nothing to ask
        third = run(project, stage_env())
        assert third.returncode == 0, third.stderr
        assert server.requests == QUESTIONS


@pytest.mark.slow
def test_a_budget_stop_fails_and_a_raised_budget_asks_only_the_rest(tmp_path):
    with LoopbackLLM(api_key=KEY) as server:
        # claude-haiku-4-5 at $1/$5 per million tokens: a request's worst case (its prompt plus
        # 400 output tokens) is about $0.0028, so $0.004 pays for a few of the six
        project = make_project(tmp_path, anthropic_params(max_usd=0.004, max_tokens=400))
        env = stage_env(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        stopped = run(project, env)
        assert stopped.returncode == 1
        last = stopped.stderr.strip().splitlines()[-1]
        asked = server.requests
        assert 0 < asked < QUESTIONS
        assert last.startswith("error: stopped before passing generate.max_usd=$0.004")
        assert f"{QUESTIONS - asked} of {QUESTIONS} questions still to ask" in last
        assert "raise generate.max_usd and run again" in last
        assert not (project / "data" / "goldenset.jsonl").exists()
        assert len(AnswerCache(project / "cache" / "llm")) == asked

        set_params(project, max_usd=1.0, max_tokens=400)
        rest = run(project, env)
        assert rest.returncode == 0, rest.stderr
        assert server.requests == QUESTIONS  # only the rest was asked
        assert max(server.answered().values()) == 1
        assert len(read_jsonl(project / "data" / "goldenset.jsonl")) == QUESTIONS


def test_a_budget_below_one_request_says_so_and_asks_nothing(tmp_path):
    project = make_project(tmp_path, anthropic_params(max_usd=0.0001))
    result = run(project, stage_env())  # no key and no server: nothing may be asked
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: generate.max_usd=$0.0001 is below the worst-case cost of a ")
    assert f"so {QUESTIONS} questions were not asked" in last
    assert "Traceback" not in result.stderr
