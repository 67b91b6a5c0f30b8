"""A toy retriever, metric, question writer, chunking strategy and query set, each added in one
place: one entry.

The toy retriever is what a module of goldenset.scoring.retrievers holds (its params section, how
to build it, its entry); the toy metric is one Measure. Imported at interpreter start (a
`sitecustomize` module that tests/test_extension_points.py puts on the path of the pipeline's
processes), so the chunk, generate and score stages and `goldenset compare`, run as their real
commands, see them all. The toy query set reads the real queries' files again, so that it needs no
stage and no dvc.yaml line of its own: a set with files of its own also lists them in dvc.yaml
(tests/test_query_sets.py scores one).
"""

from __future__ import annotations

import re

import numpy as np

from goldenset.chunking.strategies import STRATEGIES, Strategy
from goldenset.core import paths
from goldenset.core.params import Section
from goldenset.core.spans import Span, trim_span
from goldenset.corpus.querysets import DOCUMENTS, QuerySetEntry, declare
from goldenset.generation.interface import Completion
from goldenset.generation.prompt import TARGET_CLOSE, TARGET_OPEN
from goldenset.generation.providers.registry import PROVIDERS, ProviderEntry
from goldenset.scoring.measures import MEASURES, RANKING_VIEWS, Measure
from goldenset.scoring.retrievers import REGISTRY, RetrieverEntry, RetrieverSection


class ToyParams(RetrieverSection):
    k1: float = 1.2


def build_toy(settings: ToyParams, corpus, device):
    """bm25 with its own k1 and no length normalisation: a retriever the project does not have."""
    from goldenset.scoring.retrievers.lexical import BM25

    return BM25(corpus, settings.k1, 0.0)


def relevant_found(judged, k: int) -> np.ndarray:
    """Relevant items in the top k, counted."""
    return (judged.gains[:, :k] > 0).sum(axis=1).astype(np.float64)


REGISTRY["toy"] = RetrieverEntry(ToyParams, build_toy)
MEASURES["found"] = Measure(
    "found", "k", RANKING_VIEWS, "relevant items in the top k, counted", compute=relevant_found
)


class ToyWriterParams(Section):
    """generate.toy: the toy writer's own settings, a section derived from its entry."""

    opening: str = "What is known about"


class ToyWriter:
    """A question writer without a model: it asks about the longest word of the passage's target
    sentence (the next longest on each retry), offline and free."""

    name = "toy"
    model = "toy-writer"
    max_concurrency = None
    paid = False

    def __init__(self, params) -> None:
        self.opening = params.toy.opening

    def identity(self) -> dict:
        return {"provider": self.name, "model": self.model}

    def complete(self, system: str, messages: list[dict[str, str]], *, attempt: int) -> Completion:
        # the passage turn: the last with a target (a retry's correction comes after it)
        turn = next(m["content"] for m in reversed(messages) if TARGET_OPEN in m["content"])
        target = turn[turn.index(TARGET_OPEN) + len(TARGET_OPEN) : turn.index(TARGET_CLOSE)]
        words = sorted(set(re.findall(r"[^\W\d_]{4,}", target)), key=lambda w: (-len(w), w))
        text = f"{self.opening} {words[attempt % len(words)] if words else 'it'}?"
        return Completion(text, input_tokens=len(turn) // 4, output_tokens=12, truncated=False)


def halves(text: str, size: int, overlap: int, tokenizer) -> list[Span]:
    """Two chunks: the document's halves, cut at the middle character."""
    middle = len(text) // 2
    pieces = (trim_span(text, 0, middle), trim_span(text, middle, len(text)))
    return [span for span in pieces if span is not None]


PROVIDERS["toy"] = ProviderEntry(ToyWriter, default_model=ToyWriter.model, params=ToyWriterParams)
STRATEGIES["toy"] = Strategy(halves)
declare(QuerySetEntry("toy", paths.QUERIES, "text", DOCUMENTS, paths.QRELS, echo_label="toy"))
