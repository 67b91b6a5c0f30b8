"""Does the golden set tell two lexical rankers apart as the real queries do?

Variants of bm25s (its scoring methods, k1 and b, stop words) each rank the documents (chunked as
sentences of 600 characters, a document at its best chunk: the document view) for the real
queries and for each golden set found: the project's own and each seed calibrate wrote
(cache/calibrate/seeds/<seed>/). Each variant is set against today's bm25 (lucene, k1 1.5,
b 0.75, English stop words): the ndcg@10 difference and the p of `goldenset compare`'s paired
test on each set. The pair to check is chosen on the real queries alone (their smallest p), so
the choice cannot favour the golden set.

    python benchmarks/lexical_pair.py PROJECT
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.chunking.configured import chunk_corpus
from goldenset.chunking.params import ChunkParams
from goldenset.core.params import EmbedParams
from goldenset.core.stats import randomization_test
from goldenset.corpus.querysets import QUERY_SETS, QuerySet, file_reader, read_query_set
from goldenset.evaluation.ranking import ndcg_at_k

K = 10
PERMUTATIONS = 10_000


@dataclass(frozen=True)
class Variant:
    label: str
    method: str = "lucene"
    k1: float = 1.5
    b: float = 0.75
    stopwords: str | None = "en"
    lower: bool = True
    token_pattern: str = r"(?u)\b\w\w+\b"  # bm25s' default


TODAY = Variant("bm25 (today's)")
VARIANTS = [
    Variant("k1 0.9, b 0.4", k1=0.9, b=0.4),
    Variant("k1 1.2", k1=1.2),
    Variant("b 0", b=0.0),
    Variant("no stop words", stopwords=None),
    Variant("bm25+", method="bm25+"),
    Variant("bm25l", method="bm25l"),
    Variant("atire", method="atire"),
    Variant("robertson", method="robertson"),
    Variant("whitespace tokens", stopwords=None, lower=False, token_pattern=r"\S+"),
]
TFIDF = "tf-idf cosine"  # scikit-learn's TfidfVectorizer, English stop words


def document_scores(variant: Variant, chunks: pd.DataFrame, queries: list[str]) -> np.ndarray:
    """(queries, documents): each document's best chunk score, documents in chunk order."""
    import bm25s

    def tokens(texts: list[str], return_ids: bool):
        return bm25s.tokenize(
            texts,
            lower=variant.lower,
            token_pattern=variant.token_pattern,
            stopwords=variant.stopwords,
            return_ids=return_ids,
            show_progress=False,
        )

    index = bm25s.BM25(method=variant.method, k1=variant.k1, b=variant.b)
    index.index(tokens(chunks["text"].tolist(), True), show_progress=False)
    scores = np.zeros((len(queries), len(chunks)), dtype=np.float32)
    for row, words in enumerate(tokens(queries, False)):
        ids = index.get_tokens_ids(words)
        if ids:
            scores[row] = index.get_scores_from_ids(ids)
    return best_chunk(scores, chunks)


def tfidf_scores(chunks: pd.DataFrame, queries: list[str]) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
    items = vectorizer.fit_transform(chunks["text"])
    return best_chunk((vectorizer.transform(queries) @ items.T).toarray(), chunks)


def best_chunk(scores: np.ndarray, chunks: pd.DataFrame) -> np.ndarray:
    starts = np.flatnonzero(
        np.r_[True, chunks["doc_id"].to_numpy()[1:] != chunks["doc_id"].to_numpy()[:-1]]
    )
    return np.maximum.reduceat(scores, starts, axis=1)


def ndcg(scores: np.ndarray, doc_ids: np.ndarray, grades: list[dict[str, float]]) -> np.ndarray:
    order = np.argsort(-scores, axis=1, kind="stable")[:, :K]
    gains = np.array(
        [
            [grade.get(doc, 0.0) for doc in doc_ids[row]]
            for row, grade in zip(order, grades, strict=True)
        ]
    )
    ideal = np.array(
        [
            sorted(grade.values(), reverse=True)[:K] + [0.0] * (K - min(K, len(grade)))
            for grade in grades
        ]
    )
    return ndcg_at_k(gains, ideal, K)


def golden_sets(project: Path) -> dict[str, QuerySet]:
    entry = QUERY_SETS["synthetic"]
    folders = {"project": project} | {
        f"seed {folder.name}": folder
        for folder in sorted((project / "cache/calibrate/seeds").glob("*"))
        if (folder / entry.questions_file).exists()  # a seed calibrate is still writing: not yet
    }
    return {name: read_query_set(entry, file_reader(folder)) for name, folder in folders.items()}


def main(project: Path) -> None:
    documents = pd.read_parquet(project / "data/documents.parquet", columns=["doc_id", "text"])
    chunks = chunk_corpus(documents, ChunkParams(strategy="sentences", max_size=600), EmbedParams())
    chunks = chunks.sort_values("doc_id", kind="stable").reset_index(drop=True)
    doc_ids = chunks["doc_id"].drop_duplicates().to_numpy()
    real = read_query_set(QUERY_SETS["real"], file_reader(project))
    judged = real.judgments[real.judgments["grade"] > 0]
    by_qid = {
        qid: dict(zip(g["doc_id"], g["grade"].astype(float), strict=True))
        for qid, g in judged.groupby("qid")
    }
    sets = {"real": (real.texts, [by_qid.get(qid, {}) for qid in real.qids])}
    for name, golden in golden_sets(project).items():
        sets[name] = (golden.texts, [{doc: 1.0} for doc in golden.table["doc_id"]])
    values = {}
    for name, (texts, grades) in sets.items():
        for variant in [TODAY, *VARIANTS]:
            scores = document_scores(variant, chunks, texts)
            values[variant.label, name] = ndcg(scores, doc_ids, grades)
        values[TFIDF, name] = ndcg(tfidf_scores(chunks, texts), doc_ids, grades)
    print(f"ndcg@{K} (document view, sentences 600): each variant minus {TODAY.label}, p")
    print("| variant | " + " | ".join(sets) + " |")
    print("|---|" + "---:|" * len(sets))
    for label in [*(variant.label for variant in VARIANTS), TFIDF]:
        cells = []
        for name in sets:
            a, b = values[label, name], values[TODAY.label, name]
            keep = ~np.isnan(a) & ~np.isnan(b)
            test = randomization_test(a[keep], b[keep], PERMUTATIONS, 0)
            cells.append(f"{(a[keep] - b[keep]).mean():+.3f} (p {test.p_value:.3g})")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
