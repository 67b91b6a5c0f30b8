"""The rarest-word share: how often a query hands lexical retrieval its document's rarest word.

A query's rarest words are its terms (bm25's default analyzer: lower case, words of two
characters or more, less English stop words) of the lowest document frequency in the corpus,
ignoring terms the corpus lacks; ties are kept together, so the figure does not depend on the
order a set comes in. A query carries its rarest word when any of them is a term of any document
judged relevant to it. Golden questions written from a passage carry it more often than real
users' queries, who name their subject in their own words; a gap flatters BM25 and hides the
differences between lexical rankers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from goldenset.core.terms import DEFAULT_ANALYZER
from goldenset.corpus.querysets import QuerySet, references


def terms(texts: Sequence[str]) -> list[set[str]]:
    """Each text's distinct terms."""
    return [set(tokens) for tokens in DEFAULT_ANALYZER.tokenize(texts, return_ids=False)]


@dataclass(frozen=True)
class Corpus:
    """The documents' terms by id, and each term's document frequency."""

    terms: dict[str, set[str]]
    frequency: Counter[str]

    @classmethod
    def of(cls, documents: Mapping[str, str]) -> Corpus:
        ids = list(documents)
        by_id = dict(zip(ids, terms([documents[i] for i in ids]), strict=True))
        return cls(by_id, Counter(term for words in by_id.values() for term in words))

    def rarest(self, query_terms: Iterable[str]) -> set[str]:
        """The query's terms of the lowest document frequency, ties together (none when the
        corpus has none of them)."""
        known = {term: self.frequency[term] for term in query_terms if term in self.frequency}
        if not known:
            return set()
        lowest = min(known.values())
        return {term for term, frequency in known.items() if frequency == lowest}


def carries_rarest_word(corpus: Corpus, query_terms: set[str], relevant: Iterable[str]) -> bool:
    """Whether any of the query's rarest words is a term of any of its relevant documents."""
    rarest = corpus.rarest(query_terms)
    return any(rarest & corpus.terms.get(doc_id, set()) for doc_id in relevant)


def carried(
    corpus: Corpus, queries: Sequence[str], relevant: Sequence[Iterable[str]]
) -> list[bool]:
    """Whether each query (row i's relevant document ids: relevant[i]) carries its rarest word."""
    return [
        carries_rarest_word(corpus, words, documents)
        for words, documents in zip(terms(queries), relevant, strict=True)
    ]


def rarest_word_share(
    corpus: Corpus, queries: Sequence[str], relevant: Sequence[Iterable[str]]
) -> float | None:
    """The share of the queries that carry their rarest word (carried); None for no query."""
    flags = carried(corpus, queries, relevant)
    return sum(flags) / len(flags) if flags else None


def query_set_share(corpus: Corpus, questions: QuerySet) -> float | None:
    """A judged query set's rarest-word share, against the documents judged relevant."""
    pairs = questions.document_judgments()
    pairs = pairs[pairs["grade"] > 0]
    relevant = pairs.groupby("qid")["doc_id"].apply(list).to_dict()
    return rarest_word_share(
        corpus, questions.texts, [relevant.get(qid, []) for qid in questions.qids]
    )


def rarest_word_figures(
    documents: Mapping[str, str], golden: pd.DataFrame, query_sets: Mapping[str, QuerySet]
) -> dict:
    """metrics/audit.json `rarest_word`: the golden set's share (question, doc_id), the first
    reference set's with questions (real queries first, as for the echo) and the gap between
    them; only the golden share when there is no reference."""
    corpus = Corpus.of(documents)
    figures: dict = {
        "golden": _rounded(
            rarest_word_share(corpus, golden["question"].tolist(), [[d] for d in golden["doc_id"]])
        )
    }
    for entry in references():
        questions = query_sets[entry.name]
        if not len(questions):
            continue
        theirs = query_set_share(corpus, questions)
        figures |= {"reference": _rounded(theirs), "against": str(entry.echo_label)}
        if figures["golden"] is not None and theirs is not None:
            figures["gap"] = round(figures["golden"] - figures["reference"], 4)
        break
    return figures


def _rounded(share: float | None) -> float | None:
    return None if share is None else round(share, 4)
