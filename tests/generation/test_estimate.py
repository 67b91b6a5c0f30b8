"""The estimate logged before a run pays anything: requests counted with the answers that are
asked again, at the writer's last rates (kept beside the answers) or at stated priors; tokens,
dollars and time from them. Pure parts in memory, then real runs through the anthropic SDK
against the loopback server."""

from __future__ import annotations

import re
import zlib

import pytest

from goldenset.generation.params import GenerateParams, Price
from goldenset.generation.pricing import (
    API_FIRST_TOKEN_S,
    API_OUTPUT_TOKENS_PER_S,
    BUNDLED_MODEL_RUN,
    Estimate,
    Limits,
    WriterRecord,
    estimate_run,
    expected_requests,
)
from goldenset.generation.providers.anthropic import AnthropicProvider
from goldenset.generation.providers.openai import OpenAIProvider
from goldenset.generation.runner import run_generation
from goldenset.generation.summary import (
    HISTORY_FILE,
    GenerationStats,
    estimate_line,
    read_history,
    remember_run,
    run_record,
)
from goldenset.llm_stand_in import LoopbackLLM, valid_answer
from tests.support.documents import make_documents

KEY = "test-key"
LIMITS = Limits(fewest=1, most=4, max_tokens=48, workers=4)
# a writer that asked 10 questions with 25 answers, 1,000 input and 100 output tokens a request
LAST = WriterRecord(10, 25, 25, 25_000, 2_500, seconds_per_request=3.0)


def test_requests_count_the_answers_asked_again():
    assert expected_requests(40, 2.5, LIMITS) == 100
    assert expected_requests(3, 4 / 3, LIMITS) == 4  # float noise adds no request
    assert expected_requests(0, 2.5, LIMITS) == 0


def test_requests_stay_within_what_the_params_allow():
    # a question is rejected after generate.max_attempts answers, never asked more
    assert expected_requests(10, 9.0, LIMITS) == 40
    # and takes at least its candidates, whatever a past run with fewer measured
    assert expected_requests(10, 1.2, Limits(fewest=3, most=4, max_tokens=48, workers=1)) == 30
    assert expected_requests(10, 1.2, Limits(fewest=6, most=4, max_tokens=48, workers=1)) == 40


def test_the_last_run_of_the_writer_sets_every_rate():
    estimate = estimate_run(40, 700.0, LIMITS, LAST, in_process=False)
    assert (estimate.requests, estimate.per_question) == (100, 2.5)
    assert (estimate.input_tokens, estimate.output_tokens) == (100_000, 10_000)
    assert estimate.seconds == pytest.approx(100 * 3.0 / 4)
    assert estimate.rate_from == "as the last run of this writer"
    assert estimate.time_from == "as the last run"


def test_an_api_writer_without_a_run_gets_the_bundled_models_rate_and_assumed_time():
    estimate = estimate_run(180, 700.0, LIMITS, None, in_process=False)
    assert estimate.requests == BUNDLED_MODEL_RUN.answers == 347  # 180 questions asked
    assert estimate.input_tokens == 347 * 700
    assert estimate.output_tokens == 347 * 48  # generate.max_tokens: the longest answer
    assert estimate.seconds_per_request == API_FIRST_TOKEN_S + 48 / API_OUTPUT_TOKENS_PER_S
    assert "no run yet" in estimate.rate_from and estimate.time_from == "assumed"


def test_the_local_model_without_a_run_gets_what_it_measured():
    one_at_a_time = Limits(fewest=1, most=4, max_tokens=48, workers=1)
    estimate = estimate_run(180, 700.0, one_at_a_time, None, in_process=True)
    assert estimate.requests == 347
    assert estimate.seconds == pytest.approx(884.5)  # the measured run, one request at a time
    assert estimate.output_tokens == pytest.approx(6_305, abs=1)
    assert estimate.time_from == "as the bundled model on 2 cores"


def test_a_batch_run_keeps_the_rates_but_times_nothing():
    batch = WriterRecord(10, 20, 20, 20_000, 2_000, seconds_per_request=None)
    estimate = estimate_run(10, 700.0, LIMITS, batch, in_process=False)
    assert estimate.requests == 20 and estimate.rate_from == "as the last run of this writer"
    assert estimate.time_from == "assumed"


def estimate(**changes) -> Estimate:
    values = dict(
        n_questions=40,
        requests=96,
        per_question=2.4,
        input_tokens=61_000,
        output_tokens=4_800,
        seconds_per_request=7.5,
        workers=4,
        rate_from="as the last run of this writer",
        time_from="assumed",
    )
    return Estimate(**{**values, **changes})


def test_the_line_names_requests_tokens_dollars_and_minutes():
    line = estimate_line(estimate(), Price(input=1, output=5), paid=True, max_usd=None)
    assert line == (
        "generate: 40 questions to ask: expect ~96 requests (2.4 a question, as the last run "
        "of this writer), ~61,000 input + ~4,800 output tokens, about $0.0850 "
        "(generate.max_usd: none), ~3 min at 4 requests at once (~7.5 s each, assumed)"
    )


def test_an_estimate_above_the_cap_says_the_run_stops_there():
    price = Price(input=1, output=5)
    assert "(generate.max_usd: $0.05; it stops there: raise it to finish)" in estimate_line(
        estimate(), price, paid=True, max_usd=0.05
    )
    assert "(generate.max_usd: $0.09)" in estimate_line(estimate(), price, paid=True, max_usd=0.09)


def test_a_free_writer_gets_requests_and_time_without_dollars():
    line = estimate_line(estimate(workers=1), None, paid=False, max_usd=5.0)
    assert "expect ~96 requests" in line and "one at a time" in line
    assert "$" not in line and "tokens" not in line


def test_a_batch_is_not_timed_and_an_unpriced_api_says_so():
    line = estimate_line(estimate(), None, paid=True, max_usd=None, batch=True)
    assert "cost unknown (no price: set generate.prices" in line
    assert "within 24 h (generate.batch)" in line and "min" not in line


def test_a_run_keeps_its_rates_and_one_that_asks_nothing_keeps_none(tmp_path):
    stats = GenerationStats(questions_planned=12, not_asked=2, cache_hits=5, requests=20)
    stats.input_tokens, stats.output_tokens, stats.ask_s = 8_000, 400, 10.0
    record = run_record(stats, workers=4, timed=True)
    assert record == WriterRecord(10, 25, 20, 8_000, 400, seconds_per_request=2.0)
    remember_run(tmp_path, "anthropic m", record)
    assert read_history(tmp_path) == {"anthropic m": record}

    untimed = run_record(stats, workers=4, timed=False)
    remember_run(tmp_path, "anthropic m", untimed)  # a batch: the last measured time stays
    assert read_history(tmp_path)["anthropic m"].seconds_per_request == 2.0

    assert run_record(GenerationStats(questions_planned=12, cache_hits=12), 4, timed=True) is None
    remember_run(tmp_path / "untouched", "anthropic m", None)
    assert not (tmp_path / "untouched").exists()


def test_an_unreadable_history_falls_back_to_the_priors(tmp_path, caplog):
    (tmp_path / HISTORY_FILE).write_text("{not json")
    with caplog.at_level("WARNING", logger="goldenset"):
        assert read_history(tmp_path) == {}
    assert "the estimate uses its priors" in caplog.text


# -- real runs: the loopback server as a writer that gets half the passages right the second time

CORRECTED = "Tell me everything."


def uneven_writer(passage: str, request_text: str) -> str:
    """Invalid on the first try for about half the passages (by a hash), valid once corrected."""
    if CORRECTED not in request_text and zlib.crc32(passage.encode()) % 2:
        return CORRECTED  # not a question: asked again with the reason
    return valid_answer(passage, request_text)


def settings(cache, **overrides) -> GenerateParams:
    values = dict(provider="anthropic", concurrency=4, resamples=0, cache_dir=str(cache))
    return GenerateParams(**{**values, **overrides})


def generate_logged(server, params, documents, caplog) -> tuple[int, int, str]:
    """(the estimated requests, the requests made, the estimate's line)"""
    provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
    before = server.requests
    caplog.clear()
    with caplog.at_level("INFO", logger="goldenset"):
        run_generation(documents, params, provider=provider, progress=False)
    (line,) = [r.getMessage() for r in caplog.records if "questions to ask" in r.getMessage()]
    estimated = int(re.search(r"expect ~([\d,]+) requests", line)[1].replace(",", ""))
    return estimated, server.requests - before, line


# 20%: the second run's passages are other documents', so the share the writer gets wrong on
# the first try varies from the first run's by chance (these documents: 4% apart)
TOLERANCE = 0.2


def test_the_estimate_from_the_last_run_is_near_the_requests_made(tmp_path, caplog):
    cache = tmp_path / "llm"
    with LoopbackLLM(answer=uneven_writer) as server:
        first = settings(cache, max_questions=24)
        guessed, made, line = generate_logged(server, first, make_documents(8, 12), caplog)
        assert "no run yet" in line and made < guessed  # the prior errs high, as it says
        assert read_history(cache)["anthropic claude-haiku-4-5"].answers == made

        second = settings(cache, max_questions=36)
        documents = make_documents(9, 12, seed=1)
        estimated, made, line = generate_logged(server, second, documents, caplog)
        assert abs(estimated - made) <= TOLERANCE * made, (estimated, made)
        assert "as the last run of this writer" in line and "s each, as the last run" in line

        again = cache / HISTORY_FILE
        kept = again.read_bytes()
        provider = AnthropicProvider(second, api_key=KEY, base_url=server.url)
        run_generation(documents, second, provider=provider, progress=False)
        assert again.read_bytes() == kept  # all from the cache: nothing measured, nothing kept


def test_a_free_server_is_estimated_without_dollars(tmp_path, caplog):
    with LoopbackLLM(api_key=None, answer=uneven_writer) as server:
        params = settings(tmp_path / "llm", provider="openai", max_questions=6)
        provider = OpenAIProvider(params, api_key=KEY, base_url=server.openai_url)
        with caplog.at_level("INFO", logger="goldenset"):
            run_generation(make_documents(3, 8), params, provider=provider, progress=False)
    (line,) = [r.getMessage() for r in caplog.records if "questions to ask" in r.getMessage()]
    assert "expect ~12 requests" in line and "at 4 requests at once" in line
    assert "$" not in line and "tokens" not in line
