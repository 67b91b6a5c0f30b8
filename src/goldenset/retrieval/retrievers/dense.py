"""dense: exact inner-product search over the embeddings, on score.device (a GPU when torch sees
one); the exact search that ann is measured against."""

from __future__ import annotations

from typing import TYPE_CHECKING

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection
from goldenset.retrieval.run import Run

if TYPE_CHECKING:
    import numpy as np
    import torch

    from goldenset.retrieval.run import Corpus, Queries


class DenseParams(RetrieverSection):
    pass


class Dense:
    def __init__(self, corpus: Corpus, device: torch.device | str = "cpu") -> None:
        self.corpus, self.device = corpus, device

    def rank(self, queries: Queries, depth: int) -> Run:
        from goldenset.core.topk import top_k

        source = DenseScores(queries.vectors, self.corpus.vectors, self.device)
        return Run(self.corpus.chunk_ids, top_k(source, depth, cover=self.corpus.cover))


class DenseScores:
    """Inner products of query and item vectors (normalise them first for cosine), computed on
    `device`; each block of scores comes back to the CPU for the top-k selection (a
    goldenset.core.topk.ScoreSource)."""

    def __init__(
        self,
        query_vectors: np.ndarray,
        item_vectors: np.ndarray,
        device: torch.device | str = "cpu",
    ) -> None:
        import numpy as np
        import torch

        query_vectors = np.asarray(query_vectors, dtype=np.float32)
        item_vectors = np.asarray(item_vectors, dtype=np.float32)
        if query_vectors.ndim != 2 or item_vectors.ndim != 2:
            raise GoldensetError("query and item vectors must be 2-D arrays (rows, dimensions)")
        if query_vectors.shape[1] != item_vectors.shape[1]:
            raise GoldensetError(
                f"query vectors have {query_vectors.shape[1]} dimensions but item vectors have "
                f"{item_vectors.shape[1]}: embed both with the same embed.model"
            )
        # torch's matmul is multi-threaded and faster than numpy's here (benchmarks/score_bench.py).
        self.device = torch.device(device)
        self._queries = torch.from_numpy(np.ascontiguousarray(query_vectors)).to(self.device)
        self._items = torch.from_numpy(np.ascontiguousarray(item_vectors)).to(self.device)

    @property
    def n_queries(self) -> int:
        return self._queries.shape[0]

    @property
    def n_items(self) -> int:
        return self._items.shape[0]

    def scores(self, rows: slice) -> np.ndarray:
        return (self._queries[rows] @ self._items.T).cpu().numpy()

    def scores_into(self, rows: slice, out: np.ndarray) -> np.ndarray:
        """Like scores, written into ``out`` (float32, C-contiguous, (rows, n_items))."""
        import torch

        target = torch.from_numpy(out)
        if self.device.type == "cpu":  # straight into the buffer: no copy
            torch.mm(self._queries[rows], self._items.T, out=target)
        else:
            target.copy_(torch.mm(self._queries[rows], self._items.T))
        return out


def build_dense(
    settings: DenseParams, corpus: Corpus, device: torch.device | str, loaded: None
) -> Dense:
    return Dense(corpus, device)


RETRIEVERS.register("dense", RetrieverEntry(DenseParams, build_dense, order=10))
