"""ann: a faiss HNSW or IVF inner-product index over the embeddings, built once per corpus;
its own metric recall_loss@k measures what it misses against the exact search at the same k."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from goldenset.scoring.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection

if TYPE_CHECKING:
    import numpy as np
    import torch

    from goldenset.scoring.retrievers.base import Corpus, Queries, RankingContext
    from goldenset.scoring.topk import TopK


class ANNParams(RetrieverSection):
    index: Literal["hnsw", "ivf"] = "hnsw"
    hnsw_m: int = Field(32, gt=1, description="HNSW links per node")
    ef_construction: int = Field(40, gt=0)
    ef_search: int = Field(16, gt=0, description="raised to the results fetched")
    ivf_nlist: int = Field(100, gt=0, description="IVF clusters (at most one per chunk)")
    ivf_nprobe: int = Field(8, gt=0, description="IVF clusters searched per query")


class ANN:
    """faiss over the chunk vectors, inner product like dense, built once."""

    def __init__(self, corpus: Corpus, params: ANNParams) -> None:
        self.corpus, self.params = corpus, params
        self._index = None

    def _built(self):
        if self._index is None:
            self._index = build_faiss_index(self.corpus.vectors, self.params)
        return self._index

    def rank(self, queries: Queries, depth: int) -> TopK:
        import faiss
        import numpy as np

        from goldenset.scoring.topk import TopK, chunk_depth, padded, to_groups

        groups, n_chunks = queries.judged.groups, len(self.corpus.chunk_ids)
        wanted = min(chunk_depth(groups, n_chunks, depth), n_chunks)
        index = self._built()
        if self.params.index == "hnsw":
            index.hnsw.efSearch = max(self.params.ef_search, wanted)
        vectors = np.ascontiguousarray(queries.vectors, dtype=np.float32)
        if wanted == 0 or len(vectors) == 0:
            return padded(len(vectors), 0)
        # One thread: faiss' OpenMP pool and torch's would otherwise fight over the cores.
        faiss.omp_set_num_threads(1)
        scores, indices = index.search(vectors, wanted)
        return to_groups(TopK(indices.astype(np.int64), scores.astype(np.float32)), groups, depth)


def build_faiss_index(vectors: np.ndarray, params: ANNParams):
    """An HNSW or IVF inner-product index holding ``vectors``, built deterministically."""
    import faiss
    import numpy as np

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n_items, dimension = vectors.shape
    faiss.omp_set_num_threads(1)  # HNSW insertion order, hence the graph, then never varies
    if params.index == "hnsw":
        index = faiss.IndexHNSWFlat(dimension, params.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = params.ef_construction
    else:
        quantizer = faiss.IndexFlatIP(dimension)
        nlist = max(1, min(params.ivf_nlist, n_items))
        index = faiss.IndexIVFFlat(quantizer, dimension, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.min_points_per_centroid = 1  # small corpora: no warning per training
        if n_items:
            index.train(vectors)
        index.nprobe = min(params.ivf_nprobe, nlist)
    if n_items:
        index.add(vectors)
    return index


def recall_loss(approximate: TopK, exact: TopK, ks: Sequence[int]) -> dict[str, float]:
    """``recall_loss@k``: 1 - |approximate top k ∩ exact top k| / k, averaged over queries.

    k is capped by the items the exact search returned (a corpus smaller than k).
    """
    import numpy as np

    losses = {}
    for k in ks:
        cut = min(k, exact.indices.shape[1])
        if cut == 0 or exact.indices.shape[0] == 0:
            losses[f"recall_loss@{k}"] = 0.0
            continue
        exact_top, approximate_top = exact.indices[:, :cut], approximate.indices[:, :cut]
        shared = [
            np.intersect1d(a[a >= 0], e[e >= 0]).size
            for a, e in zip(approximate_top, exact_top, strict=True)
        ]
        losses[f"recall_loss@{k}"] = float(1.0 - np.mean(shared) / cut)
    return losses


def recall_loss_against_exact(
    approximate: TopK, context: RankingContext, ks: Sequence[int]
) -> dict[str, float]:
    """:func:`recall_loss` against dense's run (exact search over the same embeddings), or an
    exact search run for it when dense is off."""
    from goldenset.scoring.retrievers.dense import Dense

    exact = context.ranked.get("dense")
    if exact is None:
        exact = Dense(context.corpus, context.device).rank(context.queries, context.depth)
    return recall_loss(approximate, exact, ks)


def build_ann(settings: ANNParams, corpus: Corpus, device: torch.device | str, loaded: None) -> ANN:
    return ANN(corpus, settings)


RETRIEVERS.register(
    "ann", RetrieverEntry(ANNParams, build_ann, order=30, extra_metrics=recall_loss_against_exact)
)
