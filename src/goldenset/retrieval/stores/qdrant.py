"""qdrant: a team's Qdrant collection, scored with its own chunks (the `qdrant` extra).

It reaches a server (``url``) or opens a local-mode folder (``path``: qdrant-client's own embedded
store, which one client at a time may open). Questions are embedded here, by the packaged offline
model named in ``model`` (the one that embedded the collection).

A point's text is the payload key ``text_key``; its document id ``doc_id_key`` and its offsets
``start_key`` and ``end_key`` sit at the top of the payload, or under ``metadata_key`` (LangChain's
QdrantVectorStore keeps ``page_content`` and ``metadata`` so).
"""

from __future__ import annotations

import os
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

NAME = "qdrant"
PAGE = 1000  # points a `scroll` call while listing the collection
DISTANCES = ("Euclid", "Manhattan")  # Qdrant's scores that are distances: smaller is better


class QdrantParams(StoreSection):
    url: str | None = Field(
        None, min_length=1, description="a Qdrant server, e.g. http://localhost:6333; or path"
    )
    path: str | None = Field(None, min_length=1, description="a local-mode Qdrant folder; or url")
    api_key_env: str | None = Field(
        None, min_length=1, description="the environment variable holding the server's API key"
    )
    collection: str | None = Field(None, min_length=1, description="the collection's name")
    vector_name: str | None = Field(
        None, min_length=1, description="the named vector to search (null: the unnamed one)"
    )
    model: str = Field(
        "sentence-transformers/all-MiniLM-L6-v2",
        min_length=1,
        description="the offline sentence-transformers model that embedded the collection: it "
        "embeds the questions",
    )
    text_key: str = Field("text", min_length=1, description="the payload key of a point's text")
    metadata_key: str | None = Field(
        None,
        min_length=1,
        description="the payload key under which doc_id_key, start_key and end_key sit "
        "(LangChain: metadata); null: the payload itself",
    )
    start_key: str | None = Field(
        "start_index", description="the metadata key of a chunk's start offset (null: none)"
    )
    end_key: str | None = Field(None, description="the metadata key of its end offset")
    timeout_s: int = Field(60, gt=0, description="seconds a request to the server may take")

    asking_only = frozenset({"timeout_s", "api_key_env"})

    @model_validator(mode="after")
    def _one_place(self) -> QdrantParams:
        one_place(self, "url", "Qdrant", "a local folder")
        return self


class QdrantStore:
    """An open collection; the question encoder is loaded at the first search only (listing
    the chunks needs none)."""

    def __init__(self, client: Any, settings: QdrantParams, size: int, distance: str) -> None:
        self.client, self.settings, self.size = client, settings, size
        self.name = str(settings.collection)
        self.described = f"Qdrant collection {self.name!r} {place(settings)}"
        self._sign = -1.0 if distance in DISTANCES else 1.0  # higher is better
        self._encode: Callable[[list[str]], Any] | None = None

    def close(self) -> None:
        """A local folder admits one client a process: let the next one open it."""
        self.client.close()

    def search(self, texts: list[str], k: int) -> list[list[Hit]]:
        from qdrant_client import models

        vectors = self.vectors(texts)
        using = self.settings.vector_name
        requests = [
            models.QueryRequest(query=vector.tolist(), limit=k, with_payload=True, using=using)
            for vector in vectors
        ]
        with asking(self.settings):  # one request for the batch
            answers = self.client.query_batch_points(self.name, requests=requests)
        return [
            [self.hit(point.id, point.payload, self._sign * point.score) for point in answer.points]
            for answer in answers
        ]

    def vectors(self, texts: list[str]) -> Any:
        """The questions embedded, checked against the collection's vector size."""
        if self._encode is None:
            self._encode = query_encoder(self.settings.model)
        vectors = self._encode(texts)
        if vectors.shape[1] != self.size:
            raise GoldensetError(
                f"retrievers.{NAME}: {self.described} holds vectors of {self.size} dimensions, "
                f"{self.settings.model!r} makes {vectors.shape[1]}: set retrievers.{NAME}.model "
                "to the model that embedded it"
            )
        return vectors

    def chunks(self) -> list[Hit]:
        hits: list[Hit] = []
        after = None
        while True:
            with asking(self.settings):
                points, after = self.client.scroll(
                    self.name, limit=PAGE, offset=after, with_payload=True, with_vectors=False
                )
            hits += [self.hit(point.id, point.payload, None) for point in points]
            if after is None:
                return hits

    def hit(self, point_id: Any, payload: dict[str, Any] | None, score: float | None) -> Hit:
        settings, payload = self.settings, payload or {}
        metadata = payload.get(settings.metadata_key) if settings.metadata_key else payload
        if not isinstance(metadata, dict):
            metadata = None  # required() then names the key: the point has no metadata
        return Hit(
            required(metadata, settings.doc_id_key, NAME, self.described),
            self.text(payload),
            offset(metadata, settings.start_key),
            offset(metadata, settings.end_key),
            score,
            str(point_id),
        )

    def text(self, payload: dict[str, Any]) -> str:
        text = payload.get(self.settings.text_key)
        if not isinstance(text, str):
            keys = ", ".join(sorted(map(str, payload))) or "none"
            raise GoldensetError(
                f"retrievers.{NAME}: a point of {self.described} has no text under payload key "
                f"{self.settings.text_key!r}: set retrievers.{NAME}.text_key to the key that "
                f"holds it (its keys: {keys})"
            )
        return text


def place(settings: QdrantParams) -> str:
    return f"at {settings.url}" if settings.url is not None else f"in {settings.path}"


def unreachable(settings: QdrantParams) -> GoldensetError:
    return GoldensetError(
        f"retrievers.{NAME}: cannot reach the Qdrant server at {settings.url}: start it "
        f"(`docker run -p 6333:6333 qdrant/qdrant`) or fix retrievers.{NAME}.url"
    )


@contextmanager
def asking(settings: QdrantParams) -> Iterator[None]:
    """A call to Qdrant: a server that is down or silent, or one that refuses the key, become
    one line naming the param to fix."""
    import httpx
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    try:
        yield
    except httpx.TransportError:
        raise unreachable(settings) from None
    except ResponseHandlingException as error:  # how qdrant-client wraps a transport error
        if not isinstance(error.source, (httpx.TransportError, OSError)):
            raise
        raise unreachable(settings) from None
    except UnexpectedResponse as error:
        if error.status_code not in (401, 403):
            raise
        raise GoldensetError(
            f"retrievers.{NAME}: the Qdrant server at {settings.url} refused the request "
            f"({error.status_code}): set retrievers.{NAME}.api_key_env to the environment "
            "variable that holds its API key"
        ) from None


def connect(settings: QdrantParams) -> Any:
    """A client of the server or the local folder; a folder that is not there is an error, not
    a new empty store that would answer nothing."""
    from qdrant_client import QdrantClient

    if settings.url is not None:
        # no version check: it is one more request, and a warning on every open
        return QdrantClient(
            url=settings.url,
            api_key=api_key(settings),
            timeout=settings.timeout_s,
            check_compatibility=False,
        )
    if not Path(str(settings.path)).is_dir():
        raise GoldensetError(
            f"retrievers.{NAME}.path: no Qdrant folder {settings.path}: set it to the folder "
            "of the local-mode collection"
        )
    try:
        return QdrantClient(path=settings.path)
    except RuntimeError as error:  # local mode locks its folder to one client
        if "already accessed" not in str(error):
            raise
        raise GoldensetError(
            f"retrievers.{NAME}.path: {settings.path} is open in another Qdrant client (local "
            "mode allows one at a time): close it, or serve the folder from a Qdrant server and "
            f"set retrievers.{NAME}.url"
        ) from None


def api_key(settings: QdrantParams) -> str | None:
    """The key from the environment: a secret never sits in params.yaml."""
    if settings.api_key_env is None:
        return None
    key = os.environ.get(settings.api_key_env)
    if not key:
        raise GoldensetError(
            f"retrievers.{NAME}.api_key_env: the environment variable {settings.api_key_env} is "
            "not set: export the Qdrant API key in it"
        )
    return key


def vector_params(info: Any, settings: QdrantParams) -> Any:
    """The searched vector's size and distance; a named vector that is not there is named."""
    vectors = info.config.params.vectors
    if not isinstance(vectors, dict):
        vectors = {"": vectors}  # one unnamed vector
    wanted = settings.vector_name or ""
    if wanted not in vectors:
        names = ", ".join(repr(name) if name else "null (unnamed)" for name in sorted(vectors))
        missing = f"vector {wanted!r}" if wanted else "unnamed vector"
        raise GoldensetError(
            f"retrievers.{NAME}.vector_name: collection {settings.collection!r} "
            f"{place(settings)} has no {missing}: set it to one of {names}"
        )
    return vectors[wanted]


def open_qdrant(settings: QdrantParams) -> QdrantStore:
    """The collection, opened; one line naming what to fix when it cannot be."""
    client = connect(settings)
    try:
        vector = searched_vector(client, settings)
    except BaseException:
        client.close()  # a local folder stays locked to this process until its client closes
        raise
    distance = getattr(vector.distance, "value", str(vector.distance))
    return QdrantStore(client, settings, vector.size, distance)


def searched_vector(client: Any, settings: QdrantParams) -> Any:
    """The collection's vector that is searched (its size and distance)."""
    name = str(settings.collection)
    with asking(settings):
        if not client.collection_exists(name):
            existing = [collection.name for collection in client.get_collections().collections]
            raise unknown_name(
                NAME, f"collection {place(settings)} named", name, existing, "collection"
            )
        info = client.get_collection(name)
    return vector_params(info, settings)


RETRIEVERS.register(NAME, store_entry(QdrantParams, open_qdrant, NAME))
