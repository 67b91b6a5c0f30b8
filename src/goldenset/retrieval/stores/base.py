"""What every store adapter shares: its params section, the :class:`Store` it opens, and the
asking, a batch at a time, through a cache of answers keyed by the store's identity and the
question.

A live store is not a file: DVC cannot see its state. What re-runs score is the adapter's params
section (any field) and its ``version``, a string the team bumps when the store's content changes;
an unchanged re-run reads every answer from the cache and does not even connect. A new
``version`` is a new identity, so it asks every question again (the way to force a re-query).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import Field

from goldenset.core.errors import GoldensetError
from goldenset.core.install import install_command
from goldenset.retrieval.locate import Passage
from goldenset.retrieval.retrievers.base import PassagesSection, RetrieverEntry
from goldenset.retrieval.team_code import first_line

LISTED = "chunks"  # the cache key of the store's listed chunks


class StoreSection(PassagesSection):
    """The fields every store adapter's section of params.yaml `retrievers:` has."""

    doc_id_key: str = Field(
        "doc_id", min_length=1, description="the metadata key that holds a passage's document id"
    )
    version: str = Field(
        "",
        description="bump it when the store's content changes: score re-runs and asks the store "
        "again; otherwise its answers come from the cache",
    )
    batch_size: int = Field(64, gt=0, description="questions a call; each call's answers are kept")
    max_fetch: int = Field(
        1000,
        gt=0,
        description="the most passages a question is asked for: asked deeper until they name "
        "score.depth distinct documents, as goldenset's own retrievers rank",
    )
    min_located: float = Field(
        0.95, ge=0, le=1, description="warn when a smaller share of its passages is located"
    )
    cache_dir: str = Field(
        "cache/retrievers", min_length=1, description="the store's answers by question"
    )

    # fields that only say how the store is asked (a timeout, where a key is read): a change to
    # one changes no answer, so no re-query
    asking_only: ClassVar[frozenset[str]] = frozenset()

    def identity_fields(self) -> dict[str, Any]:
        """What changes an answer: every field but those that only say how it is asked."""
        asking = {"enabled", "batch_size", "max_fetch", "min_located", "cache_dir"}
        asking |= self.asking_only
        return self.model_dump(exclude=asking)


@dataclass(frozen=True)
class Hit(Passage):
    """One ranked result of a store: a :class:`Passage`, its score (None: ranks by place) and
    the store's own id for it, when it has one."""

    score: float | None = None
    chunk_id: str | None = None

    def row(self) -> list:
        """As the cache keeps it."""
        return [self.doc_id, self.text, self.start, self.end, self.score, self.chunk_id]

    @classmethod
    def of_row(cls, row: Sequence) -> Hit:
        return cls(*row)


class Store(Protocol):
    """An open store. ``described`` names it in every message ("Chroma collection 'docs' at
    localhost:8000")."""

    described: str

    def search(self, texts: list[str], k: int) -> list[list[Hit]]:
        """The best ``k`` passages of each question, best first, one list per question."""
        ...

    def chunks(self) -> list[Hit] | None:
        """Every chunk the store holds (its whole chunking), or None when it cannot list them."""
        ...

    # optional: close() lets go of the store once every question is asked


# (its params section) -> the open store; raises GoldensetError with one line naming the store
# and what to check when it cannot reach it
Opener = Callable[[Any], Store]


@dataclass
class StoreSource:
    """What score reads of a store: how to open it (only when an answer is not cached yet), its
    answers so far, and how many questions it is asked a call."""

    opener: Callable[[], Store]
    cache: Any  # goldenset.retrieval.query_cache.QueryCache
    settings: StoreSection
    _store: Store | None = None

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = self.opener()
        return self._store

    def close(self) -> None:
        """Let go of the store, when it was opened (a Qdrant folder admits one client a
        process, a database holds a connection)."""
        close = getattr(self._store, "close", None)
        if callable(close):
            close()
        self._store = None


def store_loader(opener: Opener, kind: str) -> Callable[[StoreSection], StoreSource]:
    """A registry entry's ``load``: the store's cache opened, the store itself left closed."""

    def load(settings: StoreSection) -> StoreSource:
        import json

        from goldenset.retrieval.query_cache import QueryCache, digest

        identity = digest(kind, json.dumps(settings.identity_fields(), sort_keys=True))
        cache = QueryCache.open(Path(settings.cache_dir), identity)
        return StoreSource(lambda: opener(settings), cache, settings)

    return load


def store_entry(params: type[StoreSection], opener: Opener, name: str) -> RetrieverEntry:
    """A store adapter's registry entry: RETRIEVERS.register(name, store_entry(...)). It reads no
    goldenset embedding; its section (a PassagesSection) has it scored over its own chunking."""
    return RetrieverEntry(
        params, build_answered, order=50, model_free=True, load=store_loader(opener, name)
    )


def ask_store(name: str, source: StoreSource, texts: list[str], k: int) -> list[list[Hit]]:
    """Each question's ``k`` best passages, from the cache or from the store a batch at a time;
    each batch's answers are kept, so a failure loses none of them."""
    from goldenset.retrieval.query_cache import digest
    from goldenset.retrieval.team_code import ask_missing

    def ask(asked: list[str]) -> list[list]:
        answer = _call(name, source, lambda: source.store.search(asked, k))
        if not isinstance(answer, Sequence) or len(answer) != len(asked):
            raise GoldensetError(
                f"retrievers.{name}: {source.store.described} answered {len(answer)} lists for "
                f"{len(asked)} questions"
            )
        return [[hit.row() for hit in hits] for hits in answer]

    keys = [digest(str(k), text) for text in texts]
    rows = ask_missing(source.cache, keys, texts, source.settings.batch_size, f"{name} store", ask)
    return [[Hit.of_row(row) for row in answer] for answer in rows]


def listed_chunks(name: str, source: StoreSource) -> list[Hit] | None:
    """Every chunk of the store (cached like its answers), or None when it cannot list them."""
    rows = source.cache.get(LISTED)
    if rows is None:
        chunks = _call(name, source, source.store.chunks)
        rows = False if chunks is None else [hit.row() for hit in chunks]
        source.cache.put(LISTED, rows)
    return None if rows is False else [Hit.of_row(row) for row in rows]


def _call(name: str, source: StoreSource, call: Callable[[], Any]) -> Any:
    """A call to the store: a fault the adapter did not name becomes one line naming the store;
    the answers already given are kept for the next run."""
    try:
        return call()
    except GoldensetError:
        raise
    except Exception as error:  # the store, its client or the user's code: any error
        kept = len(source.cache.answers)
        described = source._store.described if source._store is not None else f"retrievers.{name}"
        raise GoldensetError(
            f"retrievers.{name}: {described} failed ({first_line(error)}); check "
            f"that it is up and its params are right: the {kept} answers it gave are kept and the "
            "next run asks only the rest"
        ) from error


class CollectionSection(Protocol):
    """The section of a store that keeps collections on a server or in a folder."""

    enabled: bool
    path: str | None
    collection: str | None


def one_place(section: CollectionSection, server: str, store: str, folder: str) -> None:
    """An enabled collection store is reached one way, its server (the field ``server``) or its
    folder (``path``), and names its collection; a ValueError, so that pydantic reports it as the
    section's."""
    if not section.enabled:
        return
    if (getattr(section, server) is None) == (section.path is None):
        raise ValueError(f"set exactly one of {server} (a {store} server) and path ({folder})")
    if section.collection is None:
        raise ValueError(f"set collection: the name of the {store} collection to search")


def required(metadata: dict[str, Any] | None, key: str, name: str, described: str) -> str:
    """A passage's document id from its metadata; one line naming the key to set when absent."""
    value = (metadata or {}).get(key)
    if value is None:
        keys = sorted(metadata or {})
        raise GoldensetError(
            f"retrievers.{name}: a result of {described} has no metadata key {key!r}: set "
            f"retrievers.{name}.doc_id_key to the key that holds its document id"
            + (f" (its keys: {', '.join(map(str, keys))})" if keys else " (it has no metadata)")
        )
    return str(value)


def offset(metadata: dict[str, Any] | None, key: str | None) -> int | None:
    """An integer offset from metadata (a splitter's start_index), None when absent."""
    if not key or not metadata:
        return None
    value = metadata.get(key)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def unknown_name(
    name: str, what: str, given: str, existing: Sequence[str], param: str | None = None
) -> GoldensetError:
    """One line for a collection or table that does not exist, listing those that do (and the
    param to set to one of them)."""
    names = ", ".join(sorted(map(str, existing))) or "none"
    fix = f": set retrievers.{name}.{param} to one of them" if param and existing else ""
    return GoldensetError(f"retrievers.{name}: no {what} {given!r}; it has: {names}{fix}")


def needs(module: str, extra: str, name: str) -> Any:
    """A store's client library, imported; one line naming the extra when it is not installed."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise GoldensetError(
            f"retrievers.{name} needs {module}: {install_command(extra)}"
        ) from None


def query_encoder(model: str) -> Callable[[list[str]], Any]:
    """The packaged (offline) model that embeds questions for a store that keeps vectors only."""
    from goldenset.core.params import EmbedParams
    from goldenset.embedding.encoder import load_encoder

    encode, _ = load_encoder(EmbedParams(model=model))
    return encode


@dataclass(frozen=True)
class Answers:
    """A store's answers placed on its own chunking: each question's chunk ids with their
    scores, best first (goldenset.scoring.store_chunking makes them)."""

    ranked: dict[str, list[tuple[str, float]]]  # question text -> (chunk id, score)
    origin: str  # retrievers.<name>, for messages


class AnsweredStore:
    """A store's placed answers as a retriever over its own chunks (a run of their ids)."""

    def __init__(self, corpus: Any, answers: Answers) -> None:
        self.corpus, self.answers = corpus, answers

    def rank(self, queries: Any, depth: int) -> Any:
        """Each question's whole answer: it was asked deep enough for ``depth`` documents
        (goldenset.retrieval.stores.deepen)."""
        from goldenset.retrieval.run import Run
        from goldenset.retrieval.team_code import parse_ranked_ids

        lists = [self.answers.ranked.get(text, []) for text in queries.texts]
        found = parse_ranked_ids(lists, self.corpus.chunk_ids, len(lists), self.answers.origin)
        return Run(self.corpus.chunk_ids, found)


def build_answered(settings: StoreSection, corpus: Any, device: Any, loaded: Answers) -> Any:
    """Every store entry's ``build``: its answers, placed, over its own chunks."""
    return AnsweredStore(corpus, loaded)
