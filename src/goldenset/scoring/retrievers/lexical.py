"""bm25: BM25 (bm25s, Lucene variant) over the chunk texts; it reads no embedding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from goldenset.scoring.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection, Run

if TYPE_CHECKING:
    import numpy as np
    import torch

    from goldenset.scoring.retrievers.base import Corpus, Queries


class BM25Params(RetrieverSection):
    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)


class BM25:
    """BM25 over the corpus' chunk texts, indexed once for every query set."""

    def __init__(self, corpus: Corpus, k1: float, b: float) -> None:
        self.corpus, self.k1, self.b = corpus, k1, b
        self._index: Any = None

    def rank(self, queries: Queries, depth: int) -> Run:
        from goldenset.scoring.topk import top_k

        if self._index is None:
            self._index = bm25_index(self.corpus.texts, self.k1, self.b)
        source = BM25Scores(self.corpus.texts, queries.texts, index=self._index)
        return Run(self.corpus.chunk_ids, top_k(source, depth))


def bm25_index(item_texts: Sequence[str], k1: float, b: float) -> Any:
    """bm25s' index of the texts, or False for texts without a single token (bm25s cannot
    index them)."""
    import bm25s

    corpus = bm25s.tokenize(list(item_texts), stopwords="en", show_progress=False)
    if not corpus.vocab:
        return False
    index = bm25s.BM25(k1=k1, b=b)
    index.index(corpus, show_progress=False)
    return index


class BM25Scores:
    """BM25 (bm25s, Lucene variant) of each query text against each item text (a
    goldenset.scoring.topk.ScoreSource).

    Tokens: bm25s' tokenizer with English stopwords, no stemming. A query with no known token,
    or a corpus with no token at all, scores 0 everywhere.
    """

    def __init__(
        self,
        item_texts: Sequence[str],
        query_texts: Sequence[str],
        k1: float = 1.5,
        b: float = 0.75,
        index: Any = None,
    ) -> None:
        """``index``: :func:`bm25_index` of ``item_texts`` made before (None: made now)."""
        import bm25s

        self._n_items = len(item_texts)
        self._n_queries = len(query_texts)
        self._index = bm25_index(item_texts, k1, b) if index is None else index
        queries = bm25s.tokenize(
            list(query_texts), stopwords="en", return_ids=False, show_progress=False
        )
        self._query_token_ids = [
            self._index.get_tokens_ids(tokens) if self._index else [] for tokens in queries
        ]

    @property
    def n_queries(self) -> int:
        return self._n_queries

    @property
    def n_items(self) -> int:
        return self._n_items

    def scores(self, rows: slice) -> np.ndarray:
        import numpy as np

        token_ids = self._query_token_ids[rows]
        block = np.zeros((len(token_ids), self._n_items), dtype=np.float32)
        for row, ids in enumerate(token_ids):
            if ids:
                block[row] = self._index.get_scores_from_ids(ids)
        return block


def build_bm25(
    settings: BM25Params, corpus: Corpus, device: torch.device | str, loaded: None
) -> BM25:
    return BM25(corpus, settings.k1, settings.b)


RETRIEVERS.register("bm25", RetrieverEntry(BM25Params, build_bm25, order=20, model_free=True))
