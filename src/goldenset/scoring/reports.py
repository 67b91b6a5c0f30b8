"""reports/worst_misses.md: the golden-set questions whose evidence ranked lowest, and why."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from goldenset.core.ranked import TopK
from goldenset.corpus.places import place_label
from goldenset.evaluation.qrels import Qrels
from goldenset.evaluation.ranking import first_relevant_rank, judged_gains, misses_worst_first


def first_relevant_ranks(found: TopK, judged: Qrels) -> np.ndarray:
    """1-based rank of each query's first relevant item; 0 when none is in its list."""
    return first_relevant_rank(judged_gains(found.indices, judged.qrels))


def worst_misses(
    golden: pd.DataFrame,
    judged: Qrels,
    ranked: Mapping[str, TopK],
    chunk_texts: list[str],
    n: int,
    shown: int,
    chars: int,
) -> str:
    """Markdown, one section per retriever: its ``n`` worst-ranked questions (ranked below 1).

    For each: the question, its evidence, the rank of its first relevant chunk, and the first
    ``shown`` chunks that outranked it, every text cut to ``chars`` characters.
    """
    depth = max((found.indices.shape[1] for found in ranked.values()), default=0)
    lines = [
        "# Worst misses",
        "",
        "Golden-set questions whose evidence ranked lowest, per retriever: the question, its",
        "evidence, and the chunks that outranked it. Unranked means below the top "
        f"{depth} (`score.depth`).",
    ]
    for retriever, found in ranked.items():
        lines += ["", f"## {retriever}", ""]
        ranks = first_relevant_ranks(found, judged)
        has_relevant = np.asarray(judged.qrels.sum(axis=1)).ravel() > 0
        misses = misses_worst_first(np.where(has_relevant, ranks, 1))
        if misses.size == 0:
            lines.append("Every question's evidence ranked first.")
        for row in misses[:n]:
            lines += _miss(
                golden.iloc[row],
                int(ranks[row]),
                found,
                row,
                judged,
                chunk_texts,
                shown,
                chars,
            )
    return "\n".join(lines) + "\n"


def _miss(question, rank, found, row, judged, chunk_texts, shown, chars) -> list[str]:
    place = f"rank {rank}" if rank else "unranked"
    relevant = judged.qrels[[row], :].indices
    lines = [
        f"### {place}: {_cut(question['question'], chars)}",
        "",
        f"- question id `{question['qid']}`, document `{question['doc_id']}`"
        + (f", {label}" if (label := place_label(question)) else ""),
        f"- evidence: {_cut(question['evidence'], chars)}",
        "- relevant chunks: " + ", ".join(f"`{judged.item_ids[i]}`" for i in relevant),
        "",
    ]
    above = found.indices[row][: (rank - 1) if rank else None]
    above = above[above >= 0][:shown]
    for position, item in enumerate(above, start=1):
        score = float(found.scores[row][position - 1])
        lines.append(
            f"{position}. `{judged.item_ids[item]}` (score {score:.4g}): "
            f"{_cut(chunk_texts[item], chars)}"
        )
    lines.append("")
    return lines


def _cut(text: str, chars: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"
