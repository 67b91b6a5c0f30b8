"""The lines the generate stage prints when it is done."""

from __future__ import annotations

from collections import Counter

from goldenset.generation.runner import GenerationStats


def _reasons(counts: Counter) -> str:
    return ", ".join(
        f"{code}: {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def summary_lines(stats: GenerationStats, max_usd: float | None) -> list[str]:
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
    if stats.not_asked:
        lines.append(
            f"generate: stopped before passing generate.max_usd={max_usd} "
            f"(${stats.cost_usd:.4f} spent); {stats.not_asked} questions not asked yet: raise "
            "generate.max_usd and run again (answers so far are cached)"
        )
    return lines
