"""generate.batch: the real `anthropic` SDK against a loopback Message Batches server. The golden
set and the cached answers equal the synchronous path's; kill -9 while polling, then a resume
that submits nothing again; errored and expired requests are retried or rejected with a reason."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from goldenset.corpus.queries import ExampleQuery
from goldenset.generation.cache import AnswerCache
from goldenset.generation.params import GenerateParams
from goldenset.generation.passages import passages_for
from goldenset.generation.pricing import cost_usd, price_for
from goldenset.generation.providers.anthropic import AnthropicProvider
from goldenset.generation.providers.anthropic.batches import PENDING_FILE, split_requests
from goldenset.generation.runner import run_generation
from goldenset.llm_stand_in import LoopbackLLM, Reply
from tests.stages.test_generate import command, make_project, read_jsonl, stage_env
from tests.support.batch_server import ERRORED, EXPIRED, INVALID, LoopbackBatches
from tests.support.documents import make_documents

KEY = "test-key"
DOCUMENTS = make_documents(8, sentences=20)
PREAMBLE = 'Sure! Here is a question: {"question": "What is it?", "evidence": "x"}'


def settings(cache: Path, **changes) -> GenerateParams:
    base = {"provider": "anthropic", "max_questions": 6, "batch": True, "batch_poll_s": 0.01}
    base["candidates"] = 1  # one answer per prompt unless a test asks for more
    base["max_retries"] = 1
    return GenerateParams(**{**base, **changes}, cache_dir=str(cache))


def synchronous(params: GenerateParams, scripts: dict[str, list[Reply]]):
    """The same run without batches, against the Messages endpoint, into a fresh cache."""
    with LoopbackLLM() as server:
        for part, replies in scripts.items():
            server.script_for(part, *replies)
        provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
        return run_generation(DOCUMENTS, params, provider=provider, progress=False)


def cached_texts(folder: Path) -> dict[str, str]:
    cache = AnswerCache(folder)
    return {path.stem: cache.get(path.stem).text for path in sorted(folder.glob("??/*.json"))}


def test_batches_give_the_synchronous_answers_retry_and_reject_with_reasons(tmp_path):
    params = settings(tmp_path / "batch")
    passages = passages_for(DOCUMENTS, params)
    invalid, flaky, expired, refused = (p.text[:60] for p in passages[:4])
    with LoopbackBatches() as server:
        server.script_for(invalid, Reply(PREAMBLE))  # invalid: a correction in the next round
        server.script_for(flaky, ERRORED)  # overloaded once, then answered
        server.script_for(expired, EXPIRED, EXPIRED)  # max_retries 1: rejected after 2 tries
        server.script_for(refused, INVALID)  # an invalid request is never sent again
        provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
        result = run_generation(DOCUMENTS, params, provider=provider, progress=False)
        assert server.creates == 2  # round 1: all 6; round 2: the correction, flaky, expired
        assert server.submitted[max(server.submitted, key=server.submitted.get)] <= 2

    reasons = {row["doc_id"]: row["reason"] for row in result.rejects}
    assert reasons == {
        passages[2].doc_id: "batch_expired",
        passages[3].doc_id: "batch_invalid_request_error",
    }
    assert len(result.rows) == 4
    invalid_answers = result.stats.invalid_answers
    assert sum(n for code, n in invalid_answers.items() if not code.startswith("batch_")) == 1

    # the synchronous path, with the same invalid first answer, writes the same questions
    sync_params = settings(tmp_path / "sync", batch=False)
    sync = synchronous(sync_params, {invalid: [Reply(PREAMBLE)]})
    kept = {passages[2].doc_id, passages[3].doc_id}
    assert result.rows == [row for row in sync.rows if row["doc_id"] not in kept]
    batch_cache, sync_cache = cached_texts(tmp_path / "batch"), cached_texts(tmp_path / "sync")
    assert batch_cache.items() <= sync_cache.items()  # same keys, same answers
    assert len(sync_cache) - len(batch_cache) == 2  # the two the batch API would not answer

    # batch price: half the synchronous one for the same tokens
    stats = result.stats
    full = cost_usd(price_for("claude-haiku-4-5"), stats.input_tokens, stats.output_tokens)
    assert stats.cost_usd == pytest.approx(full / 2)
    assert not (tmp_path / "batch" / PENDING_FILE).exists()


def test_batches_check_answers_as_the_synchronous_path_does(tmp_path):
    # every sentence names "protein", so a question about it alone is vague
    documents = [(doc_id, text.replace(". ", " protein. ")) for doc_id, text in DOCUMENTS]
    params = settings(tmp_path / "batch", distinctive_share=0.5)
    first = passages_for(documents, params)[0]
    vague = Reply("What should I know about protein?")
    with LoopbackBatches() as server:
        server.script_for(first.text[:60], vague)
        provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
        result = run_generation(documents, params, provider=provider, progress=False)
        assert server.creates == 2  # round 2: the retry of the vague answer
    assert dict(result.stats.invalid_answers) == {"vague": 1}
    assert result.stats.not_asked == 0 and len(result.rows) == 6
    with LoopbackLLM() as server:
        server.script_for(first.text[:60], vague)
        sync_params = settings(tmp_path / "sync", batch=False, distinctive_share=0.5)
        provider = AnthropicProvider(sync_params, api_key=KEY, base_url=server.url)
        sync = run_generation(documents, sync_params, provider=provider, progress=False)
    assert result.rows == sync.rows


def test_batches_stop_before_max_usd_and_a_bigger_budget_resumes(tmp_path):
    with LoopbackBatches() as server:
        # a request is priced at its max_tokens: 400 of them make 0.002 USD less than 6 requests
        params = settings(tmp_path, max_usd=0.002, max_tokens=400)
        provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
        first = run_generation(DOCUMENTS, params, provider=provider, progress=False)
        stats = first.stats
        assert stats.stopped_by_budget and 0 < stats.requests < 6
        assert stats.cost_usd <= 0.002 and len(first.rows) == stats.requests
        assert stats.not_asked == 6 - stats.requests
        bigger = settings(tmp_path, max_usd=1.0, max_tokens=400)
        provider = AnthropicProvider(bigger, api_key=KEY, base_url=server.url)
        rest = run_generation(DOCUMENTS, bigger, provider=provider, progress=False)
        assert rest.stats.requests == 6 - stats.requests and len(rest.rows) == 6
        assert set(server.submitted.values()) == {1}  # nothing paid twice


def kill_9_when(condition, project, env: dict[str, str]) -> None:
    """Runs the stage and kills it (SIGKILL) as soon as `condition()` holds (at most 120 s)."""
    victim = subprocess.Popen(
        command(), cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while not condition() and time.monotonic() < deadline and victim.poll() is None:
        time.sleep(0.02)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()


@pytest.mark.slow
def test_kill_9_while_polling_then_resume_submits_nothing_again(tmp_path):
    generate = {"provider": "anthropic", "max_questions": 6, "batch": True, "batch_poll_s": 0.05}
    generate["candidates"] = 1
    with LoopbackBatches() as server:
        server.hold.set()  # batches stay in progress: the stage polls until it is killed
        project = make_project(tmp_path, generate)
        env = stage_env(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        kill_9_when(lambda: server.retrieves >= 2, project, env)
        pending = project / "cache" / "llm" / PENDING_FILE
        assert json.loads(pending.read_text()) == {"batches": ["msgbatch_0001"]}
        assert server.creates == 1 and len(server.submitted) == 6

        server.hold.clear()
        resumed = subprocess.run(
            command(), cwd=project, env=env, capture_output=True, text=True, timeout=180
        )
        assert resumed.returncode == 0, resumed.stderr
        assert "resuming batch msgbatch_0001" in resumed.stderr
        assert "ended: 0 processing, 6 succeeded, 0 errored, 0 canceled, 0 expired" in (
            resumed.stderr
        )
        assert server.creates == 1  # zero new submissions
        assert set(server.submitted.values()) == {1}
        assert not pending.exists()

    rows = read_jsonl(project / "data" / "goldenset.jsonl")
    sync = synchronous(settings(tmp_path / "sync", batch=False), {})
    assert rows == sync.rows
    assert len(AnswerCache(project / "cache" / "llm")) == 6


@pytest.mark.slow
def test_kill_9_before_the_batch_id_is_written_then_resume_adopts_the_batch(tmp_path):
    generate = {"provider": "anthropic", "max_questions": 6, "batch": True, "batch_poll_s": 0.05}
    generate["candidates"] = 1
    with LoopbackBatches() as server:
        server.stall_create.set()  # the batch exists, but the stage never learns its id
        project = make_project(tmp_path, generate)
        env = stage_env(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=server.url)
        kill_9_when(lambda: server.creates >= 1, project, env)
        server.stall_create.clear()
        pending = json.loads((project / "cache" / "llm" / PENDING_FILE).read_text())
        assert pending["batches"] == [] and len(pending["submitting"]["custom_ids"]) == 6
        assert server.creates == 1 and len(server.submitted) == 6

        resumed = subprocess.run(
            command(), cwd=project, env=env, capture_output=True, text=True, timeout=180
        )
        assert resumed.returncode == 0, resumed.stderr
        assert "adopting batch msgbatch_0001" in resumed.stderr
        assert server.lists >= 1
        assert server.creates == 1  # zero new submissions: nothing paid twice
        assert set(server.submitted.values()) == {1}
        assert not (project / "cache" / "llm" / PENDING_FILE).exists()

    rows = read_jsonl(project / "data" / "goldenset.jsonl")
    assert rows == synchronous(settings(tmp_path / "sync", batch=False), {}).rows


def test_an_adopted_batch_of_another_client_gives_none_of_its_answers(tmp_path, caplog):
    params = settings(tmp_path / "cache")
    with LoopbackBatches() as server:
        provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
        request = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
        # a killed run meant to create a batch of 6; another client created one of 6 meanwhile
        intent = {
            "since": "2000-01-01T00:00:00+00:00",
            "custom_ids": [f"ours-{i}" for i in range(6)],
        }
        foreign = [{"custom_id": f"theirs-{i}", "params": request} for i in range(6)]
        provider.client().messages.batches.create(requests=foreign)
        (tmp_path / "cache").mkdir()
        (tmp_path / "cache" / PENDING_FILE).write_text(
            json.dumps({"batches": [], "submitting": intent})
        )
        with caplog.at_level("INFO", logger="goldenset"):
            result = run_generation(DOCUMENTS, params, provider=provider, progress=False)
        assert "adopting batch msgbatch_0001" in caplog.text
        assert server.creates == 2 and len(result.rows) == 6  # its own 6, sent once
    cached = {path.stem for path in (tmp_path / "cache").rglob("*.json")}
    assert len(AnswerCache(tmp_path / "cache")) == 6 and not any("theirs" in k for k in cached)


def test_requests_split_at_the_api_limits():
    small = [{"custom_id": str(i), "params": {"messages": "x"}} for i in range(100_001)]
    assert [len(part) for part in split_requests(small)] == [100_000, 1]
    big = [{"custom_id": str(i), "params": {"messages": "y" * 100_000_000}} for i in range(3)]
    assert [len(part) for part in split_requests(big)] == [2, 1]


def test_batch_with_another_provider_is_one_clear_error(tmp_path):
    with LoopbackLLM(api_key=None) as server:
        from goldenset.core.errors import GoldensetError
        from goldenset.generation.providers.openai import OpenAIProvider

        params = settings(
            tmp_path, provider="openai", model="m", batch=True, openai={"base_url": server.url}
        )
        with pytest.raises(GoldensetError, match="generate.batch is for provider anthropic"):
            run_generation(DOCUMENTS, params, provider=OpenAIProvider(params, api_key=KEY))
        assert server.requests == 0


def test_a_querys_candidates_go_in_one_round_and_match_the_synchronous_path(tmp_path):
    # ten examples that echo half of the first document's words: every query has an aim
    words = sorted({w.lower() for w in DOCUMENTS[0][1].split() if w.isalpha() and len(w) > 3})
    examples = [ExampleQuery(" ".join(words[:5] + ["zzq"] * 5), DOCUMENTS[0][0])] * 10
    params = settings(tmp_path / "batch", candidates=3, aim_echo=True)
    with LoopbackBatches() as server:
        provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
        result = run_generation(
            DOCUMENTS, params, provider=provider, progress=False, aim_examples=examples
        )
        assert server.creates == 1  # the three samples of each prompt need no answer before them
    assert result.stats.cache_hits == 18 and len(result.rows) == 6
    sync_params = settings(tmp_path / "sync", batch=False, candidates=3, aim_echo=True)
    with LoopbackLLM() as server:
        provider = AnthropicProvider(sync_params, api_key=KEY, base_url=server.url)
        sync = run_generation(
            DOCUMENTS, sync_params, provider=provider, progress=False, aim_examples=examples
        )
        assert server.requests == 18
    assert result.rows == sync.rows
