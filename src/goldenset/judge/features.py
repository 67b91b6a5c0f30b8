"""What the judge sees of a question: cheap measures, each a column of one frame.

- referee_cosine: the cosine of question and evidence sentence by the referee model, a second
  embedding family (e5) rather than the model under test, so no retriever is favoured by it;
- rarest_word: how rare in the corpus (-log10 of its window share) the question's rarest word is
  among those its document also uses: a question naming its document's subject keeps one;
- evidence_overlap: the share of the question's content words in its evidence sentence;
- echo: the question's highest overlap with one ~100-word window of its document;
- content_words: how many content words the question has;
- answer_margin, writer_likelihood: the bundled model's reading of sentence and question
  (goldenset.judge.reader).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from goldenset.core.echo import WindowFrequency, WindowIndex, content_words, echo, overlap

FEATURES = [
    "referee_cosine",
    "rarest_word",
    "evidence_overlap",
    "echo",
    "content_words",
    "answer_margin",
    "writer_likelihood",
]
# texts and a prefix -> unit vectors (goldenset.embedding.encoder.cached_embedder's signature)
Embed = Callable[[Sequence[str], str], np.ndarray]
# (evidence sentence, query, its form) -> (answer_margin, writer_likelihood): judge.reader
Read = Callable[[str, str, str], tuple[float, float]]
REFEREE_PREFIXES = ("query: ", "passage: ")  # e5's


def rarest_word(question: str, document: WindowIndex, rarity: WindowFrequency) -> float:
    """-log10 of the smallest window share among the question's words found in its document
    (a word in one window only scores as if one window in the corpus held it); 0 when none."""
    shared = [word for word in content_words(question) if word in document.where]
    if not shared:
        return 0.0
    floor = 1 / max(rarity.windows, 1)
    return float(-np.log10(max(min(rarity.share(word) for word in shared), floor)))


def question_features(
    golden: pd.DataFrame,
    documents: Mapping[str, WindowIndex],
    rarity: WindowFrequency,
    referee: Embed,
    read: Read,
) -> pd.DataFrame:
    """FEATURES of each golden-set row (question, evidence, doc_id), in row order."""
    texts = golden["question"].astype(str).tolist()
    evidence = golden["evidence"].astype(str).tolist()
    empty = WindowIndex.of("")
    indexes = [documents.get(str(doc_id), empty) for doc_id in golden["doc_id"]]
    query_prefix, passage_prefix = REFEREE_PREFIXES
    cosines = np.einsum("ij,ij->i", referee(texts, query_prefix), referee(evidence, passage_prefix))
    of_documents = list(zip(texts, indexes, strict=True))
    # a golden set or a label file of questions only may have no form column
    forms = golden["form"].fillna("question") if "form" in golden else ["question"] * len(golden)
    triples = zip(evidence, texts, forms, strict=True)
    readings = np.array(
        [read(e, q, f) for e, q, f in tqdm(triples, total=len(texts), desc="judge", unit="q")]
    ).reshape(-1, 2)
    return pd.DataFrame(
        {
            "referee_cosine": cosines.astype(np.float64),
            "rarest_word": [rarest_word(q, d, rarity) for q, d in of_documents],
            "evidence_overlap": [overlap(q, e) for q, e in zip(texts, evidence, strict=True)],
            "echo": [echo(q, d) for q, d in of_documents],
            "content_words": [float(len(content_words(q))) for q in texts],
            "answer_margin": readings[:, 0],
            "writer_likelihood": readings[:, 1],
        },
        columns=FEATURES,
    )
