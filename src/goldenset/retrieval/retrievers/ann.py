"""ann: a faiss HNSW or IVF inner-product index over the embeddings, built once per corpus; it
approximates dense, so the evaluator measures what it misses against that exact search at the
same k (recall_loss@k, goldenset.evaluation.approximation)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from goldenset.retrieval.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection
from goldenset.retrieval.run import Run

if TYPE_CHECKING:
    import numpy as np
    import torch

    from goldenset.retrieval.run import Corpus, Queries


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

    def rank(self, queries: Queries, depth: int) -> Run:
        """Asked deeper for the questions whose answer names fewer than ``depth`` documents or
        texts (goldenset.core.cover), up to every chunk."""
        import faiss
        import numpy as np

        from goldenset.core.ranked import TopK, padded
        from goldenset.core.topk import deepened_run

        index = self._built()
        vectors = np.ascontiguousarray(queries.vectors, dtype=np.float32)
        n_items = len(self.corpus.chunk_ids)
        if n_items == 0 or len(vectors) == 0:
            return Run(self.corpus.chunk_ids, padded(len(vectors), 0))
        # One thread: faiss' OpenMP pool and torch's would otherwise fight over the cores.
        faiss.omp_set_num_threads(1)

        def search(rows: list[int], k: int) -> TopK:
            if self.params.index == "hnsw":
                index.hnsw.efSearch = max(self.params.ef_search, k)
            scores, indices = index.search(vectors[rows], k)
            return TopK(indices.astype(np.int64), scores.astype(np.float32))

        found, _ = deepened_run(search, len(vectors), depth, n_items, self.corpus.cover)
        return Run(self.corpus.chunk_ids, found)


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


def build_ann(settings: ANNParams, corpus: Corpus, device: torch.device | str, loaded: None) -> ANN:
    return ANN(corpus, settings)


RETRIEVERS.register("ann", RetrieverEntry(ANNParams, build_ann, order=30, approximates="dense"))
