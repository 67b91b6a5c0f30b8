"""What a generation run counts, and the lines it logs: the estimate before it pays anything,
the summary when it is done, and the error of a run stopped by generate.max_usd.

The estimate counts the answers a question takes (invalid ones are asked again) at the rates
this writer's last run measured: each run that asks something keeps them in HISTORY_FILE beside
the answers, since the stage's own outputs (data/generate_stats.json) are deleted before it runs
again. A writer with no run yet is estimated at stated priors (pricing.BUNDLED_MODEL_RUN).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from goldenset.core.files import write_json
from goldenset.generation.interface import Provider, is_paid, max_concurrency
from goldenset.generation.params import Price
from goldenset.generation.passages import Passage
from goldenset.generation.pricing import (
    Budget,
    Estimate,
    Limits,
    WriterRecord,
    cost_usd,
    estimate_run,
    estimate_tokens,
)
from goldenset.generation.prompt import FORMS
from goldenset.generation.session import Measured, Session, request_text

log = logging.getLogger("goldenset")

HISTORY_FILE = "writer_history.json"  # beside the answers; .dvcignore keeps it out of the lock


@dataclass
class GenerationStats:
    passages: int = 0
    form: str = ""  # the form of the queries written (prompt.Form)
    form_reason: str = ""  # why that form (prompt.chosen_form)
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
    ask_s: float = 0.0  # the walk that asks the LLM: what a request's seconds are measured by
    measured: Measured | None = None  # per-request figures where the requests ran
    # (doc_id, evidence sentence) of generate.failed_queries that this run asked again
    asked_again: set[tuple[str, str]] = field(default_factory=set)

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
            "form_reason": self.form_reason,
            "questions_planned": self.questions_planned,
            "questions": self.questions_written,
            "answers": answers,
            "yield": round(self.questions_written / answers, 4) if answers else None,
            "rejects": dict(sorted(self.rejected.items())),
            "invalid_answers": dict(sorted(self.invalid_answers.items())),
            "not_asked": self.not_asked,
        }


def request_slots(session: Session) -> int:
    """Requests a run makes at once: generate.concurrency, or what the provider can serve."""
    # an in-process model runs one request at a time; more threads would only queue on it
    limit = max_concurrency(session.provider)
    return min(session.params.concurrency, limit or session.params.concurrency)


def announce(session: Session, passages: Sequence[Passage], price: Price | None) -> None:
    """Before paying anything: what is cached, and what asking the rest takes (requests, tokens,
    dollars, time), at this writer's last rates or at stated priors."""
    missing = []
    for passage in passages:
        messages, key = session.first_request(passage)
        if not session.cache.contains(key):
            missing.append((passage, estimate_tokens(request_text(session.system, messages))))
    n_questions = sum(passage.n_questions for passage, _ in missing)
    log.info(
        "generate: %d questions over %d passages, %d not in the cache yet (%s %s)",
        sum(p.n_questions for p in passages),
        len(passages),
        n_questions,
        session.provider.name,
        session.provider.model,
    )
    if not n_questions:
        return
    params = session.params
    limits = Limits(
        fewest=session.candidates,
        most=params.max_attempts,
        max_tokens=params.max_tokens,
        workers=min(request_slots(session), len(missing)),  # passages run in parallel, no more
    )
    estimate = estimate_run(
        n_questions,
        sum(tokens * passage.n_questions for passage, tokens in missing) / n_questions,
        limits,
        read_history(params.cache_dir).get(writer_key(session.provider)),
        in_process=max_concurrency(session.provider) == 1,
    )
    log.info(
        estimate_line(
            estimate,
            price,
            paid=is_paid(session.provider),
            max_usd=params.max_usd,
            batch=params.batch,
        )
    )


def estimate_line(
    estimate: Estimate,
    price: Price | None,
    *,
    paid: bool,
    max_usd: float | None,
    batch: bool = False,
) -> str:
    """The line logged before a run pays anything; a free, unpriced writer gets no tokens and
    dollars."""
    parts = [
        f"generate: {estimate.n_questions} questions to ask: "
        f"expect ~{estimate.requests:,} requests "
        f"({estimate.per_question:.1f} a question, {estimate.rate_from})"
    ]
    if price is not None or paid:
        tokens = f"~{estimate.input_tokens:,} input + ~{estimate.output_tokens:,} output tokens"
        parts += [tokens, _cost(estimate, price, max_usd)]
    if batch:
        parts.append("results within 24 h (generate.batch)")
    else:
        at_once = (
            "one at a time" if estimate.workers == 1 else f"at {estimate.workers} requests at once"
        )
        parts.append(
            f"{duration(estimate.seconds)} {at_once} "
            f"(~{estimate.seconds_per_request:.1f} s each, {estimate.time_from})"
        )
    return ", ".join(parts)


def _cost(estimate: Estimate, price: Price | None, max_usd: float | None) -> str:
    """The estimate's dollars beside generate.max_usd, and whether the run would stop there."""
    if price is None:
        return "cost unknown (no price: set generate.prices to track it)"
    cost = cost_usd(price, estimate.input_tokens, estimate.output_tokens)
    if max_usd is None:
        return f"about ${cost:.4f} (generate.max_usd: none)"
    stops = "; it stops there: raise it to finish" if cost > max_usd else ""
    return f"about ${cost:.4f} (generate.max_usd: ${max_usd:g}{stops})"


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"~{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"~{seconds / 60:.0f} min"
    return f"~{seconds / 3600:.1f} h"


def writer_key(provider: Provider) -> str:
    """Whose rates a history entry holds: the provider and its model."""
    return f"{provider.name} {provider.model}"


def run_record(stats: GenerationStats, workers: int, *, timed: bool) -> WriterRecord | None:
    """What this run measured for the next one's estimate; None when it asked nothing.

    workers: requests it made at once; timed: False for a batch, whose requests wait in the
    API's queue."""
    asked = stats.questions_planned - stats.not_asked
    if not stats.requests or asked <= 0:
        return None
    return WriterRecord(
        n_questions=asked,
        answers=stats.cache_hits + stats.requests,
        requests=stats.requests,
        input_tokens=stats.input_tokens,
        output_tokens=stats.output_tokens,
        seconds_per_request=stats.ask_s * workers / stats.requests if timed else None,
    )


def read_history(cache_dir: str | Path) -> dict[str, WriterRecord]:
    """What the last run of each writer (writer_key) measured; {} when there is none."""
    path = Path(cache_dir) / HISTORY_FILE
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        return {key: _from_json(fields) for key, fields in entries.items()}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, TypeError, AttributeError) as error:
        # only an estimate rests on it, and the next run that asks something writes it anew
        log.warning("generate: ignoring %s (%s): the estimate uses its priors", path, error)
        return {}


def remember_run(cache_dir: str | Path, key: str, record: WriterRecord | None) -> None:
    """Keep what a run measured as its writer's entry in the history, for the next estimate."""
    if record is None:
        return  # a run that asked nothing leaves the cache as it was
    history = read_history(cache_dir)
    previous = history.get(key)
    if record.seconds_per_request is None and previous is not None:
        record = replace(record, seconds_per_request=previous.seconds_per_request)
    history[key] = record
    entries = {name: _as_json(entry) for name, entry in sorted(history.items())}
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    write_json(Path(cache_dir) / HISTORY_FILE, entries, indent=1)


# a WriterRecord field's key in the history file, where the two differ
_HISTORY_KEYS = {"n_questions": "questions"}
_RECORD_FIELDS = {key: name for name, key in _HISTORY_KEYS.items()}


def _as_json(record: WriterRecord) -> dict:
    return {_HISTORY_KEYS.get(name, name): value for name, value in asdict(record).items()}


def _from_json(entry: dict) -> WriterRecord:
    return WriterRecord(**{_RECORD_FIELDS.get(key, key): value for key, value in entry.items()})


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
    if (measured := stats.measured) is not None and measured.seconds:
        lines.append(per_request_line(measured))
    if stats.near_duplicates:
        lines.append(
            f"generate: {stats.near_duplicates} near-duplicate questions dropped "
            "(generate.duplicate_cosine; see the rejects file)"
        )
    return lines


def per_request_line(measured: Measured) -> str:
    """Each request's work where it ran: comparable across machines, unlike the run's time."""
    n = measured.requests
    steered = measured.steered_tokens / max(measured.output_tokens, 1)
    return (
        f"generate: a request evaluated {measured.evaluated_tokens / n:.0f} prompt tokens and "
        f"generated {measured.output_tokens / n:.1f} in {measured.seconds / n:.2f} s; a decoding "
        f"rule chose {steered:.1%} of the generated tokens"
    )


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
