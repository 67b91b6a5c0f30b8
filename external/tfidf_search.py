"""An external retriever for `retrievers.external.callable: external.tfidf_search:search`.

TF-IDF cosine over the chunk texts (scikit-learn). Replace it with a call to the retriever your
team ships; the stage calls it once per query set, from the project folder.
"""

from __future__ import annotations

from sklearn.feature_extraction.text import TfidfVectorizer


def search(
    query_texts: list[str], chunk_ids: list[str], chunk_texts: list[str], k: int
) -> list[list[tuple[str, float]]]:
    """For each query, its k best chunks, best first, as (chunk id, score) pairs."""
    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
    chunks = vectorizer.fit_transform(chunk_texts)
    scores = (vectorizer.transform(query_texts) @ chunks.T).toarray()
    ranked = []
    for row in scores:
        best = sorted(range(len(chunk_ids)), key=lambda i: (-row[i], i))[:k]
        ranked.append([(chunk_ids[i], float(row[i])) for i in best])
    return ranked
