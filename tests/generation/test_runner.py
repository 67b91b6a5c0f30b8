"""The generation loop end to end, with the real SDKs against the loopback server: what it writes,
that no answer is paid for twice, retries of invalid answers, rejects, budget and concurrency."""

from __future__ import annotations

import ast
import logging
import re
from pathlib import Path

import numpy as np
import pytest

import goldenset.generation
from goldenset.core.echo import WindowIndex, echo
from goldenset.core.echo import overlap as echo_overlap
from goldenset.core.errors import GoldensetError
from goldenset.corpus.queries import REFUSED_BECAUSE, ExampleQuery
from goldenset.generation.aim import MIN_AIM_EXAMPLES, echo_aim, example_echoes
from goldenset.generation.cache import AnswerCache
from goldenset.generation.dedupe import repeated_questions
from goldenset.generation.params import GenerateParams, Price
from goldenset.generation.passages import passages_for
from goldenset.generation.prompt import PROMPT_SHA
from goldenset.generation.providers.anthropic import AnthropicProvider
from goldenset.generation.providers.openai import OpenAIProvider
from goldenset.generation.runner import run_generation
from goldenset.llm_stand_in import (
    Fault,
    LoopbackLLM,
    Reply,
    Stall,
    question_for,
    valid_answer,
)
from tests.conftest import for_type_checkers
from tests.support.documents import make_documents

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
    "form",
]


def settings(tmp_path, **overrides) -> GenerateParams:
    values = dict(
        provider="anthropic",
        max_questions=12,
        concurrency=4,
        max_retries=3,
        resamples=0,  # an invalid answer is corrected at once
        candidates=1,  # the first valid answer is kept
        form="question",  # set outright: these tests are of the runner; forms have their own
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
    server.script_for(first.text, Reply("Staging happens on Sundays."))
    server.script_for(second.text, Reply("What is it? And why?"))
    result = generate(server, params)
    assert len(result.rows) == 12 and result.rejects == []
    assert dict(result.stats.invalid_answers) == {"not_a_question": 1, "several_questions": 1}
    assert result.stats.requests == 14
    corrections = [hit for hit in server.hits if hit.last_turn.startswith("That question cannot")]
    assert sorted(hit.passage for hit in corrections) == sorted([first.text, second.text])
    assert any("one question" in hit.last_turn for hit in corrections)
    # the rerun replays the same decisions from the cache
    again = generate(server, params)
    assert again.rows == result.rows and again.stats.requests == 0
    assert dict(again.stats.invalid_answers) == {"not_a_question": 1, "several_questions": 1}


def test_answers_that_stay_invalid_are_kept_as_rejects(tmp_path, server):
    params = settings(tmp_path, max_attempts=3)
    stubborn = passages(params)[3]
    bad = ["no question at all", "Why?", "Why this? Why that?"]
    server.script_for(stubborn.text, *[Reply(text) for text in bad])
    result = generate(server, params)
    assert len(result.rows) == 11
    (reject,) = result.rejects
    assert (reject["doc_id"], reject["passage_start"]) == (stubborn.doc_id, stubborn.start)
    assert reject["reason"] == "several_questions"
    assert reject["answers"] == bad
    assert [r.split(":")[0] for r in reject["reasons"]] == [
        "not_a_question",
        "too_short",
        "several_questions",
    ]
    assert dict(result.stats.rejected) == {"several_questions": 1}
    again = generate(server, params)
    assert again.rejects == result.rejects and again.stats.requests == 0


REJECT_COLUMNS = [
    "doc_id",
    "passage_start",
    "passage_end",
    "question_index",
    "reason",
    "reasons",
    "answers",
    "provider",
    "model",
    "prompt_sha",
    "form",
]


def test_a_near_duplicate_is_a_reject_row_of_the_same_shape(tmp_path, server):
    # every sentence names "protein": one question about it is valid for any passage
    documents = [(doc_id, text.replace(". ", " protein. ")) for doc_id, text in DOCUMENTS]
    params = settings(tmp_path, max_attempts=1, distinctive_share=None)
    first, second, stubborn = passages_for(documents, params)[:3]
    repeat = "What should I know about protein?"
    server.script_for(first.text, Reply(repeat))
    server.script_for(second.text, Reply(repeat))
    server.script_for(stubborn.text, Reply("no question at all"))
    result = generate(server, params, documents)
    assert len(result.rows) == 10 and result.stats.near_duplicates == 1
    invalid, repeated = result.rejects  # in document order, then the near-duplicates
    assert [list(row) for row in result.rejects] == [REJECT_COLUMNS, REJECT_COLUMNS]
    assert (invalid["reason"], invalid["answers"]) == ("not_a_question", ["no question at all"])
    kept = {row["question"]: row["qid"] for row in result.rows}[repeat]
    assert repeated["reason"] == "near_duplicate" and repeated["answers"] == [repeat]
    assert repeated["reasons"] == [
        f"near_duplicate: content-word cosine 1.00 with {kept}: {repeat!r}"
    ]
    assert (repeated["doc_id"], repeated["question_index"]) == (second.doc_id, 0)
    assert dict(result.stats.rejected) == {"near_duplicate": 1, "not_a_question": 1}


def test_repeated_questions_name_the_kept_question_they_repeat():
    questions = [
        "How often are volumes copied to tape?",
        "How often are the volumes copied to tape?",
        "Who approves a restore?",
    ]
    repeated = repeated_questions(questions, ["q0", "q1", "q2"], 0.9)
    assert list(repeated) == [1]
    code, detail = repeated[1]
    assert code == "near_duplicate" and f"with q0: {questions[0]!r}" in detail


def test_resamples_ask_the_same_prompt_before_a_correction(tmp_path, server):
    params = settings(tmp_path, max_attempts=4, resamples=2)
    stubborn = passages(params)[3]
    bad = ["no question at all", "Why?", "Staging happens on Sundays.", "no question either"]
    server.script_for(stubborn.text, *[Reply(text) for text in bad])
    result = generate(server, params)
    hits = [hit for hit in server.hits if hit.passage == stubborn.text]
    assert len(hits) == 4
    # two resamples repeat the first prompt; the last try names what was wrong with the third
    assert len({hit.prompt for hit in hits[:3]}) == 1 and hits[3].prompt != hits[0].prompt
    assert all(hit.last_turn.startswith("<passage>") for hit in hits[:3])
    assert hits[3].last_turn.startswith("That question cannot")
    (reject,) = result.rejects
    assert reject["answers"] == bad and len(reject["reasons"]) == 4
    again = generate(server, params)  # each try has its own cache entry
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


def test_an_echoing_question_is_asked_again_once_then_rejected(tmp_path, server):
    # the loopback's questions share 1 of their 2 content words with the document
    params = settings(tmp_path, max_echo=0.7, max_attempts=2)  # re-asked once
    first, second = passages(params)[:2]

    def echo_of(text: str) -> str:  # four of the document's own words
        return "Is " + " ".join([w for w in text.rstrip(".").split() if len(w) > 3][:4]) + "?"

    echo = echo_of(first.text[slice(*first.targets[0])])
    assert echo_overlap(echo, first.text) == 1.0
    server.script_for(first.text, Reply(echo))
    echo_two = echo_of(second.text[slice(*second.targets[0])])
    server.script_for(second.text, Reply(echo_two), Reply(echo_two))
    result = generate(server, params)
    assert len(result.rows) == 11
    assert dict(result.stats.invalid_answers) == {"echoes_document": 3}
    (reject,) = result.rejects
    assert reject["reason"] == "echoes_document" and reject["doc_id"] == second.doc_id
    corrections = [hit for hit in server.hits if "document's own words" in hit.last_turn]
    assert sorted(hit.passage for hit in corrections) == sorted([first.text, second.text])
    for row in result.rows:
        assert echo_overlap(row["question"], TEXTS[row["doc_id"]]) <= 0.7


def test_evidence_is_the_sentence_the_program_marked(tmp_path, server):
    params = settings(tmp_path)
    result = generate(server, params)
    marked = {
        (p.doc_id, p.start + p.targets[0][0], p.start + p.targets[0][1]) for p in passages(params)
    }
    rows = {(r["doc_id"], r["evidence_start"], r["evidence_end"]) for r in result.rows}
    assert rows == marked
    assert all("<target>" in hit.last_turn for hit in server.hits)


def test_a_german_passage_gets_a_german_question(tmp_path):
    text = (
        "Die Sicherungen laufen jede Nacht um zwei Uhr und werden fünfunddreißig Tage lang "
        "aufbewahrt. Eine Wiederherstellung beantragt man mit einem Ticket beim Speicherteam, "
        "das meist innerhalb von vier Stunden antwortet."
    )
    seen = []

    def answer(passage, request_text):
        seen.append(request_text)
        return "Wie lange bleiben nächtliche Sicherungen erhalten?"

    with LoopbackLLM(answer=answer) as server:
        params = settings(tmp_path, max_questions=1, passage_min_chars=50, max_echo=0.5)
        result = generate(server, params, documents=[("de-1", text)])
    (row,) = result.rows
    assert row["question"] == "Wie lange bleiben nächtliche Sicherungen erhalten?"
    assert row["evidence"] in text
    # the model is told to keep the passage's language, and sees the German passage as is
    assert "same language as the passage" in seen[0]
    assert "Speicherteam" in seen[0]


def test_example_queries_reach_the_prompt_and_the_cache_key(tmp_path):
    examples = ["statins and stroke risk in the elderly", "does coffee harm the liver"]
    asked = []

    def answer(passage, request_text):
        asked.append(request_text)
        return valid_answer(passage, request_text)

    with LoopbackLLM(answer=answer) as server:
        plain = generate(server, settings(tmp_path, max_questions=2))
        plain_requests = list(asked)
        styled = run_generation(
            DOCUMENTS,
            settings(tmp_path, max_questions=2),
            provider=AnthropicProvider(settings(tmp_path), api_key=KEY, base_url=server.url),
            progress=False,
            example_queries=examples,
        )
    assert plain.stats.requests == 2 and styled.stats.requests == 2  # not served from the cache
    assert styled.stats.questions_written == 2
    styled_requests = asked[len(plain_requests) :]
    assert len(styled_requests) == 2
    # what the model was sent: the examples in every styled request, in no plain one
    assert all(example in text for text in styled_requests for example in examples)
    assert not any(example in text for text in plain_requests for example in examples)


def test_concurrency_runs_requests_in_parallel(tmp_path):
    # the in-process local model's one at a time: tests/generation/test_local_model.py, on the
    # real model
    with LoopbackLLM(latency=0.1) as server:
        generate(server, settings(tmp_path, concurrency=6, provider="openai"), api="openai")
        assert server.max_in_flight == 6


def test_nothing_to_ask_sends_no_request_and_needs_no_key(tmp_path, monkeypatch):
    # the provider is built either way (building is cheap); its client, which needs the key,
    # only on the first request: without a key, a run that asks something fails on it
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)

    def keyless(params):
        return AnthropicProvider(params, base_url=server.url)

    with LoopbackLLM() as server:
        params = settings(tmp_path, max_questions=0)
        empty = run_generation(DOCUMENTS, params, provider=keyless(params), progress=False)
        assert (empty.rows, empty.rejects, empty.stats.passages) == ([], [], 0)
        params = settings(tmp_path, passage_min_chars=10**6)
        short = run_generation(DOCUMENTS, params, provider=keyless(params), progress=False)
        assert short.rows == [] and short.stats.requests == 0
        params = settings(tmp_path)
        with pytest.raises(GoldensetError, match="ANTHROPIC_API_KEY"):
            run_generation(DOCUMENTS, params, provider=keyless(params), progress=False)
        assert server.received == 0


def generation_imports() -> dict[str, set[str]]:
    """Module -> the generation modules it imports, at the top or inside a function (not for type
    checkers only: those never run)."""
    folder = Path(goldenset.generation.__file__).parent
    graph = {}
    for path in folder.rglob("*.py"):
        imported = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = for_type_checkers(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        prefix = "goldenset.generation."
        module = path.relative_to(folder).with_suffix("").as_posix().replace("/", ".")
        graph[module.removesuffix(".__init__")] = {
            name.removeprefix(prefix) for name in imported if prefix in name
        }
    return graph


def test_generation_modules_import_each_other_without_a_circle():
    graph = generation_imports()
    assert graph["runner"] >= {"session", "providers.registry", "summary"}  # the graph is read
    assert graph["providers.anthropic.batches"] >= {"session", "providers.anthropic"}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for name in graph.get(start, ()):
            if name == goal or (name not in seen and reaches(name, goal, seen | {name})):
                return True
        return False

    assert [name for name in sorted(graph) if reaches(name, name, set())] == []


def aim_at(share: float) -> list[ExampleQuery]:
    """Ten example queries whose echo is `share`: each names words of the first document."""
    words = sorted({w.lower() for w in DOCUMENTS[0][1].rstrip(".").split() if len(w) > 3})[:10]
    known = round(share * 10)
    text = " ".join(words[:known] + [f"zzq{i}" for i in range(10 - known)])
    return [ExampleQuery(text, DOCUMENTS[0][0])] * MIN_AIM_EXAMPLES


def aimed(server, params, examples):
    params = params.model_copy(update={"aim_echo": True})
    provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
    return run_generation(
        DOCUMENTS, params, provider=provider, progress=False, aim_examples=examples
    )


def test_one_candidate_keeps_the_first_valid_answer_whatever_its_aim(tmp_path, server):
    result = aimed(server, settings(tmp_path, max_attempts=3), aim_at(0.0))
    assert len(result.rows) == 12 and result.stats.requests == 12
    assert not result.stats.invalid_answers


def test_candidates_sample_one_prompt_and_the_one_nearest_the_aim_is_kept(tmp_path, server):
    params = settings(tmp_path, max_attempts=4, candidates=3)
    first = passages(params)[0]
    broad = question_for(first.text[slice(*first.targets[0])])  # echo 0.5
    narrow = broad.replace("?", " after zorblat surgery?")  # two unknown words more: 0.25
    assert echo(narrow, first.text) < echo(broad, first.text) == 0.5
    server.script_for(first.text, Reply(broad), Reply(narrow), Reply(broad))

    def kept(result):
        rows = {(row["doc_id"], row["passage_start"]): row["question"] for row in result.rows}
        return rows[first.doc_id, first.start]

    at_zero = aimed(server, params, aim_at(0.0))
    assert len(at_zero.rows) == 12 and at_zero.stats.requests == 36
    assert kept(at_zero) == narrow  # nearest an aim of 0
    hits = [hit for hit in server.hits if hit.passage == first.text]
    assert len({hit.prompt for hit in hits}) == 1  # candidates are samples of one prompt
    # an aim of 0.5 keeps the first answer at 0.5, from the cache: nothing is asked again
    at_half = aimed(server, params.model_copy(update={"cache_dir": params.cache_dir}), aim_at(0.5))
    assert at_half.stats.requests == 0 and kept(at_half) == broad
    # without an aim there is nothing to choose by: one answer, the first
    plain = generate(server, params.model_copy(update={"aim_echo": False}))
    assert plain.stats.requests == 0 and kept(plain) == broad
    assert plain.stats.cache_hits == 12


def test_candidates_go_on_past_invalid_answers_until_one_is_valid(tmp_path, server):
    params = settings(tmp_path, max_attempts=4, candidates=2)
    first = passages(params)[0]
    good = question_for(first.text[slice(*first.targets[0])])
    server.script_for(first.text, Reply("no question"), Reply("nor this"), Reply(good))
    result = aimed(server, params, aim_at(0.5))
    hits = [hit for hit in server.hits if hit.passage == first.text]
    assert len(hits) == 3 and len(result.rows) == 12
    assert hits[2].last_turn.startswith("That question cannot")  # past the candidates: corrected
    assert dict(result.stats.invalid_answers) == {"not_a_question": 2}


def test_too_few_examples_aim_nothing(tmp_path, server, caplog):
    result = aimed(server, settings(tmp_path, max_attempts=3), aim_at(0.0)[:3])
    assert result.stats.requests == 12
    assert "too few to aim" in caplog.text


def test_aims_spread_like_the_examples_echoes():
    echoes = np.sort(np.random.default_rng(0).beta(2, 3, size=40))
    aims = [echo_aim(echoes, 0, f"doc-{i}", i * 7, 0) for i in range(4000)]
    assert aims == [echo_aim(echoes, 0, f"doc-{i}", i * 7, 0) for i in range(4000)]
    for point in (0.05, 0.1, 0.5, 0.9):
        assert abs(np.quantile(aims, point) - np.quantile(echoes, point)) < 0.03


def test_an_examples_echo_is_measured_in_its_own_document():
    (doc_a, text_a), (doc_b, text_b) = DOCUMENTS[:2]
    words = [w for w in text_a.rstrip(".").split() if len(w) > 3 and w not in text_b][:4]
    sources = {doc_a: WindowIndex.of(text_a), doc_b: WindowIndex.of(text_b)}
    query = " ".join(words)
    assert list(example_echoes([ExampleQuery(query, doc_b)], sources)) == [0.0]
    assert list(example_echoes([ExampleQuery(query)], sources)) == [1.0]  # the corpus's best


def test_without_aim_echo_examples_aim_nothing(tmp_path, server):
    params = settings(tmp_path, max_attempts=3, aim_echo=False)
    provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
    result = run_generation(
        DOCUMENTS, params, provider=provider, progress=False, aim_examples=aim_at(0.0)
    )
    assert result.stats.requests == 12 and not result.stats.invalid_answers


def test_a_query_a_person_failed_is_asked_again_shown_as_refused(tmp_path, server, caplog):
    params = settings(tmp_path)
    first = generate(server, params)
    failed = first.rows[2]
    refused = {(failed["doc_id"], failed["evidence"]): [(failed["question"], REFUSED_BECAUSE["b"])]}
    # the stand-in asks about the longest word (question_for): another asks about the next
    words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", failed["evidence"])}
    other = f"What should I know about {sorted(words, key=lambda w: (-len(w), w))[1]}?"
    # the writer repeats the refused query first (a repeat is invalid), then writes another
    server.script_for(failed["evidence"], Reply(failed["question"]), Reply(other))
    provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
    with caplog.at_level(logging.INFO, logger="goldenset"):  # the estimate counts it as new
        run_generation(
            DOCUMENTS, params, provider=provider, progress=False, refused=refused, ask=False
        )
    assert "12 questions over 12 passages, 1 not in the cache yet" in caplog.text
    before = len(server.hits)
    again = run_generation(DOCUMENTS, params, provider=provider, progress=False, refused=refused)
    asked = server.hits[before:]
    assert len(asked) == 2  # only the refused sentence is asked again: the rest is cached
    assert all(REFUSED_BECAUSE["b"] in hit.last_turn for hit in asked[:1])
    assert asked[1].last_turn.startswith("That question cannot be used")
    replaced = next(row for row in again.rows if row["evidence"] == failed["evidence"])
    assert replaced["question"] == other
    assert [row for row in again.rows if row is not replaced] == [
        row for row in first.rows if row["qid"] != failed["qid"]
    ]
    rerun = run_generation(DOCUMENTS, params, provider=provider, progress=False, refused=refused)
    assert rerun.stats.requests == 0 and rerun.rows == again.rows  # every paid answer kept
    plain = generate(server, params)  # without the refusals: the first run's answers, cached
    assert plain.rows == first.rows and plain.stats.requests == 0


def test_auto_writes_the_form_most_of_all_the_example_queries_take(tmp_path, server):
    # the prompt shows two questions, but most of the project's example queries are claims
    shown = ["How are backups restored?", "Who rotates the keys?"]
    every = [
        ExampleQuery(text) for text in [*shown, *(f"Claim number {n} holds." for n in range(3))]
    ]
    params = settings(tmp_path, form="auto", max_questions=2)
    provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
    result = run_generation(
        DOCUMENTS,
        params,
        provider=provider,
        progress=False,
        example_queries=shown,
        aim_examples=every,
    )
    assert (result.stats.form, result.stats.form_reason) == (
        "claim",
        "auto: 3 of the 5 example queries are claims",
    )
    assert result.stats.record()["form_reason"] == result.stats.form_reason
