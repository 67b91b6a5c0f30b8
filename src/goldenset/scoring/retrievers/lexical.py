"""bm25: BM25 (bm25s, Lucene variant) over the chunk texts; it reads no embedding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from goldenset.scoring.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection

if TYPE_CHECKING:
    import numpy as np
    import torch

    from goldenset.scoring.retrievers.base import Corpus, Queries
    from goldenset.scoring.topk import TopK


class BM25Params(RetrieverSection):
    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)


class BM25:
    def __init__(self, corpus: Corpus, k1: float, b: float) -> None:
        self.corpus, self.k1, self.b = corpus, k1, b

    def rank(self, queries: Queries, depth: int) -> TopK:
        from goldenset.scoring.topk import top_k

        source = BM25Scores(self.corpus.texts, queries.texts, k1=self.k1, b=self.b)
        return top_k(source, depth, groups=queries.judged.groups)


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
    ) -> None:
        import bm25s

        self._n_items = len(item_texts)
        self._n_queries = len(query_texts)
        corpus = bm25s.tokenize(list(item_texts), stopwords="en", show_progress=False)
        self._index: bm25s.BM25 | None = None
        if corpus.vocab:  # bm25s cannot index a corpus without a single token
            self._index = bm25s.BM25(k1=k1, b=b)
            self._index.index(corpus, show_progress=False)
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
