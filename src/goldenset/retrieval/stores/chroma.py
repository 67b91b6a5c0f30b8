"""chroma: a team's Chroma collection, scored with its own chunks (the `chroma` extra).

It reaches a running server (chromadb.HttpClient: host, port) or opens a persistent folder
(chromadb.PersistentClient: path). Questions are embedded here, by the packaged offline model
named in ``model`` (the one that embedded the collection), and Chroma is asked with
``query_embeddings`` only: Chroma's own default embedding function downloads an ONNX model, which
a pipeline that never reaches a model hub cannot do.

Each result's document id is the metadata key ``doc_id_key``; its offsets, when the splitter kept
them, ``start_key`` (LangChain's ``add_start_index=True`` writes ``start_index``) and ``end_key``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.retrievers.base import RETRIEVERS
from goldenset.retrieval.stores.base import (
    Hit,
    StoreSection,
    offset,
    one_place,
    query_encoder,
    required,
    store_entry,
    unknown_name,
)

NAME = "chroma"
PAGE = 1000  # chunks a `get` call while listing the collection: bounded requests on any size
INCLUDED = ["documents", "metadatas", "distances"]


class ChromaParams(StoreSection):
    host: str | None = Field(
        None, min_length=1, description="a running Chroma server (chromadb.HttpClient); or path"
    )
    port: int = Field(8000, gt=0, lt=65536, description="the server's port")
    path: str | None = Field(
        None,
        min_length=1,
        description="a persistent Chroma folder (chromadb.PersistentClient); or host",
    )
    collection: str | None = Field(None, min_length=1, description="the collection's name")
    model: str = Field(
        "sentence-transformers/all-MiniLM-L6-v2",
        min_length=1,
        description="the offline sentence-transformers model that embedded the collection: it "
        "embeds the questions",
    )
    start_key: str | None = Field(
        "start_index", description="the metadata key of a chunk's start offset (null: none)"
    )
    end_key: str | None = Field(None, description="the metadata key of its end offset")
    timeout_s: float = Field(60, gt=0, description="seconds a request to the server may take")

    asking_only = frozenset({"timeout_s"})

    @model_validator(mode="after")
    def _one_place(self) -> ChromaParams:
        one_place(self, "host", "Chroma", "a Chroma folder")
        return self


class ChromaStore:
    """An open collection; the question encoder is loaded at the first search only (listing
    the chunks needs none)."""

    def __init__(self, collection: Any, settings: ChromaParams, described: str) -> None:
        self.collection, self.settings, self.described = collection, settings, described
        self._encode: Callable[[list[str]], Any] | None = None
        self._score = scorer(collection)

    def search(self, texts: list[str], k: int) -> list[list[Hit]]:
        if self._encode is None:
            self._encode = query_encoder(self.settings.model)
        vectors = self._encode(texts)
        with asking(self.settings):
            response = self.collection.query(
                query_embeddings=vectors, n_results=k, include=INCLUDED
            )
        columns = [response[key] for key in ("ids", "documents", "metadatas", "distances")]
        return [  # per question, per result: (id, document, metadata, distance)
            [self.hit(*result[:3], self._score(result[3])) for result in zip(*row, strict=True)]
            for row in zip(*columns, strict=True)
        ]

    def chunks(self) -> list[Hit]:
        hits: list[Hit] = []
        while True:
            with asking(self.settings):
                page = self.collection.get(
                    include=["documents", "metadatas"], limit=PAGE, offset=len(hits)
                )
            ids = page["ids"]
            documents = page["documents"] or [None] * len(ids)
            metadatas = page["metadatas"] or [None] * len(ids)
            hits += [
                self.hit(*result, None) for result in zip(ids, documents, metadatas, strict=True)
            ]
            if len(ids) < PAGE:
                return hits

    def hit(self, chunk_id: str, text: str | None, metadata: Any, score: float | None) -> Hit:
        settings = self.settings
        return Hit(
            required(metadata, settings.doc_id_key, NAME, self.described),
            text or "",  # a collection kept without documents: placed by its offsets alone
            offset(metadata, settings.start_key),
            offset(metadata, settings.end_key),
            score,
            str(chunk_id),
        )


def scorer(collection: Any) -> Callable[[float], float]:
    """Higher is better: a cosine or inner-product distance (1 - similarity) back to the
    similarity, any other (squared L2) negated."""
    configuration = getattr(collection, "configuration_json", None) or {}
    index = configuration.get("hnsw") or configuration.get("spann") or {}
    space = index.get("space") or (collection.metadata or {}).get("hnsw:space") or "l2"
    if space in ("cosine", "ip"):
        return lambda distance: 1.0 - float(distance)
    return lambda distance: -float(distance)


def place(settings: ChromaParams) -> str:
    return str(settings.path) if settings.path is not None else f"{settings.host}:{settings.port}"


def unreachable(settings: ChromaParams) -> GoldensetError:
    return GoldensetError(
        f"retrievers.{NAME}: cannot reach the Chroma server at {place(settings)}: start it "
        f"(`chroma run --path <folder> --port {settings.port}`) or fix "
        f"retrievers.{NAME}.host/port"
    )


@contextmanager
def asking(settings: ChromaParams) -> Iterator[None]:
    """A call to Chroma: a server that is down or silent, or question vectors of the wrong size,
    become one line naming the param to fix."""
    import httpx
    from chromadb.errors import InvalidArgumentError

    try:
        yield
    except httpx.TransportError:  # refused, reset, timed out
        raise unreachable(settings) from None
    except ValueError as error:  # how chromadb.HttpClient says "refused"
        if "Could not connect to a Chroma server" not in str(error):
            raise
        raise unreachable(settings) from None
    except InvalidArgumentError as error:
        if "dimension" not in str(error):
            raise
        raise GoldensetError(
            f"retrievers.{NAME}: Chroma collection {settings.collection!r} at {place(settings)} "
            f"holds vectors of another size than {settings.model!r} makes ({error}): set "
            f"retrievers.{NAME}.model to the model that embedded it"
        ) from None


def connect(settings: ChromaParams) -> Any:
    """A client of the server or folder; a folder that is not there is an error, not a new
    empty store that would answer nothing."""
    import chromadb
    from chromadb.config import Settings

    quiet = Settings(anonymized_telemetry=False)
    if settings.path is not None:
        if not Path(settings.path).is_dir():
            raise GoldensetError(
                f"retrievers.{NAME}.path: no Chroma folder {settings.path}: set it to the folder "
                "the collection was persisted in"
            )
        return chromadb.PersistentClient(path=settings.path, settings=quiet)
    with asking(settings):
        probe(settings)
        client = chromadb.HttpClient(host=str(settings.host), port=settings.port, settings=quiet)
    bound_time(client, settings.timeout_s)
    return client


def probe(settings: ChromaParams) -> None:
    """The server's heartbeat, within timeout_s: chromadb's own client waits forever on a
    server that accepts connections and never answers."""
    import httpx

    httpx.get(
        f"http://{settings.host}:{settings.port}/api/v2/heartbeat", timeout=settings.timeout_s
    )


def bound_time(client: Any, seconds: float) -> None:
    """Give the client's HTTP session a timeout (chromadb creates it with none); left as it is
    when a chromadb version keeps it elsewhere."""
    import httpx

    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(seconds)


def open_chroma(settings: ChromaParams) -> ChromaStore:
    """The collection, opened; one line naming what to fix when it cannot be."""
    from chromadb.errors import NotFoundError

    client = connect(settings)
    name = str(settings.collection)
    with asking(settings):
        try:
            # no embedding function: Chroma's default would load (download) its ONNX model
            collection = client.get_collection(name, embedding_function=None)
        except NotFoundError:
            existing = [getattr(listed, "name", listed) for listed in client.list_collections()]
            raise unknown_name(
                NAME, f"collection at {place(settings)} named", name, existing, "collection"
            ) from None
    return ChromaStore(collection, settings, f"Chroma collection {name!r} at {place(settings)}")


RETRIEVERS.register(NAME, store_entry(ChromaParams, open_chroma, NAME))
