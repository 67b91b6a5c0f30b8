"""The generate stage as DVC runs it: a subprocess in a project folder, against the loopback
server; `kill -9` in the middle of a run, then a resume that asks only for what is missing."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from goldenset.generation.cache import AnswerCache
from goldenset.generation.params import GenerateParams
from goldenset.generation.providers.openai import OpenAIProvider
from goldenset.generation.runner import run_generation
from goldenset.judge.selection import reading_key, weights_digest
from goldenset.llm_stand_in import LoopbackLLM, valid_answer
from tests.conftest import ROOT
from tests.support.documents import make_documents

KEY = "test-key"
DOCUMENTS = make_documents(8, sentences=20)


def make_project(tmp_path: Path, generate: dict) -> Path:
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    frame = pd.DataFrame(
        {
            "doc_id": [doc_id for doc_id, _ in DOCUMENTS],
            "source": [f"{doc_id}.txt" for doc_id, _ in DOCUMENTS],
            "title": [doc_id for doc_id, _ in DOCUMENTS],
            "text": [text for _, text in DOCUMENTS],
            "sha256": [hashlib.sha256(text.encode()).hexdigest() for _, text in DOCUMENTS],
        }
    )
    frame.to_parquet(project / "data" / "documents.parquet")
    (project / "params.yaml").write_text(yaml.safe_dump({"generate": generate}))
    return project


def stage_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["PYTHONPATH"] = str(ROOT / "src")
    env.update(extra)
    return env


def command() -> list[str]:
    return [sys.executable, "-m", "goldenset.stages.generate"]


def run(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        command(), cwd=project, env=env, capture_output=True, text=True, timeout=180
    )


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_stage_writes_both_outputs_and_a_summary(tmp_path):
    with LoopbackLLM(api_key=None) as server:
        generate = {
            "provider": "openai",
            "model": "loopback-model",
            "max_questions": 8,
            "concurrency": 4,
            "candidates": 1,
            "openai": {"base_url": server.openai_url},
        }
        project = make_project(tmp_path, generate)
        first = run(project, stage_env())
        assert first.returncode == 0, first.stderr
        rows = read_jsonl(project / "data" / "goldenset.jsonl")
        assert len(rows) == 8 and {row["provider"] for row in rows} == {"openai"}
        assert (project / "data" / "goldenset.rejects.jsonl").read_text() == ""
        assert "8 questions written, 0 rejected" in first.stderr
        assert "HTTP Request" not in first.stderr
        assert server.requests == 8


def test_nothing_to_ask_writes_empty_outputs_and_sends_no_request(tmp_path):
    # no ANTHROPIC_API_KEY: a client built at all fails (as the next test shows), a request
    # sent reaches the server
    with LoopbackLLM() as server:
        project = make_project(tmp_path, {"provider": "anthropic", "max_questions": 0})
        result = run(project, stage_env(ANTHROPIC_BASE_URL=server.url))
        assert result.returncode == 0, result.stderr
        assert server.received == 0
    assert (project / "data" / "goldenset.jsonl").read_text() == ""
    assert (project / "data" / "goldenset.rejects.jsonl").read_text() == ""
    assert (project / "cache" / "llm").is_dir()


def test_a_missing_key_is_one_line_without_traceback(tmp_path):
    project = make_project(tmp_path, {"provider": "anthropic", "max_questions": 2})
    result = run(project, stage_env())
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "ANTHROPIC_API_KEY" in last


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_asks_only_for_what_is_missing(tmp_path):
    questions, concurrency = 20, 2
    with LoopbackLLM(latency=0.15) as server:
        generate = {
            "provider": "openai",
            "model": "loopback-model",
            "max_questions": questions,
            "candidates": 1,
            "concurrency": concurrency,
            "openai": {"base_url": server.openai_url},
        }
        project = make_project(tmp_path, generate)
        env = stage_env(OPENAI_API_KEY=KEY)
        victim = subprocess.Popen(
            command(), cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 120
        while server.received < 8 and time.monotonic() < deadline and victim.poll() is None:
            time.sleep(0.01)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        time.sleep(0.5)  # let the server finish answering requests nobody waits for any more

        cache = AnswerCache(project / "cache" / "llm")
        cached = len(cache)
        assert 8 - concurrency <= cached < questions
        assert not list((project / "cache" / "llm").glob("*/.*.tmp"))
        assert not (project / "data" / "goldenset.jsonl").exists()
        asked_before = server.received

        resumed = run(project, env)
        assert resumed.returncode == 0, resumed.stderr
        assert server.received - asked_before == questions - cached
        assert f"{cached} answers from cache, {questions - cached} LLM requests" in resumed.stderr
        assert len(cache) == questions
        # only the requests in flight at the kill were ever answered twice
        assert sum(n - 1 for n in server.answered().values()) <= concurrency

        golden = (project / "data" / "goldenset.jsonl").read_bytes()
        asked_before = server.received
        again = run(project, env)  # what `dvc repro --force` does
        assert again.returncode == 0 and server.received == asked_before
        assert f"{questions} answers from cache, 0 LLM requests" in again.stderr
        assert (project / "data" / "goldenset.jsonl").read_bytes() == golden

        # the resumed golden set is the one an uninterrupted run makes
        params = GenerateParams(**generate, cache_dir=str(tmp_path / "fresh"))
        provider = OpenAIProvider(params, api_key=KEY)
        fresh = run_generation(DOCUMENTS, params, provider=provider, progress=False)
        assert len(fresh.rows) == questions
        assert read_jsonl(project / "data" / "goldenset.jsonl") == fresh.rows


def examples_file_params(server: LoopbackLLM) -> dict:
    """generate params: two questions from the loopback server, styled by examples/queries.jsonl."""
    return {
        "provider": "openai",
        "model": "loopback-model",
        "max_questions": 2,
        "example_queries": "examples/queries.jsonl",
        "example_count": 1,
        "form": "question",  # set outright: what reaches the prompt is the test, not the form
        "candidates": 1,
        "openai": {"base_url": server.openai_url},
    }


@pytest.mark.slow
def test_example_queries_from_a_beir_file_reach_the_prompt(tmp_path):
    seen: list[str] = []

    def answer(passage: str, request_text: str) -> str:
        seen.append(request_text)
        return valid_answer(passage, request_text)

    with LoopbackLLM(api_key=None, answer=answer) as server:
        generate = examples_file_params(server)
        project = make_project(tmp_path, generate)
        missing = run(project, stage_env())
        assert missing.returncode == 1 and "Traceback" not in missing.stderr
        assert "error: generate.example_queries: examples/queries.jsonl is not a file" in (
            missing.stderr
        )
        (project / "examples").mkdir()
        (project / "examples" / "queries.jsonl").write_text(
            json.dumps({"_id": "q1", "text": "do statins prevent strokes"}) + "\n"
        )
        done = run(project, stage_env())
        assert done.returncode == 0, done.stderr
    assert len(seen) == 2 and all("- do statins prevent strokes" in text for text in seen)


def first_words(text: str, count: int) -> list[str]:
    """`count` distinct long words of the text's first sentence."""
    return sorted({w for w in text.split(".")[0].split() if w.isalpha() and len(w) > 3})[:count]


@pytest.mark.slow
def test_an_examples_file_aims_the_questions_at_its_echoes(tmp_path):
    # each example names its document and 4 words of it, and takes 6 of the next document: in
    # its own document it echoes 0.4, in the corpus's best window (the next one's) 0.6
    lines = [
        {
            "_id": f"q{index}",
            "text": " ".join(
                first_words(text, 4) + first_words(DOCUMENTS[(index + 1) % len(DOCUMENTS)][1], 6)
            ),
            "doc_id": doc_id,
        }
        for index, (doc_id, text) in enumerate(DOCUMENTS)
    ] * 2
    with LoopbackLLM(api_key=None) as server:
        project = make_project(tmp_path, {**examples_file_params(server), "aim_echo": True})
        (project / "examples").mkdir()
        (project / "examples" / "queries.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in lines)
        )
        done = run(project, stage_env())
    assert done.returncode == 0, done.stderr
    # measured in the documents their lines name, not in the corpus's best match
    assert "questions aim at the echo of 16 example queries (median 0.40" in done.stderr


@pytest.mark.slow
def test_keep_share_asks_more_and_keeps_the_judges_best_once(tmp_path):
    """generate.keep_share: twice the questions asked, the real judge (referee model and the
    bundled reader) keeps the best half, the rest rejected with its probability; a re-run reads
    nothing again."""
    pytest.importorskip("llama_cpp")
    with LoopbackLLM(api_key=None) as server:
        generate = {
            "provider": "openai",
            "model": "loopback-model",
            "max_questions": 4,
            "keep_share": 0.5,
            "openai": {"base_url": server.openai_url},
        }
        project = make_project(tmp_path, generate)
        first = run(project, stage_env(HF_HUB_OFFLINE="1"))
        assert first.returncode == 0, first.stderr
        assert "asking 8 questions to keep the judge's best 4" in first.stderr
        rows = read_jsonl(project / "data" / "goldenset.jsonl")
        dropped = [
            r
            for r in read_jsonl(project / "data" / "goldenset.rejects.jsonl")
            if r["reason"] == "not_selected"
        ]
        assert len(rows) == 4 and len(dropped) == 4 and server.requests == 8
        judged = json.loads((project / "cache" / "llm" / "judged.json").read_text())
        assert len(judged) == 8
        weights = weights_digest()
        kept_p = [judged[reading_key(r, weights)] for r in rows]
        kept_docs = Counter(r["doc_id"] for r in rows)
        for row in dropped:  # worse than every kept question, or its document's share is used
            assert row["judge_pass"] <= min(kept_p) + 1e-4 or kept_docs[row["doc_id"]] > 0
        again = run(project, stage_env(HF_HUB_OFFLINE="1"))
        assert again.returncode == 0, again.stderr
        assert "judge:" not in again.stderr  # every reading from judged.json
        assert read_jsonl(project / "data" / "goldenset.jsonl") == rows
