"""What every retriever shares: the interface (:class:`Retriever` over a :class:`Corpus` and
:class:`Queries`), the params section it extends (:class:`RetrieverSection`) and the registry
(:data:`RETRIEVERS`), in which each retriever's module declares its :class:`RetrieverEntry`.

Everything else is derived from :data:`RETRIEVERS`: the params sections and their validation
(goldenset.scoring.retriever_params), the order retrievers rank in, the retrievers
`goldenset calibrate` accepts, and the plot (a colour per retriever scored, whatever its name).

Nothing here imports numpy, torch or faiss: goldenset.scoring.retriever_params reads the
registry, and reading params must stay fast. A retriever's module imports them inside the
functions that rank.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from goldenset.core.registry import Registry

if TYPE_CHECKING:
    import numpy as np
    import torch

    from goldenset.scoring.ranked import ItemJudgments
    from goldenset.scoring.topk import TopK


@dataclass(frozen=True)
class Corpus:
    """The chunks every retriever searches, row i of each field belonging to chunk i."""

    chunk_ids: list[str]
    texts: list[str]
    vectors: np.ndarray


@dataclass(frozen=True)
class Queries:
    """One query set with its query texts and vectors (row i: ``query_set.qids[i]``)."""

    query_set: ItemJudgments
    texts: list[str]
    vectors: np.ndarray


@dataclass(frozen=True)
class RankingContext:
    """What a retriever's own metrics may read besides its lists: the queries, the corpus they
    searched, the other retrievers' lists on the same set, the depth and the dense device."""

    queries: Queries
    corpus: Corpus
    ranked: Mapping[str, TopK]
    depth: int
    device: torch.device | str = "cpu"


class Retriever(Protocol):
    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK | None:
        """Ranked lists of up to ``depth`` items per query; None when it has none for this set.

        ``earlier``: the lists of the retrievers ranked before it on the same query set.
        """
        ...


def rank_all(retrievers: Mapping[str, Retriever], queries: Queries, depth: int) -> dict[str, TopK]:
    """Every retriever's lists on one query set (a retriever with none for it is left out)."""
    ranked: dict[str, TopK] = {}
    for name, retriever in retrievers.items():
        found = retriever.rank(queries, depth, ranked)
        if found is not None:
            ranked[name] = found
    return ranked


class RetrieverSection(BaseModel):
    """A retriever's section of params.yaml `retrievers:`; every one can be switched off."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True


# (its params section, a Corpus, a torch device, what its `load` read or None) -> a Retriever
Builder = Callable[[Any, Corpus, Any, Any], Retriever]
# (its params section) -> what it reads from outside the pipeline's files (a run file, a module):
# read at the edge (goldenset.scoring.configuration.read_score_inputs), so scoring reads no file
Load = Callable[[Any], Any]
# (its ranked lists, a RankingContext, ks) -> metric name -> mean
ExtraMetrics = Callable[[Any, RankingContext, Sequence[int]], dict[str, float]]


@dataclass(frozen=True)
class RetrieverEntry:
    """A retriever as the pipeline knows it: RETRIEVERS.register("name", RetrieverEntry(...))."""

    params: type[RetrieverSection]  # its section of params.yaml `retrievers:`
    build: Builder
    # where it ranks, and lists in the outputs, among the registered retrievers: lower first
    # (equal orders keep the order of registration)
    order: int = 100
    # hybrid may fuse its lists; one that fuses others (its params have `fuse`, the names it
    # fuses) is not fusable, and ranks after them
    fusable: bool = True
    model_free: bool = False  # reads no embedding: calibrate scores it with the first model only
    # exact search over the embeddings: approximate searches are measured against its lists
    exact: bool = False
    # it ranks the chunks it is handed, so a set judged per document gets a context view from
    # its chunk rankings; False, or a function of its params section, for one that ranks ids of
    # its own (a run file)
    ranks_chunks: bool | Callable[[Any], bool] = True
    extra_metrics: ExtraMetrics | None = None  # metrics of its own, added to its scores
    load: Load | None = None
    # it returns passages of its own chunking (a team's store: goldenset.scoring.stores), scored
    # over that chunking (goldenset.scoring.foreign); `build` then gets its placed answers
    foreign: bool = False

    def ranks_chunks_with(self, settings: RetrieverSection) -> bool:
        return self.ranks_chunks(settings) if callable(self.ranks_chunks) else self.ranks_chunks


# Filled by the modules of goldenset.scoring.retrievers and by plugins (goldenset.retrievers
# entry points) when first read, in `order`.
RETRIEVERS: Registry[RetrieverEntry] = Registry(
    "retriever", "retrievers", ["goldenset.scoring.retrievers", "goldenset.scoring.stores"]
)


def ranking_order() -> list[str]:
    """Registered names, those hybrid can fuse first (a fusing retriever reads their lists),
    stores last (each is scored over its own chunking)."""
    fusing = [name for name, entry in RETRIEVERS.items() if not entry.fusable and not entry.foreign]
    return fusable() + fusing + stores()


def fusable() -> list[str]:
    return [name for name, entry in RETRIEVERS.items() if entry.fusable and not entry.foreign]


def stores() -> list[str]:
    """The retrievers that return passages of their own chunking (goldenset.scoring.stores)."""
    return [name for name, entry in RETRIEVERS.items() if entry.foreign]


def model_free() -> set[str]:
    return {name for name, entry in RETRIEVERS.items() if entry.model_free}


def exact_search() -> tuple[str, RetrieverEntry]:
    """The retriever whose lists are exact search over the embeddings."""
    return next((name, entry) for name, entry in RETRIEVERS.items() if entry.exact)


def load_retrievers(params: BaseModel) -> dict[str, Any]:
    """What each enabled retriever of params.yaml `retrievers:` reads from outside, by name."""
    loaded: dict[str, Any] = {}
    for name, entry in RETRIEVERS.items():
        settings = getattr(params, name)
        if settings.enabled and entry.load is not None:
            loaded[name] = entry.load(settings)
    return loaded


def build_retrievers(
    params: BaseModel, corpus: Corpus, device: Any = "cpu", loaded: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The enabled retrievers of params.yaml `retrievers:` over a corpus, by name, in ranking
    order.

    device: where exact dense scoring runs (score.device, resolved); loaded: what
    :func:`load_retrievers` read (None: read it now)."""
    if loaded is None:
        loaded = load_retrievers(params)
    built: dict[str, Any] = {}
    for name in ranking_order():
        settings = getattr(params, name)
        if settings.enabled:
            built[name] = RETRIEVERS[name].build(settings, corpus, device, loaded.get(name))
    return built


def fused_sections(params: BaseModel) -> Mapping[str, list[str]]:
    """The retrievers each fusing retriever fuses (its `fuse` param), enabled or not."""
    return {
        name: list(getattr(params, name).fuse)
        for name, entry in RETRIEVERS.items()
        if not entry.fusable and not entry.foreign
    }
