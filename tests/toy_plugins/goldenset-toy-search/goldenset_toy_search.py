"""A retriever: bm25 with its own k1 and no length normalisation (its own settings are
retrievers.toy)."""

from __future__ import annotations

from goldenset.scoring.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection


class ToyParams(RetrieverSection):
    enabled: bool = False
    k1: float = 1.2


def build_toy(settings: ToyParams, corpus, device, loaded):
    from goldenset.scoring.retrievers.lexical import BM25

    return BM25(corpus, settings.k1, 0.0)


RETRIEVERS.register("toy", RetrieverEntry(ToyParams, build_toy))
