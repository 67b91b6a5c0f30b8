"""The generation loop: sampled passages in, checked questions and rejects out, paying at most once.

Every answer goes into the cache the moment it arrives, and the outputs are built from the cache
at the end, so a run killed at any point resumes by asking only for what is missing. Passages run
in parallel (generate.concurrency); the questions and retries of one passage run in order, since
each depends on the answers before it.

Here: the run's setup, the estimate before it pays, and the thread pool. A passage is walked by
the session (session.py), rows and rejects are built by records.collect, and counted in
summary.GenerationStats; generate.batch fills the cache first (the provider's batch path).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from goldenset.core.echo import WindowFrequency, WindowIndex
from goldenset.corpus.queries import ExampleQuery, Refused
from goldenset.generation.aim import MIN_AIM_EXAMPLES, example_echoes
from goldenset.generation.cache import AnswerCache
from goldenset.generation.interface import Provider
from goldenset.generation.params import GenerateParams, Price
from goldenset.generation.passages import Passage, passages_for
from goldenset.generation.pricing import Budget, run_price
from goldenset.generation.providers.registry import batch_run, make_provider
from goldenset.generation.records import collect
from goldenset.generation.session import MissHandler, Outcome, Session, ask_nothing
from goldenset.generation.summary import (
    GenerationStats,
    announce,
    remember_run,
    request_slots,
    run_record,
    writer_key,
)
from goldenset.generation.validation import Specificity

log = logging.getLogger("goldenset")


@dataclass
class GenerationResult:
    rows: list[dict]
    rejects: list[dict]
    stats: GenerationStats


def run_generation(
    documents: Sequence[tuple[str, str]],
    params: GenerateParams,
    *,
    provider: Provider | None = None,
    progress: bool = True,
    example_queries: Sequence[str] = (),
    titles: Mapping[str, str] | None = None,
    aim_examples: Sequence[ExampleQuery] = (),
    ask: bool = True,
    refused: Refused | None = None,
) -> GenerationResult:
    """Questions for passages sampled from (doc_id, text) documents, per generate.* params.

    A question's echo (generate.max_echo) is measured against windows of its document's text
    (goldenset.core.echo.echo). example_queries: real queries the prompt shows as style examples.
    titles: doc_id -> title; no question is about a document's title, and the writer sees it
    (generate.show_title).
    aim_examples: real queries whose echoes each question aims at (generate.aim_echo, aim.py).
    refused: (doc_id, evidence sentence) -> the (query, why) pairs a person failed for it
    (generate.failed_queries): that sentence is asked again, each shown as refused.

    provider: None builds the one generate.provider names, and only when there is a passage to ask
    about. ask=False stops after the estimate of what the run would take: nothing is asked.
    Raises GoldensetError for a setup problem (key, model, server); answers that arrived before
    it stay cached.
    """
    started = time.perf_counter()
    stats = GenerationStats()
    setup = prepare(documents, params, titles)
    passages = setup.passages
    stats.passages = len(passages)
    stats.questions_planned = sum(p.n_questions for p in passages)
    if not passages:
        if params.max_questions > 0:
            log.warning(
                "generate: no passage of at least generate.passage_min_chars=%d characters "
                "in %d documents: nothing to ask",
                params.passage_min_chars,
                len(documents),
            )
        return GenerationResult([], [], stats)

    provider = provider or make_provider(params)
    price = run_price(provider, params)
    stats.price_known = price is not None
    session = setup.session(provider, price, example_queries, aim_examples, refused)
    stats.form = session.form.name
    stats.form_reason = session.form_reason
    announce(session, passages, price)
    if not ask:
        return GenerationResult([], [], stats)
    on_miss: MissHandler = session.ask_now
    if params.batch:
        # the provider's batch path fills the cache; the walk below asks nothing
        batch_run(provider)(session, passages, progress)
        on_miss = ask_nothing

    asking = time.perf_counter()
    outcomes = _ask_all(session, passages, on_miss, progress)
    stats.ask_s = time.perf_counter() - asking
    rows, rejects = collect(session, passages, outcomes, stats, documents)
    stats.count_spending(session.budget)
    stats.measured = session.measured
    stats.asked_again = session.asked_again
    # the next run's estimate starts from the rates this one measured
    workers = min(request_slots(session), len(passages))
    record = run_record(stats, workers, timed=not params.batch)
    remember_run(params.cache_dir, writer_key(provider), record)
    stats.wall_s = time.perf_counter() - started
    return GenerationResult(rows, rejects, stats)


@dataclass
class Setup:
    """What a run asks about, before any provider exists: the passages, and the documents and
    word rarities every question is checked against."""

    params: GenerateParams
    passages: list[Passage]
    sources: dict[str, WindowIndex]
    rarity: WindowFrequency
    titles: Mapping[str, str] | None

    def session(
        self,
        provider: Provider,
        price: Price | None = None,
        example_queries: Sequence[str] = (),
        aim_examples: Sequence[ExampleQuery] = (),
        refused: Refused | None = None,
    ) -> Session:
        params = self.params
        share = params.distinctive_share
        return Session(
            params,
            provider,
            AnswerCache(params.cache_dir),
            Budget(params.max_usd, price),
            self.sources,
            example_queries,
            None if share is None else Specificity(self.rarity, share),
            aims(aim_examples, self.sources, params),
            self.titles,
            refused,
            [example.text for example in aim_examples],
        )


def prepare(
    documents: Sequence[tuple[str, str]],
    params: GenerateParams,
    titles: Mapping[str, str] | None = None,
) -> Setup:
    """The passages to ask about, and the echo measure and word rarities over ~100-word windows
    of the documents."""
    sources = {doc_id: WindowIndex.of(text) for doc_id, text in documents}
    rarity = WindowFrequency(sources.values())
    return Setup(params, passages_for(documents, params, rarity, titles), sources, rarity, titles)


def aims(
    examples: Sequence[ExampleQuery], sources: Mapping[str, WindowIndex], params: GenerateParams
) -> np.ndarray | None:
    """The example queries' echoes that questions aim at, or None (no aim)."""
    if not params.aim_echo or not examples:
        return None
    if len(examples) < MIN_AIM_EXAMPLES:
        log.warning(
            "generate: %d example queries are too few to aim the questions' echo at (%d or more; "
            "generate.aim_echo): no aim",
            len(examples),
            MIN_AIM_EXAMPLES,
        )
        return None
    echoes = example_echoes(examples, sources)
    log.info(
        "generate: questions aim at the echo of %d example queries (median %.2f, p10 %.2f)",
        len(echoes),
        np.median(echoes),
        np.quantile(echoes, 0.1),
    )
    return echoes


def _ask_all(
    session: Session, passages: list[Passage], on_miss: MissHandler, progress: bool
) -> list[list[Outcome]]:
    workers = request_slots(session)
    outcomes: list[list[Outcome] | None] = [None] * len(passages)
    bar = tqdm(
        total=sum(p.n_questions for p in passages),
        desc="generate",
        unit="q",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    )
    with bar, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="generate") as pool:
        futures = {pool.submit(session.ask_passage, p, on_miss): i for i, p in enumerate(passages)}
        pending = set(futures)
        shown = ""
        try:
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_EXCEPTION)
                for future in done:
                    outcomes[futures[future]] = future.result()  # re-raises a worker's error
                    bar.update(passages[futures[future]].n_questions)
                spent = session.budget.snapshot()
                tokens = spent.input_tokens + spent.output_tokens
                postfix = f"{spent.requests} req, {tokens} tok, ${spent.usd:.4f}"
                if postfix != shown:  # a redraw per tick would flood logs that are not a terminal
                    bar.set_postfix_str(postfix)
                    shown = postfix
        except BaseException:
            # finish what is in flight (it gets cached), start nothing new
            session.stop.set()
            for future in pending:
                future.cancel()
            raise
    return [o or [] for o in outcomes]
