"""retrievers.toy: BM25 with its own k1 and no length normalisation."""

from __future__ import annotations

from goldenset.scoring.retrievers import RETRIEVERS, RetrieverEntry, RetrieverSection, Run


class ToyParams(RetrieverSection):
    enabled: bool = False
    k1: float = 1.2


class Toy:
    def __init__(self, corpus, k1: float) -> None:
        self.corpus, self.k1 = corpus, k1

    def rank(self, queries, depth: int) -> Run:
        """Each question's best chunks: of its `depth` best documents and distinct texts."""
        from goldenset.scoring.retrievers.lexical import BM25Scores
        from goldenset.scoring.topk import top_k

        scores = BM25Scores(self.corpus.texts, queries.texts, k1=self.k1, b=0.0)
        return Run(self.corpus.chunk_ids, top_k(scores, depth, cover=self.corpus.cover))


def build_toy(settings: ToyParams, corpus, device, loaded) -> Toy:
    return Toy(corpus, settings.k1)


RETRIEVERS.register("toy", RetrieverEntry(ToyParams, build_toy))
