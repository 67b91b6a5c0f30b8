"""The generation loop: sampled passages in, checked questions and rejects out, paying at most once.

Every answer goes into the cache the moment it arrives, and the outputs are built from the cache
at the end, so a run killed at any point resumes by asking only for what is missing. Passages run
in parallel (generate.concurrency); the questions and retries of one passage run in order, since
each depends on the answers before it.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from tqdm import tqdm

from goldenset.echo import WindowFrequency, WindowIndex
from goldenset.errors import GoldensetError
from goldenset.generation.cache import AnswerCache, answer_key
from goldenset.generation.dedupe import near_duplicates
from goldenset.generation.interface import Completion, Provider, is_paid, max_concurrency
from goldenset.generation.passages import Passage, passages_for
from goldenset.generation.pricing import (
    BUDGET_CHARS_PER_TOKEN,
    TYPICAL_ANSWER_TOKENS,
    Budget,
    cost_usd,
    estimate_tokens,
    price_for,
)
from goldenset.generation.prompt import PROMPT_SHA, build_messages, mark_target, system_prompt
from goldenset.generation.providers import make_provider
from goldenset.generation.records import make_qid, question_row, reject_row
from goldenset.generation.validation import Answer, InvalidAnswer, Specificity, validate_question
from goldenset.params import GenerateParams, Price

log = logging.getLogger("goldenset")


@dataclass
class GenerationStats:
    passages: int = 0
    questions_planned: int = 0
    questions_written: int = 0
    rejected: Counter = field(default_factory=Counter)  # final reason of each rejected question
    invalid_answers: Counter = field(default_factory=Counter)  # every invalid answer, by reason
    not_asked: int = 0  # left for a later run: budget reached
    cache_hits: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    price_known: bool = False
    stopped_by_budget: bool = False
    budget_below_one_request: float | None = None  # USD a request may cost, above generate.max_usd
    near_duplicates: int = 0  # dropped after generation (generate.duplicate_cosine)
    wall_s: float = 0.0

    def record(self) -> dict:
        """What the golden set rests on, the same on a re-run from the cache (no spend, no time).

        answers: every LLM answer the run used, cached or new; yield = questions / answers."""
        answers = self.cache_hits + self.requests
        return {
            "questions_planned": self.questions_planned,
            "questions": self.questions_written,
            "answers": answers,
            "yield": round(self.questions_written / answers, 4) if answers else None,
            "rejects": dict(sorted(self.rejected.items())),
            "invalid_answers": dict(sorted(self.invalid_answers.items())),
            "not_asked": self.not_asked,
        }


@dataclass
class GenerationResult:
    rows: list[dict]
    rejects: list[dict]
    stats: GenerationStats


@dataclass
class _Outcome:
    """What became of one question of one passage."""

    answer: Answer | None = None
    reasons: list[tuple[str, str]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    not_asked: bool = False
    cache_hits: int = 0


def _request_text(system: str, messages: list[dict[str, str]]) -> str:
    return system + json.dumps(messages, ensure_ascii=False)


def _first_messages(passage: Passage) -> list[dict[str, str]]:
    return build_messages(mark_target(passage.text, *passage.targets[0]))


class _Session:
    """Shared state of one run: provider, cache, budget, and the flag that stops new requests."""

    def __init__(
        self,
        params: GenerateParams,
        provider: Provider,
        cache: AnswerCache,
        budget: Budget,
        sources: Mapping[str, WindowIndex],
        example_queries: Sequence[str] = (),
        specificity: Specificity | None = None,
    ) -> None:
        self.params = params
        self.system = system_prompt(example_queries)
        self.example_queries = list(example_queries)
        self.sources = sources  # doc_id -> the document a question must not echo
        self.specificity = specificity
        self.provider = provider
        self.identity = provider.identity()
        self.cache = cache
        self.budget = budget
        self.stop = threading.Event()
        self.failed: dict[str, tuple[str, str]] = {}  # batch requests the API gave up on

    def key(self, messages: list[dict[str, str]], question_index: int, attempt: int) -> str:
        return answer_key(
            self.identity,
            PROMPT_SHA,
            self.system,
            messages,
            question_index=question_index,
            attempt=attempt,
        )

    def ask_passage(self, passage: Passage) -> list[_Outcome]:
        outcomes: list[_Outcome] = []
        asked: list[str] = []
        for question_index in range(passage.questions):
            if outcomes and outcomes[-1].not_asked:
                # a later question's prompt lists the earlier ones: asking it now would pay for
                # an answer that the complete run, with a different prompt, never uses
                outcomes.append(_Outcome(not_asked=True))
                continue
            outcome = self.ask_question(passage, question_index, asked)
            if outcome.answer is not None:
                asked.append(outcome.answer.question)
            outcomes.append(outcome)
        return outcomes

    def ask_question(self, passage: Passage, question_index: int, asked: list[str]) -> _Outcome:
        outcome = _Outcome()
        corrections: list[tuple[str, str]] = []
        target = passage.targets[question_index]
        marked = mark_target(passage.text, *target)
        resamples = self.params.resamples
        for attempt in range(self.params.max_attempts):
            # the first tries ask the same prompt (sampled anew); later ones name what was wrong
            shown = corrections[resamples:] if attempt > resamples else []
            messages = build_messages(marked, asked, shown)
            key = self.key(messages, question_index, attempt)
            completion = self.cache.get(key)
            if completion is not None:
                outcome.cache_hits += 1
            elif key in self.failed:  # generate.batch: rejected with the API's reason
                outcome.reasons.append(self.failed[key])
                return outcome
            else:
                completion = self.request(key, messages, attempt)
                if completion is None:
                    outcome.not_asked = True
                    return outcome
            try:
                question = validate_question(
                    completion.text,
                    passage.text,
                    truncated=completion.truncated,
                    asked=asked,
                    source=self.sources[passage.doc_id],
                    max_echo=self.params.max_echo,
                    example_queries=self.example_queries,
                    evidence=passage.text[target[0] : target[1]],
                    specificity=self.specificity,
                )
                outcome.answer = Answer(question, *target)
                return outcome
            except InvalidAnswer as invalid:
                outcome.reasons.append((invalid.code, invalid.detail))
                outcome.answers.append(completion.text)
                corrections.append((completion.text, invalid.detail))
        return outcome

    def request(self, key: str, messages: list[dict[str, str]], attempt: int) -> Completion | None:
        """Ask the LLM and cache the answer at once; None when the run must not spend more."""
        if self.stop.is_set():
            return None
        estimate = estimate_tokens(_request_text(self.system, messages), BUDGET_CHARS_PER_TOKEN)
        reservation = self.budget.reserve(estimate, self.params.max_tokens)
        if reservation is None:
            self.stop.set()
            return None
        try:
            completion = self.provider.complete(self.system, messages, attempt=attempt)
        except BaseException:
            self.budget.release(reservation)
            raise
        self.budget.settle(reservation, completion.input_tokens, completion.output_tokens)
        self.cache.put(key, completion, provider=self.provider.name, model=self.provider.model)
        return completion


def run_generation(
    documents: Sequence[tuple[str, str]],
    params: GenerateParams,
    *,
    provider: Provider | None = None,
    progress: bool = True,
    example_queries: Sequence[str] = (),
    titles: Mapping[str, str] | None = None,
) -> GenerationResult:
    """Questions for passages sampled from (doc_id, text) documents, per generate.* params.

    A question's echo (generate.max_echo) is measured against windows of its document's text
    (goldenset.echo.echo). example_queries: real queries the prompt shows as style examples.
    titles: doc_id -> title; no question is about a document's title.

    provider: None builds the one generate.provider names, and only when there is a passage to ask
    about. Raises GoldensetError for a setup problem (key, model, server); answers that arrived
    before it stay cached.
    """
    started = time.perf_counter()
    stats = GenerationStats()
    # the echo measure and the rarity of words, both over ~100-word windows of the documents
    sources = {doc_id: WindowIndex.of(text) for doc_id, text in documents}
    rarity = WindowFrequency(sources.values())
    passages = passages_for(documents, params, rarity, titles)
    stats.passages = len(passages)
    stats.questions_planned = sum(p.questions for p in passages)
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
    price = _price(provider, params)
    if params.batch:  # the Message Batches API: half the price, see generation/batches.py
        from goldenset.generation.batches import batch_price

        price = batch_price(price)
    stats.price_known = price is not None
    specificity = (
        None if params.distinctive_share is None else Specificity(rarity, params.distinctive_share)
    )
    session = _Session(
        params,
        provider,
        AnswerCache(params.cache_dir),
        Budget(params.max_usd, price),
        sources,
        example_queries,
        specificity,
    )
    _announce(session, passages, price)
    if params.batch:
        from goldenset.generation.batches import run_batches

        run_batches(session, passages, progress)  # fills the cache; the walk below asks nothing

    outcomes = _ask_all(session, passages, progress)
    rows, rejects = _collect(session, passages, outcomes, stats, documents)
    if params.duplicate_cosine is not None:
        rows, dropped = drop_near_duplicates(rows, params.duplicate_cosine)
        rejects.extend(dropped)
        stats.near_duplicates = len(dropped)
        stats.questions_written = len(rows)
        if dropped:
            stats.rejected["near_duplicate"] += len(dropped)

    spent = session.budget.snapshot()
    stats.requests = spent.requests
    stats.input_tokens = spent.input_tokens
    stats.output_tokens = spent.output_tokens
    stats.cost_usd = spent.usd
    stats.stopped_by_budget = stats.not_asked > 0
    stats.budget_below_one_request = session.budget.refused_alone
    stats.wall_s = time.perf_counter() - started
    return GenerationResult(rows, rejects, stats)


def _price(provider: Provider, params: GenerateParams) -> Price | None:
    # a free backend (in-process model, local server) is priced only when generate.prices says so
    price = price_for(provider.model, params.prices, list_prices=is_paid(provider))
    if price is None and is_paid(provider) and params.max_usd is not None:
        raise GoldensetError(
            f"no price known for model {provider.model!r}, so generate.max_usd cannot be "
            f"enforced: add generate.prices.{provider.model} with input/output USD per million "
            "tokens, or set generate.max_usd to null"
        )
    return price


def _announce(session: _Session, passages: list[Passage], price: Price | None) -> None:
    """Before paying anything: what is cached, and about how many tokens and dollars the rest
    costs."""
    input_tokens = questions = 0
    for passage in passages:
        messages = _first_messages(passage)
        if not session.cache.contains(session.key(messages, 0, 0)):
            questions += passage.questions
            input_tokens += (
                estimate_tokens(_request_text(session.system, messages)) * passage.questions
            )
    log.info(
        "generate: %d questions over %d passages, %d not in the cache yet (%s %s)",
        sum(p.questions for p in passages),
        len(passages),
        questions,
        session.provider.name,
        session.provider.model,
    )
    if not questions or (price is None and not is_paid(session.provider)):
        return  # free and unpriced (an in-process model, a local server): nothing to estimate
    output_tokens = questions * TYPICAL_ANSWER_TOKENS
    limit = session.params.max_usd
    cost = (
        f"about ${cost_usd(price, input_tokens, output_tokens):.4f} "
        f"(generate.max_usd: {'none' if limit is None else f'${limit:g}'})"
        if price
        else "cost unknown (no price: set generate.prices to track it)"
    )
    log.info(
        "generate: estimated ~%d input + ~%d output tokens before retries, %s",
        input_tokens,
        output_tokens,
        cost,
    )


def _ask_all(session: _Session, passages: list[Passage], progress: bool) -> list[list[_Outcome]]:
    # an in-process model runs one request at a time; more threads would only queue on it
    limit = max_concurrency(session.provider)
    workers = min(session.params.concurrency, limit or session.params.concurrency)
    outcomes: list[list[_Outcome] | None] = [None] * len(passages)
    bar = tqdm(
        total=sum(p.questions for p in passages),
        desc="generate",
        unit="q",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    )
    with bar, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="generate") as pool:
        futures = {pool.submit(session.ask_passage, p): i for i, p in enumerate(passages)}
        pending = set(futures)
        shown = ""
        try:
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_EXCEPTION)
                for future in done:
                    outcomes[futures[future]] = future.result()  # re-raises a worker's error
                    bar.update(passages[futures[future]].questions)
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


def _collect(
    session: _Session,
    passages: list[Passage],
    outcomes: list[list[_Outcome]],
    stats: GenerationStats,
    documents: Sequence[tuple[str, str]],
) -> tuple[list[dict], list[dict]]:
    provider = session.provider
    labels = {"provider": provider.name, "model": provider.model, "prompt_sha": PROMPT_SHA}
    position = {doc_id: i for i, (doc_id, _) in enumerate(documents)}
    taken = set(position)
    order = sorted(
        range(len(passages)), key=lambda i: (position[passages[i].doc_id], passages[i].start)
    )
    rows: list[dict] = []
    rejects: list[dict] = []
    for i in order:
        passage = passages[i]
        for question_index, outcome in enumerate(outcomes[i]):
            stats.cache_hits += outcome.cache_hits
            stats.invalid_answers.update(code for code, _ in outcome.reasons)
            if outcome.answer is not None:
                qid = make_qid(
                    passage,
                    question_index,
                    outcome.answer.question,
                    prompt_sha=PROMPT_SHA,
                    identity=session.identity,
                    taken=taken,
                )
                taken.add(qid)
                rows.append(question_row(qid, passage, outcome.answer, **labels))
            elif outcome.not_asked:
                stats.not_asked += 1
            else:
                stats.rejected[outcome.reasons[-1][0]] += 1
                rejects.append(
                    reject_row(passage, question_index, outcome.reasons, outcome.answers, **labels)
                )
    stats.questions_written = len(rows)
    return rows, rejects


def drop_near_duplicates(rows: list[dict], threshold: float) -> tuple[list[dict], list[dict]]:
    """Rows without the questions that repeat an earlier one (content-word cosine >= threshold),
    and a reject row for each dropped one saying which question it repeats."""
    dropped = near_duplicates([row["question"] for row in rows], threshold)
    rejects = []
    for i, (j, cosine) in dropped.items():
        row, kept = rows[i], rows[j]
        detail = f"content-word cosine {cosine:.2f} with {kept['qid']}: {kept['question']!r}"
        rejects.append(
            {
                "doc_id": row["doc_id"],
                "passage_start": row["passage_start"],
                "passage_end": row["passage_end"],
                "reason": "near_duplicate",
                "reasons": [f"near_duplicate: {detail}"],
                "question": row["question"],
                "evidence": row["evidence"],
                "provider": row["provider"],
                "model": row["model"],
                "prompt_sha": row["prompt_sha"],
            }
        )
    return [row for i, row in enumerate(rows) if i not in dropped], rejects
