"""What every retriever shares: the interface (:class:`Retriever`: :class:`Queries` and a depth
to a :class:`Run` keyed by id; :class:`Fusion`: runs to a run), the params section it extends
(:class:`RetrieverSection`, whose class also says which kind it is) and the registry
(:data:`RETRIEVERS`), in which each retriever's module declares its :class:`RetrieverEntry`.

Everything else is derived from :data:`RETRIEVERS`: the params sections and their validation
(goldenset.retrieval.params), the order retrievers rank in, the retrievers
`goldenset calibrate` accepts, and the plot (a colour per retriever scored, whatever its name).

Nothing here imports numpy, torch or faiss: goldenset.retrieval.params reads the
registry, and reading params must stay fast. A retriever's module imports them inside the
functions that rank.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from goldenset.core.errors import GoldensetError
from goldenset.core.registry import Registry
from goldenset.retrieval.run import Corpus, Queries, Run


class Retriever(Protocol):
    """What every retriever is: questions and a depth to a :class:`Run`."""

    def rank(self, queries: Queries, depth: int) -> Run | None:
        """Up to ``depth`` ids per query, best first: chunk ids of the corpus it was built
        over, or document ids (a run file of documents); None when it holds no run of these
        questions (a run file of other queries)."""
        ...


class Fusion(Protocol):
    """A retriever made of the runs of others (``fuses``, their names): a function from runs to a
    run."""

    fuses: Sequence[str]

    def fuse(self, runs: Sequence[Run], depth: int) -> Run: ...


class RetrieverSection(BaseModel):
    """A retriever's section of params.yaml `retrievers:`; every one can be switched off."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True


class FusionSection(RetrieverSection):
    """The section of a retriever whose build returns a :class:`Fusion`: `fuse` names the
    retrievers whose runs it fuses (checked by goldenset.retrieval.params)."""

    fuse: list[str] = Field(min_length=2)


class PassagesSection(RetrieverSection):
    """The section of a retriever that answers with passages of its own chunking (a store:
    goldenset.retrieval.stores), placed in the documents and scored over that chunking."""

    enabled: bool = False


# (its params section, a Corpus, a torch device, what its `load` read or None) -> a Retriever
Builder = Callable[[Any, Corpus, Any, Any], "Retriever | Fusion"]
# (its params section) -> what it reads from outside the pipeline's files (a run file, a module):
# read at the edge (goldenset.scoring.configuration.read_score_inputs), so scoring reads no file
Load = Callable[[Any], Any]


@dataclass(frozen=True)
class RetrieverEntry:
    """A retriever as the pipeline knows it: RETRIEVERS.register("name", RetrieverEntry(...)).

    What kind it is, its params section says: a :class:`FusionSection` fuses others' runs, a
    :class:`PassagesSection` answers with passages of its own chunking."""

    params: type[RetrieverSection]  # its section of params.yaml `retrievers:`
    build: Builder
    # where it ranks, and lists in the outputs, among the registered retrievers (a fusion after
    # what it fuses): lower first (equal orders keep the order of registration)
    order: int = 100
    model_free: bool = False  # reads no embedding: calibrate scores it with the first model only
    # the retriever whose exact search it approximates: the evaluator measures what it misses
    # against that run (recall_loss@k), ranked for it when that retriever is off
    approximates: str | None = None
    load: Load | None = None


# Filled by the modules of goldenset.retrieval.retrievers and by plugins (goldenset.retrievers
# entry points) when first read, in `order`.
RETRIEVERS: Registry[RetrieverEntry] = Registry(
    "retriever", "retrievers", ["goldenset.retrieval.retrievers", "goldenset.retrieval.stores"]
)


def _of_kind(section: type[RetrieverSection]) -> list[str]:
    return [name for name, entry in RETRIEVERS.items() if issubclass(entry.params, section)]


def fusions() -> list[str]:
    """The retrievers that fuse others' runs."""
    return _of_kind(FusionSection)


def stores() -> list[str]:
    """The retrievers that answer with passages of their own chunking (retrieval.stores)."""
    return _of_kind(PassagesSection)


def fusable() -> list[str]:
    """The retrievers whose runs a fusion may fuse: those that rank goldenset's own chunks."""
    other = {*fusions(), *stores()}
    return [name for name in RETRIEVERS.names() if name not in other]


def ranking_order() -> list[str]:
    """Registered names, those a fusion reads first, stores last."""
    return fusable() + fusions() + stores()


def model_free() -> set[str]:
    return {name for name, entry in RETRIEVERS.items() if entry.model_free}


def load_retrievers(params: BaseModel) -> dict[str, Any]:
    """What each enabled retriever of params.yaml `retrievers:` reads from outside, by name."""
    loaded: dict[str, Any] = {}
    for name, entry in RETRIEVERS.items():
        settings = getattr(params, name)
        if settings.enabled and entry.load is not None:
            loaded[name] = entry.load(settings)
    return loaded


def build_retrievers(
    params: BaseModel,
    corpus: Corpus,
    device: Any = "cpu",
    loaded: Mapping[str, Any] | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The enabled retrievers of params.yaml `retrievers:` over a corpus, by name, in ranking
    order.

    device: where exact dense scoring runs (score.device, resolved); loaded: what
    :func:`load_retrievers` read (None: read it now); names: those to build (None: all)."""
    if loaded is None:
        loaded = load_retrievers(params)
    built: dict[str, Any] = {}
    for name in ranking_order():
        settings = getattr(params, name)
        if settings.enabled and (names is None or name in names):
            built[name] = RETRIEVERS[name].build(settings, corpus, device, loaded.get(name))
    return built


def build_references(
    params: BaseModel, corpus: Corpus, built: Mapping[str, Any], device: Any = "cpu"
) -> dict[str, Any]:
    """The exact searches the built retrievers approximate that are not built themselves: ranked
    as references only, never scored."""
    wanted = {RETRIEVERS[name].approximates for name in built} - {None, *built}
    return {
        name: RETRIEVERS[name].build(getattr(params, name), corpus, device, None)
        for name in ranking_order()
        if name in wanted
    }


def rank_all(retrievers: Mapping[str, Any], queries: Queries, depth: int) -> dict[str, Run]:
    """Every retriever's run on one query set, in ranking order (a retriever with no run of
    these questions is left out); a fusion fuses the runs ranked before it."""
    runs: dict[str, Run] = {}
    fusing = set(fusions())
    for name, retriever in retrievers.items():
        if name in fusing:
            missing = [other for other in retriever.fuses if other not in runs]
            if missing:
                raise GoldensetError(
                    f"retrievers.{name}: {missing} ranked nothing for the {queries.name} "
                    "queries, so they cannot be fused; fuse other retrievers"
                )
            runs[name] = retriever.fuse([runs[other] for other in retriever.fuses], depth)
            continue
        run = _ranked(name, retriever, queries, depth)
        if run is not None:
            runs[name] = run
    return runs


def _ranked(name: str, retriever: Retriever, queries: Queries, depth: int) -> Run | None:
    """One retriever's run, with one line for a plugin written against the interface before
    runs were keyed by id (it read ``queries.judged`` and returned item indices)."""
    try:
        run = retriever.rank(queries, depth)
    except AttributeError as error:
        if not _reads_judged(error, queries):
            raise  # the plugin's own error, with its traceback
        raise _old_interface(name) from None
    if run is not None and not isinstance(run, Run):
        raise _old_interface(name)
    if run is not None:
        _check_positions(name, run, len(queries.qids))
    return run


def _reads_judged(error: AttributeError, queries: Queries) -> bool:
    """The error is the earlier interface itself: reading ``judged`` of the very Queries given
    (known by the attribute and the object Python names, not by the message, which any other
    error may share)."""
    return error.name == "judged" and error.obj is queries


def _check_positions(name: str, run: Run, n_queries: int) -> None:
    """A run's rows are the questions and its positions point into its ids (-1 pads): a
    position past the list, or below -1 (which numpy would read from the end), is one line."""
    indices = run.found.indices
    if (
        indices.ndim != 2
        or indices.shape[0] != n_queries
        or run.found.scores.shape != indices.shape
    ):
        raise GoldensetError(
            f"retrievers.{name}: its run has {indices.shape} positions and "
            f"{run.found.scores.shape} scores for {n_queries} questions; return one row of each "
            "per question"
        )
    if indices.size and (indices.min() < -1 or indices.max() >= len(run.ids)):
        raise GoldensetError(
            f"retrievers.{name}: its run points outside its {len(run.ids)} ids (positions "
            f"{indices.min()} to {indices.max()}); positions are 0 to {len(run.ids) - 1}, "
            "-1 for padding"
        )


def _old_interface(name: str) -> GoldensetError:
    return GoldensetError(
        f"retrievers.{name}: its rank() is written for the earlier interface (it reads "
        "queries.judged, or returns a TopK of item indices); rank(queries, depth) now takes "
        "Queries (qids, texts, vectors) and returns Run(corpus.chunk_ids, top_k(...)), keyed "
        "by id: see 'A retriever plugin in full' on the development page"
    )


def fused_sections(params: BaseModel) -> Mapping[str, list[str]]:
    """The retrievers each fusion fuses (its `fuse` param), enabled or not."""
    return {name: list(getattr(params, name).fuse) for name in fusions()}
