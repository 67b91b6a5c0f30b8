"""hybrid: reciprocal rank fusion (Cormack et al., 2009) of the runs of other retrievers (its
`fuse` param): a function from their runs, keyed by id, to a run, ranked after them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from goldenset.retrieval.retrievers.base import RETRIEVERS, FusionSection, RetrieverEntry
from goldenset.retrieval.run import Run

if TYPE_CHECKING:
    import numpy as np
    import torch

    from goldenset.core.ranked import TopK
    from goldenset.retrieval.run import Corpus


class HybridParams(FusionSection):
    fuse: list[str] = Field(default_factory=lambda: ["dense", "bm25"], min_length=2)
    rrf_k: int = Field(60, gt=0, description="reciprocal rank fusion: 1 / (rrf_k + rank)")


class Hybrid:
    """Reciprocal rank fusion of the runs of ``fuses`` (a goldenset.retrieval.retrievers.Fusion)."""

    def __init__(self, fuses: Sequence[str], rrf_k: int) -> None:
        self.fuses, self.rrf_k = list(fuses), rrf_k

    def fuse(self, runs: Sequence[Run], depth: int) -> Run:
        """Every id the runs return, fused: each ranks ``depth`` documents, so their fusion
        does too."""
        return reciprocal_rank_fusion(runs, self.rrf_k)


def reciprocal_rank_fusion(runs: Sequence[Run], rrf_k: int) -> Run:
    """Every id of the runs scored by the sum of 1 / (rrf_k + rank) over the runs that list it;
    ties by the id first listed (the runs' common id list, or the ids in the order the runs
    first list them). An id a run lists twice counts once, at its first place, as the evaluator
    reads it."""
    import numpy as np

    from goldenset.core.ranked import entries_of, ranked_rows, row_ranges

    ids, lists = _on_common_ids(runs)
    n_queries, width = lists[0].indices.shape[0], max(len(ids), 1)
    entries = []
    for found in lists:
        row, item, rank = _distinct_entries(found, width)
        entries.append((row, item, 1.0 / (rrf_k + rank)))
    fused_rows, fused_ids, fused = [np.empty(0, np.int64)], [np.empty(0, np.int64)], [np.empty(0)]
    # a table of (queries x ids) sums, a block of queries at a time, each run added in turn
    for first, last in row_ranges(n_queries, width):
        table = np.zeros((last - first) * width)
        for row, item, gain in entries:
            part = entries_of(row, first, last)
            np.add.at(table, (row[part] - first) * width + item[part], gain[part])
        cells = np.flatnonzero(table)  # by query, then id
        fused_rows.append(cells // width + first)
        fused_ids.append(cells % width)
        fused.append(table[cells])
    key_rows, key_ids, scores = (np.concatenate(parts) for parts in (fused_rows, fused_ids, fused))
    # a stable sort by score within each query keeps tied ids in order
    order = np.lexsort((-scores, key_rows))
    longest = int(np.bincount(key_rows, minlength=1).max()) if key_rows.size else 0
    found = ranked_rows(key_rows[order], key_ids[order], scores[order], n_queries, longest)
    return Run(ids, found)


def _distinct_entries(found: TopK, n_ids: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A run's (row, id, rank) entries by row then rank, each id of a row at its first place
    only, ranked 1, 2, ... among the distinct ids: the places the evaluator reads the run at
    (goldenset.evaluation.projection keeps an id's first place and closes the gaps)."""
    import numpy as np

    from goldenset.core.ranked import first_of_each

    row, column = np.nonzero(found.indices >= 0)
    item = found.indices[row, column]
    first = first_of_each(row, item, found.indices.shape[0], n_ids)
    row, item = row[first], item[first]
    rank = np.arange(row.size) - np.searchsorted(row, row) + 1.0
    return row, item, rank


def _on_common_ids(runs: Sequence[Run]) -> tuple[Sequence[str], list[TopK]]:
    """The runs' rankings over one id list: theirs when they share it (goldenset's own
    retrievers rank the same chunks), else every id they hold, in the order first listed."""
    import numpy as np

    from goldenset.core.ranked import TopK

    first = runs[0].ids
    if all(run.ids is first for run in runs):
        return first, [run.found for run in runs]
    index: dict[str, int] = {}
    for run in runs:
        for item in run.ids:
            index.setdefault(item, len(index))
    lists = []
    for run in runs:
        # the last entry maps the padding (-1) to itself
        position = np.array([*(index[item] for item in run.ids), -1], dtype=np.int64)
        lists.append(TopK(position[run.found.indices], run.found.scores))
    return list(index), lists


def build_hybrid(
    settings: HybridParams, corpus: Corpus, device: torch.device | str, loaded: None
) -> Hybrid:
    return Hybrid(settings.fuse, settings.rrf_k)


RETRIEVERS.register("hybrid", RetrieverEntry(HybridParams, build_hybrid, order=50))
