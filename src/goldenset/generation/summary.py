"""The lines the generate stage prints when it is done."""

from __future__ import annotations

from collections import Counter

from goldenset.generation.runner import GenerationStats


def _reasons(counts: Counter) -> str:
    return ", ".join(
        f"{code}: {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def summary_lines(stats: GenerationStats) -> list[str]:
    rejected = sum(stats.rejected.values())
    invalid = sum(stats.invalid_answers.values())
    cost = f"${stats.cost_usd:.4f}" if stats.price_known else "cost not tracked"
    lines = [
        f"generate: {stats.passages} passages sampled, {stats.questions_written} questions "
        f"written, {rejected} rejected" + (f" ({_reasons(stats.rejected)})" if rejected else ""),
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
