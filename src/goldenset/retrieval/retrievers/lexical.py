"""bm25: BM25 (bm25s) over the chunk texts, with the options teams tune (variant, k1, b, delta,
stemmer, stop words); it reads no embedding. The defaults are bm25s' Lucene variant, English stop
words and no stemmer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from goldenset.core.terms import DEFAULT_ANALYZER, STOP_LISTS, Analyzer
from goldenset.retrieval.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection
from goldenset.retrieval.run import Run

if TYPE_CHECKING:
    import numpy as np
    import torch

    from goldenset.retrieval.run import Corpus, Queries

Method = Literal["lucene", "robertson", "atire", "bm25l", "bm25+"]


class BM25Params(RetrieverSection):
    k1: float = Field(1.5, gt=0)
    b: float = Field(0.75, ge=0, le=1)
    method: Method = Field("lucene", description="bm25s' variant: lucene, robertson, atire...")
    delta: float = Field(0.5, ge=0, description="the lower bound of bm25l and bm25+")
    stemmer: str | None = Field(None, description="a Snowball language (english...), or null")
    stopwords: str | list[str] | None = Field("en", description="a language code, words, null")

    @field_validator("stemmer")
    @classmethod
    def _known_stemmer(cls, language: str | None) -> str | None:
        if language is None:
            return None
        import Stemmer

        if language not in Stemmer.algorithms():
            raise ValueError(f"{language!r}: use one of {', '.join(Stemmer.algorithms())}")
        return language

    @field_validator("stopwords")
    @classmethod
    def _known_stop_list(cls, stopwords: str | list[str] | None) -> str | list[str] | None:
        if isinstance(stopwords, str) and stopwords not in STOP_LISTS:
            raise ValueError(f"{stopwords!r}: use one of {', '.join(STOP_LISTS)}, a list or null")
        return stopwords

    @property
    def analyzer(self) -> Analyzer:
        words = self.stopwords
        return Analyzer(tuple(words) if isinstance(words, list) else words, self.stemmer)


class BM25:
    """BM25 over the corpus' chunk texts, indexed once for every query set."""

    def __init__(self, corpus: Corpus, settings: BM25Params) -> None:
        self.corpus, self.settings = corpus, settings
        self._index: Any = None

    def rank(self, queries: Queries, depth: int) -> Run:
        from goldenset.core.topk import top_k

        settings = self.settings
        if self._index is None:
            weighting = settings.model_dump(include={"k1", "b", "method", "delta"})
            self._index = bm25_index(self.corpus.texts, **weighting, analyzer=settings.analyzer)
        source = BM25Scores(
            self.corpus.texts, queries.texts, index=self._index, analyzer=settings.analyzer
        )
        return Run(self.corpus.chunk_ids, top_k(source, depth, cover=self.corpus.cover))


def bm25_index(
    item_texts: Sequence[str],
    k1: float = 1.5,
    b: float = 0.75,
    method: Method = "lucene",
    delta: float = 0.5,
    analyzer: Analyzer = DEFAULT_ANALYZER,
) -> Any:
    """bm25s' index of the texts, or False for texts without a single term (bm25s cannot index
    them). ``delta`` is read by bm25l and bm25+ only."""
    import bm25s

    corpus = analyzer.tokenize(item_texts)
    if not corpus.vocab:
        return False
    index = bm25s.BM25(k1=k1, b=b, method=method, delta=delta)
    index.index(corpus, show_progress=False)
    return index


class BM25Scores:
    """BM25 (bm25s) of each query text against each item text (a
    goldenset.core.topk.ScoreSource). A query with no known term, or a corpus with no term
    at all, scores 0 everywhere."""

    def __init__(
        self,
        item_texts: Sequence[str],
        query_texts: Sequence[str],
        k1: float = 1.5,
        b: float = 0.75,
        index: Any = None,
        *,
        method: Method = "lucene",
        delta: float = 0.5,
        analyzer: Analyzer = DEFAULT_ANALYZER,
    ) -> None:
        """``index``: :func:`bm25_index` of ``item_texts`` made before with the same analyzer
        (None: made now, with k1, b, method and delta)."""
        self._n_items = len(item_texts)
        self._n_queries = len(query_texts)
        if index is None:
            index = bm25_index(item_texts, k1, b, method, delta, analyzer)
        self._index = index
        queries = analyzer.tokenize(query_texts, return_ids=False)
        self._query_token_ids = [
            index.get_tokens_ids(tokens) if index else [] for tokens in queries
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
    return BM25(corpus, settings)


RETRIEVERS.register("bm25", RetrieverEntry(BM25Params, build_bm25, order=20, model_free=True))
