"""A run as a TREC run file (``qid Q0 docid rank score tag``): written for other IR tools, and
read back as the run of a team's retriever (retrievers.external.run_file)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from goldenset.core.errors import GoldensetError
from goldenset.core.ranked import TopK


def trec_run(qids: list[str], item_ids: list[str], found: TopK, tag: str) -> str:
    """A TREC run of ranked lists, padding left out.

    Every tool re-sorts a run by score, and trec_eval keeps scores in single precision (ties
    then go by descending docid), so tied float32 scores are separated by the smallest float32
    step below the previous one: each tool then reads our order.
    """
    lines = []
    for row, qid in enumerate(qids):
        kept = found.indices[row] >= 0
        items = found.indices[row][kept]
        scores = strictly_decreasing(found.scores[row][kept])
        for rank, (item, score) in enumerate(zip(items, scores, strict=True), start=1):
            lines.append(f"{qid} Q0 {item_ids[item]} {rank} {score} {tag}")
    return "".join(line + "\n" for line in lines)


def strictly_decreasing(scores: np.ndarray) -> np.ndarray:
    """float32 scores in rank order, each tie (or inversion) one step below its predecessor."""
    scores = np.asarray(scores, dtype=np.float32).copy()
    for position in range(1, scores.size):
        if not scores[position] < scores[position - 1]:
            scores[position] = np.nextafter(scores[position - 1], np.float32(-np.inf))
    return scores


def read_trec_run(path: Path) -> dict[str, dict[str, float]]:
    """{qid: {docid: score}} from a TREC run file; a malformed line is a clear error."""
    if not path.exists():
        raise GoldensetError(f"retrievers.external.run_file: {path} not found")
    run: dict[str, dict[str, float]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        try:
            qid, _, docid, _, score, _ = fields
            run.setdefault(qid, {})[docid] = float(score)
        except ValueError:
            raise GoldensetError(
                f"{path}:{number}: expected 'qid Q0 docid rank score tag' (TREC run format)"
            ) from None
    return run
