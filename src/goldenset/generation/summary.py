"""What a generation run counts, and the lines it logs: the estimate before it pays anything,
the summary when it is done, and the error of a run stopped by generate.max_usd."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from goldenset.generation.interface import is_paid
from goldenset.generation.params import Price
from goldenset.generation.passages import Passage
from goldenset.generation.pricing import (
    TYPICAL_ANSWER_TOKENS,
    Budget,
    cost_usd,
    estimate_tokens,
)
from goldenset.generation.prompt import FORMS
from goldenset.generation.session import Session, request_text

log = logging.getLogger("goldenset")


@dataclass
class GenerationStats:
    passages: int = 0
    form: str = ""  # the form of the queries written (prompt.Form)
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

    def count_spending(self, budget: Budget) -> None:
        """What the run paid for, and whether generate.max_usd stopped it."""
        spent = budget.snapshot()
        self.requests = spent.requests
        self.input_tokens = spent.input_tokens
        self.output_tokens = spent.output_tokens
        self.cost_usd = spent.usd
        self.stopped_by_budget = self.not_asked > 0
        self.budget_below_one_request = budget.refused_alone

    def record(self) -> dict:
        """What the golden set rests on, the same on a re-run from the cache (no spend, no time).

        answers: every LLM answer the run used, cached or new; yield = questions / answers."""
        answers = self.cache_hits + self.requests
        return {
            "form": self.form,
            "questions_planned": self.questions_planned,
            "questions": self.questions_written,
            "answers": answers,
            "yield": round(self.questions_written / answers, 4) if answers else None,
            "rejects": dict(sorted(self.rejected.items())),
            "invalid_answers": dict(sorted(self.invalid_answers.items())),
            "not_asked": self.not_asked,
        }


def announce(session: Session, passages: Sequence[Passage], price: Price | None) -> None:
    """Before paying anything: what is cached, and about how many tokens and dollars the rest
    costs."""
    input_tokens = questions = 0
    for passage in passages:
        messages, key = session.first_request(passage)
        if not session.cache.contains(key):
            questions += passage.questions
            input_tokens += (
                estimate_tokens(request_text(session.system, messages))
                * passage.questions
                * session.params.candidates
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
    output_tokens = questions * session.params.candidates * TYPICAL_ANSWER_TOKENS
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


def _reasons(counts: Counter) -> str:
    return ", ".join(
        f"{code}: {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def summary_lines(stats: GenerationStats) -> list[str]:
    rejected = sum(stats.rejected.values())
    invalid = sum(stats.invalid_answers.values())
    cost = f"${stats.cost_usd:.4f}" if stats.price_known else "cost not tracked"
    lines = [
        f"generate: {stats.passages} passages sampled, {stats.questions_written} "
        f"{FORMS[stats.form or 'question'].noun}s written, {rejected} rejected"
        + (f" ({_reasons(stats.rejected)})" if rejected else ""),
        f"generate: {stats.cache_hits} answers from cache, {stats.requests} LLM requests, "
        f"{stats.input_tokens} input + {stats.output_tokens} output tokens, {cost}, "
        f"{stats.wall_s:.1f} s",
    ]
    if invalid:
        lines.append(
            f"generate: {invalid} invalid answers, asked again: {_reasons(stats.invalid_answers)}"
        )
    if stats.near_duplicates:
        lines.append(
            f"generate: {stats.near_duplicates} near-duplicate questions dropped "
            "(generate.duplicate_cosine; see the rejects file)"
        )
    return lines


def budget_stop(stats: GenerationStats, max_usd: float | None) -> str | None:
    """The error for a run that stopped at generate.max_usd: it is not a complete golden set."""
    if not stats.not_asked:
        return None
    if stats.budget_below_one_request is not None and not stats.requests:
        return (
            f"generate.max_usd=${max_usd:g} is below the worst-case cost of a single request "
            f"(${stats.budget_below_one_request:.4f}: its prompt plus generate.max_tokens of "
            f"output), so {stats.not_asked} questions were not asked: raise generate.max_usd "
            "above that and run again"
        )
    return (
        f"stopped before passing generate.max_usd=${max_usd:g} (${stats.cost_usd:.4f} spent): "
        f"{stats.not_asked} of {stats.questions_planned} questions still to ask, so no golden "
        "set was written; raise generate.max_usd and run again (answers so far are cached and "
        "are not paid for again)"
    )
