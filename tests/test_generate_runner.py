"""The generation loop end to end, with the real SDKs against the loopback server: what it writes,
that no answer is paid for twice, retries of invalid answers, rejects, budget and concurrency."""

from __future__ import annotations

import json

import pytest

from goldenset.errors import GoldensetError
from goldenset.generation.anthropic_provider import AnthropicProvider
from goldenset.generation.cache import AnswerCache
from goldenset.generation.openai_provider import OpenAIProvider
from goldenset.generation.passages import passages_for
from goldenset.generation.prompt import PROMPT_SHA
from goldenset.generation.runner import run_generation
from goldenset.params import GenerateParams, Price
from tests.llm_servers import Fault, LoopbackLLM, Reply, Stall, make_documents

KEY = "test-key"
DOCUMENTS = make_documents(6, sentences=12)
TEXTS = dict(DOCUMENTS)
COLUMNS = [
    "qid",
    "question",
    "doc_id",
    "evidence_start",
    "evidence_end",
    "evidence",
    "passage_start",
    "passage_end",
    "provider",
    "model",
    "prompt_sha",
]


def settings(tmp_path, **overrides) -> GenerateParams:
    values = dict(
        provider="anthropic",
        max_questions=12,
        concurrency=4,
        max_retries=3,
        cache_dir=str(tmp_path / "llm"),
    )
    values.update(overrides)
    return GenerateParams(**values)


def generate(server, params, documents=DOCUMENTS, api="anthropic"):
    if api == "anthropic":
        provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
    else:
        provider = OpenAIProvider(params, api_key=KEY, base_url=server.openai_url)
    return run_generation(documents, params, provider=provider, progress=False)


def passages(params):
    return passages_for(DOCUMENTS, params)


@pytest.fixture
def server():
    with LoopbackLLM() as running:
        yield running


def test_rows_point_at_evidence_in_the_documents(tmp_path, server):
    result = generate(server, settings(tmp_path))
    assert len(result.rows) == 12 and result.rejects == []
    doc_ids = set(TEXTS)
    for row in result.rows:
        assert list(row) == COLUMNS
        text = TEXTS[row["doc_id"]]
        assert row["evidence"] == text[row["evidence_start"] : row["evidence_end"]]
        assert row["passage_start"] <= row["evidence_start"] < row["evidence_end"]
        assert row["evidence_end"] <= row["passage_end"]
        assert row["question"].endswith("?")
        assert (row["provider"], row["model"]) == ("anthropic", "claude-haiku-4-5")
        assert row["prompt_sha"] == PROMPT_SHA
        assert row["qid"].startswith("gs-") and "#" not in row["qid"]
        assert row["qid"] not in doc_ids
    assert len({row["qid"] for row in result.rows}) == 12
    assert len({row["doc_id"] for row in result.rows}) == 6  # spread over every document
    stats = result.stats
    assert (stats.requests, stats.cache_hits, stats.questions_written) == (12, 0, 12)
    assert stats.input_tokens > 0 and stats.cost_usd > 0


def test_a_second_run_pays_for_nothing(tmp_path, server):
    first = generate(server, settings(tmp_path))
    second = generate(server, settings(tmp_path))
    assert server.requests == 12
    assert second.rows == first.rows
    assert (second.stats.requests, second.stats.cache_hits, second.stats.cost_usd) == (0, 12, 0.0)


def test_the_same_questions_at_any_concurrency(tmp_path, server):
    one = generate(server, settings(tmp_path / "a", concurrency=1))
    many = generate(server, settings(tmp_path / "b", concurrency=8))
    assert one.rows == many.rows


def test_invalid_answers_are_asked_again_with_the_reason(tmp_path, server):
    params = settings(tmp_path)
    first, second = passages(params)[:2]
    server.script_for(first.text, Reply("Sure! Here is a good question for you."))
    two_questions = {"question": "What is it? And why?", "evidence": first.text.split(". ")[0]}
    server.script_for(second.text, Reply(json.dumps(two_questions)))
    result = generate(server, params)
    assert len(result.rows) == 12 and result.rejects == []
    assert dict(result.stats.invalid_answers) == {"not_json": 1, "several_questions": 1}
    assert result.stats.requests == 14
    corrections = [hit for hit in server.hits if hit.last_turn.startswith("That answer cannot")]
    assert sorted(hit.passage for hit in corrections) == sorted([first.text, second.text])
    assert any("one question" in hit.last_turn for hit in corrections)
    # the rerun replays the same decisions from the cache
    again = generate(server, params)
    assert again.rows == result.rows and again.stats.requests == 0
    assert dict(again.stats.invalid_answers) == {"not_json": 1, "several_questions": 1}


def test_answers_that_stay_invalid_are_kept_as_rejects(tmp_path, server):
    params = settings(tmp_path, max_attempts=3)
    stubborn = passages(params)[3]
    bad = ["no json at all", '{"question": "Why?"}', '{"question": "Q? Q?", "evidence": "x"}']
    server.script_for(stubborn.text, *[Reply(text) for text in bad])
    result = generate(server, params)
    assert len(result.rows) == 11
    (reject,) = result.rejects
    assert (reject["doc_id"], reject["passage_start"]) == (stubborn.doc_id, stubborn.start)
    assert reject["reason"] == "several_questions"
    assert reject["answers"] == bad
    assert [r.split(":")[0] for r in reject["reasons"]] == [
        "not_json",
        "missing_field",
        "several_questions",
    ]
    assert dict(result.stats.rejected) == {"several_questions": 1}
    again = generate(server, params)
    assert again.rejects == result.rejects and again.stats.requests == 0


def test_faults_and_timeouts_never_cost_twice(tmp_path, server):
    server.script(Fault(429, retry_after=0.1), Fault(500), Fault(529), Stall(1.0))
    result = generate(server, settings(tmp_path, request_timeout=0.5))
    assert len(result.rows) == 12
    paid = server.answered()
    assert paid.total() == 12 and max(paid.values()) == 1
    assert server.received == 16


def test_budget_stops_before_it_is_passed_and_a_bigger_one_resumes(tmp_path, server):
    params = settings(tmp_path, max_usd=0.006)
    first = generate(server, params)
    stats = first.stats
    assert stats.stopped_by_budget
    assert 0 < stats.requests < 12 and stats.cost_usd <= 0.006
    assert len(first.rows) == stats.requests  # everything paid for is kept
    assert stats.not_asked == 12 - len(first.rows)
    rest = generate(server, settings(tmp_path, max_usd=1.0))
    assert rest.stats.requests == 12 - stats.requests and len(rest.rows) == 12
    assert max(server.answered().values()) == 1


def test_a_paid_model_without_a_price_needs_one(tmp_path, server):
    params = settings(tmp_path, model="claude-future-9")
    with pytest.raises(GoldensetError, match=r"generate\.prices\.claude-future-9"):
        generate(server, params)
    priced = settings(
        tmp_path, model="claude-future-9", prices={"claude-future-9": Price(input=100, output=0)}
    )
    result = generate(server, priced)
    assert result.stats.cost_usd == pytest.approx(result.stats.input_tokens * 100 / 1e6)
    unlimited = generate(server, settings(tmp_path / "x", model="claude-future-9", max_usd=None))
    assert len(unlimited.rows) == 12 and not unlimited.stats.price_known


def test_a_setup_error_stops_the_run_and_keeps_what_was_answered(tmp_path, server):
    params = settings(tmp_path, concurrency=2, max_retries=0)
    server.script_for(passages(params)[6].text, Fault(500))
    with pytest.raises(GoldensetError, match="HTTP 500"):
        generate(server, params)
    cached = len(AnswerCache(params.cache_dir))
    assert 6 <= cached < 12
    result = generate(server, params)
    assert result.stats.requests == 12 - cached and len(result.rows) == 12
    assert max(server.answered().values()) == 1


def test_several_questions_per_passage_ask_about_different_things(tmp_path, server):
    result = generate(server, settings(tmp_path, max_questions=6, questions_per_passage=2))
    assert len(result.rows) == 6 and result.stats.passages == 3
    by_passage = {}
    for row in result.rows:
        by_passage.setdefault((row["doc_id"], row["passage_start"]), []).append(row["question"])
    assert all(len(set(questions)) == 2 for questions in by_passage.values())
    follow_ups = [hit for hit in server.hits if "Already asked" in hit.last_turn]
    assert len(follow_ups) == 3


class OneAtATime(OpenAIProvider):
    """The openai client declaring what the in-process model does: one request at a time, free."""

    max_concurrency = 1
    paid = False


def test_concurrency_runs_requests_in_parallel_but_local_one_at_a_time(tmp_path):
    with LoopbackLLM(latency=0.1) as server:
        generate(server, settings(tmp_path / "a", concurrency=6, provider="openai"), api="openai")
        assert server.max_in_flight == 6
    with LoopbackLLM(latency=0.05) as server:
        params = settings(tmp_path / "b", concurrency=6, provider="openai", max_questions=4)
        provider = OneAtATime(params, api_key=KEY, base_url=server.openai_url)
        result = run_generation(DOCUMENTS, params, provider=provider, progress=False)
        assert len(result.rows) == 4 and server.max_in_flight == 1
        assert result.stats.cost_usd == 0 and not result.stats.price_known


def test_nothing_to_ask_builds_no_client(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    empty = run_generation(DOCUMENTS, settings(tmp_path, max_questions=0), progress=False)
    assert (empty.rows, empty.rejects, empty.stats.passages) == ([], [], 0)
    short = run_generation(DOCUMENTS, settings(tmp_path, passage_min_chars=10**6), progress=False)
    assert short.rows == []
    with pytest.raises(GoldensetError, match="ANTHROPIC_API_KEY"):
        run_generation(DOCUMENTS, settings(tmp_path), progress=False)
