"""hybrid: reciprocal rank fusion (Cormack et al., 2009) of the runs of other retrievers (its
`fuse` param): a function from their runs to a run, ranked after them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from goldenset.scoring.retrievers.base import RETRIEVERS, FusionSection, RetrieverEntry

if TYPE_CHECKING:
    import torch

    from goldenset.scoring.retrievers.base import Corpus
    from goldenset.scoring.topk import TopK


class HybridParams(FusionSection):
    fuse: list[str] = Field(default_factory=lambda: ["dense", "bm25"], min_length=2)
    rrf_k: int = Field(60, gt=0, description="reciprocal rank fusion: 1 / (rrf_k + rank)")


class Hybrid:
    """Reciprocal rank fusion of the runs of ``fuses`` (a goldenset.scoring.retrievers.Fusion)."""

    def __init__(self, fuses: Sequence[str], rrf_k: int) -> None:
        self.fuses, self.rrf_k = list(fuses), rrf_k

    def fuse(self, runs: Sequence[TopK], depth: int) -> TopK:
        return reciprocal_rank_fusion(runs, self.rrf_k, depth)


def reciprocal_rank_fusion(lists: Sequence[TopK], rrf_k: int, depth: int) -> TopK:
    """Items scored by the sum of 1 / (rrf_k + rank) over the lists; ties by lower index."""
    import numpy as np

    from goldenset.scoring.topk import padded, ranked_rows

    n_queries = lists[0].indices.shape[0]
    rows, items, gains = [], [], []
    for found in lists:
        row, column = np.nonzero(found.indices >= 0)
        rows.append(row)
        items.append(found.indices[row, column])
        gains.append(1.0 / (rrf_k + column + 1.0))
    rows, items, gains = np.concatenate(rows), np.concatenate(items), np.concatenate(gains)
    if rows.size == 0:
        return padded(n_queries, 0)
    width = int(items.max()) + 1
    keys, inverse = np.unique(rows * width + items, return_inverse=True)
    fused = np.bincount(inverse.ravel(), weights=gains, minlength=keys.size)
    key_rows, key_items = keys // width, keys % width
    order = np.lexsort((key_items, -fused, key_rows))
    return ranked_rows(key_rows[order], key_items[order], fused[order], n_queries, depth)


def build_hybrid(
    settings: HybridParams, corpus: Corpus, device: torch.device | str, loaded: None
) -> Hybrid:
    return Hybrid(settings.fuse, settings.rrf_k)


RETRIEVERS.register("hybrid", RetrieverEntry(HybridParams, build_hybrid, order=50))
