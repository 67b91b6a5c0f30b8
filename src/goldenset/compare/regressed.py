"""The questions that lost most between two runs, what now ranks above their evidence, and
the texts by which a reader recognises both."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from goldenset.corpus.querysets import document_judged


@dataclass(frozen=True)
class Regressed:
    """A question that lost most on the headline metric, and what now ranks above its evidence."""

    query_set: str
    retriever: str
    qid: str
    metric: str
    value_a: float
    value_b: float
    rank_a: int | None  # rank of the first relevant item; None: beyond the depth kept
    rank_b: int | None
    above: list[str]  # ids ranked above the first relevant item in run b (all shown, if none)


def most_regressed(
    paired: pd.DataFrame, metric: str, count: int, outranking: int = 2
) -> list[Regressed]:
    """Per query set and retriever, the ``count`` questions whose ``metric`` dropped most."""
    regressed = []
    delta = paired[f"{metric}_b"] - paired[f"{metric}_a"]
    dropped = paired[delta < 0].assign(_delta=delta[delta < 0])
    for (set_name, retriever), group in dropped.groupby(["query_set", "retriever"], sort=False):
        for row in group.sort_values(["_delta", "qid"]).head(count).to_dict("records"):
            rank_b = _rank(row["first_relevant_rank_b"])
            top = [str(item) for item in row["top_ids_b"]]
            regressed.append(
                Regressed(
                    query_set=set_name,
                    retriever=retriever,
                    qid=str(row["qid"]),
                    metric=metric,
                    value_a=float(row[f"{metric}_a"]),
                    value_b=float(row[f"{metric}_b"]),
                    rank_a=_rank(row["first_relevant_rank_a"]),
                    rank_b=rank_b,
                    above=top[: rank_b - 1 if rank_b else len(top)][:outranking],
                )
            )
    return regressed


def _rank(value: object) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


@dataclass(frozen=True)
class Texts:
    """What a reader needs to recognise a question and the items that outranked its evidence."""

    # set -> qid -> question text
    question_texts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # set -> qid -> evidence text (sets judged by spans; the first excerpt)
    evidence: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    chunks: Mapping[str, str] = field(default_factory=dict)  # chunk_id -> text
    documents: Mapping[str, str] = field(default_factory=dict)  # doc_id -> title and text

    def item(self, set_name: str, item_id: str) -> str:
        # a set judged by document qrels ranks documents; every other set ranks chunks
        by_document = set_name in document_judged()
        return (self.documents if by_document else self.chunks).get(item_id, "")
