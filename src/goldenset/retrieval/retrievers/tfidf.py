"""tfidf: the cosine of TF-IDF vectors (scikit-learn) over the chunk texts, ranked exactly; it
reads no embedding. Off unless enabled: the lexical ranker teams compare BM25 with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from goldenset.retrieval.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection
from goldenset.retrieval.run import Run

if TYPE_CHECKING:
    import numpy as np
    import torch

    from goldenset.retrieval.run import Corpus, Queries


class TfidfParams(RetrieverSection):
    enabled: bool = False
    stopwords: bool = Field(True, description="leave out scikit-learn's English stop words")
    sublinear_tf: bool = Field(True, description="1 + log(tf) in place of tf")


class Tfidf:
    """TF-IDF over the corpus' chunk texts, fitted once for every query set."""

    def __init__(self, corpus: Corpus, settings: TfidfParams) -> None:
        self.corpus, self.settings = corpus, settings
        self._fitted: tuple[Any, Any] | None = None

    def rank(self, queries: Queries, depth: int) -> Run:
        from goldenset.core.topk import top_k

        if self._fitted is None:
            self._fitted = tfidf_index(self.corpus.texts, self.settings)
        vectorizer, items = self._fitted
        source = TfidfScores(vectorizer, items, queries.texts)
        return Run(self.corpus.chunk_ids, top_k(source, depth, cover=self.corpus.cover))


def tfidf_index(item_texts: Sequence[str], settings: TfidfParams) -> tuple[Any, Any]:
    """The fitted vectorizer (None when the texts hold no term) and the items' L2-normalised
    TF-IDF rows, a sparse matrix."""
    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(
        stop_words="english" if settings.stopwords else None,
        sublinear_tf=settings.sublinear_tf,
        dtype=np.float32,
    )
    try:
        return vectorizer, vectorizer.fit_transform(list(item_texts))
    except ValueError:  # no term in any text (scikit-learn refuses an empty vocabulary)
        return None, csr_matrix((len(item_texts), 1), dtype=np.float32)


class TfidfScores:
    """Cosine of each query's TF-IDF vector with each item's (a goldenset.core.topk
    .ScoreSource); a query with no known term scores 0 everywhere."""

    def __init__(self, vectorizer: Any, items: Any, query_texts: Sequence[str]) -> None:
        import numpy as np
        from scipy.sparse import csr_matrix

        self._items = items
        if vectorizer is None:
            self._queries = csr_matrix((len(query_texts), items.shape[1]), dtype=np.float32)
        else:
            self._queries = vectorizer.transform(list(query_texts))
        self.n_queries, self.n_items = self._queries.shape[0], items.shape[0]

    def scores(self, rows: slice) -> np.ndarray:
        import numpy as np

        return (self._queries[rows] @ self._items.T).toarray().astype(np.float32, copy=False)


def build_tfidf(
    settings: TfidfParams, corpus: Corpus, device: torch.device | str, loaded: None
) -> Tfidf:
    return Tfidf(corpus, settings)


RETRIEVERS.register("tfidf", RetrieverEntry(TfidfParams, build_tfidf, order=25, model_free=True))
