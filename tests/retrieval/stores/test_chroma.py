"""The Chroma store against a real server (tests.support.chroma_server, or CI's shared one,
GOLDENSET_TEST_CHROMA_URL) and a real persistent folder: it ranks as exact cosine search over
MiniLM vectors, lists every chunk, each fault is one line naming what to fix, and a re-run reads
its answers from the cache without opening the store."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from goldenset.retrieval.stores import chroma
from goldenset.retrieval.stores.base import ask_store, listed_chunks, store_loader
from goldenset.retrieval.stores.chroma import ChromaParams, open_chroma
from tests.retrieval.stores.store_checks import PARAGRAPH_QUESTIONS as QUESTIONS
from tests.retrieval.stores.store_checks import (
    assert_identity_is_what_changes_an_answer,
    assert_one_place_and_collection,
    assert_params_do_not_import,
    assert_registered_off_by_default,
    exact_ranking,
    listed,
    one_line,
)
from tests.retrieval.stores.team_corpus import DOCUMENTS, embed
from tests.support.chroma_server import start_chroma
from tests.support.s3_server import free_port

chromadb = pytest.importorskip("chromadb")


class Chunk(NamedTuple):
    chunk_id: str
    doc_id: str
    text: str
    start: int


def paragraphs() -> list[Chunk]:
    """The team's chunking: each document's paragraphs, with where each starts."""
    chunks = []
    for doc_id, document in DOCUMENTS.items():
        start = 0
        for number, text in enumerate(document.split("\n\n")):
            start = document.index(text, start)
            chunks.append(Chunk(f"{doc_id}-{number}", doc_id, text, start))
    return chunks


CHUNKS = paragraphs()


def quiet() -> Any:
    return chromadb.config.Settings(anonymized_telemetry=False)


def fill(client: Any, name: str, vectors: list | None = None) -> Any:
    """A cosine collection of CHUNKS as the team's pipeline writes it: MiniLM vectors, unless
    ``vectors`` (a test that only lists the chunks loads no model)."""
    collection = client.create_collection(
        name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    collection.add(
        ids=[c.chunk_id for c in CHUNKS],
        embeddings=vectors if vectors is not None else embed([c.text for c in CHUNKS]),
        documents=[c.text for c in CHUNKS],
        metadatas=[{"doc_id": c.doc_id, "start_index": c.start} for c in CHUNKS],
    )
    return collection


@pytest.fixture(scope="module")
def client(server: tuple[str, int]) -> Any:
    host, port = server
    return chromadb.HttpClient(host=host, port=port, settings=quiet())


@pytest.fixture(scope="module")
def collection(client: Any) -> Iterator[str]:
    """A collection of its own (a shared server holds other tests' collections)."""
    name = f"team-{uuid.uuid4().hex[:10]}"
    fill(client, name)
    yield name
    client.delete_collection(name)


def on_server(server: tuple[str, int], collection: str, **changes: Any) -> ChromaParams:
    host, port = server
    return ChromaParams(enabled=True, host=host, port=port, collection=collection, **changes)


def test_it_is_a_registered_store_off_by_default():
    assert_registered_off_by_default("chroma", ChromaParams)


def test_an_enabled_section_names_exactly_one_place_and_a_collection():
    assert_one_place_and_collection(ChromaParams, {"host": "h"}, {"path": "p"}, {"host": "h"})
    assert ChromaParams(enabled=True, path="p", collection="docs").port == 8000


def test_its_identity_is_what_changes_an_answer():
    assert_identity_is_what_changes_an_answer(
        ChromaParams(enabled=True, host="h", collection="docs"),
        {"timeout_s": 5, "batch_size": 8},
        [{"version": "2"}, {"collection": "other"}, {"port": 8001}, {"model": "m"}],
    )


def test_reading_its_params_does_not_import_chromadb():
    assert_params_do_not_import("chroma", "ChromaParams", "chromadb")


def test_a_server_that_is_not_there_is_one_line_naming_host_and_port():
    port = free_port()  # nothing listens on it
    message = one_line(lambda: open_chroma(on_server(("127.0.0.1", port), "docs")))
    assert message == (
        f"retrievers.chroma: cannot reach the Chroma server at 127.0.0.1:{port}: start it "
        f"(`chroma run --path <folder> --port {port}`) or fix retrievers.chroma.host/port"
    )


def test_a_silent_server_times_out_into_the_same_line():
    """It accepts the connection and never answers: chromadb's own client would wait forever."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        settings = on_server(("127.0.0.1", port), "docs", timeout_s=1)
        started = time.monotonic()
        message = one_line(lambda: open_chroma(settings))
    assert message.startswith(
        f"retrievers.chroma: cannot reach the Chroma server at 127.0.0.1:{port}"
    )
    assert time.monotonic() - started < 10


def test_a_persistent_folder_is_listed_and_a_missing_one_named(tmp_path: Path):
    """path: chromadb.PersistentClient; no model is loaded to list the chunks."""
    client = chromadb.PersistentClient(path=str(tmp_path), settings=quiet())
    fill(client, "docs", np.eye(len(CHUNKS)).tolist())
    store = open_chroma(ChromaParams(enabled=True, path=str(tmp_path), collection="docs"))
    assert store.described == f"Chroma collection 'docs' at {tmp_path}"
    assert listed(store.chunks()) == sorted(CHUNKS)
    missing = tmp_path / "nowhere"
    settings = ChromaParams(enabled=True, path=str(missing), collection="docs")
    assert one_line(lambda: open_chroma(settings)) == (
        f"retrievers.chroma.path: no Chroma folder {missing}: set it to the folder the "
        "collection was persisted in"
    )
    assert not missing.exists()  # not created empty


@pytest.mark.slow
def test_it_ranks_as_exact_cosine_search(server, collection):
    store = open_chroma(on_server(server, collection))
    assert store.described == f"Chroma collection {collection!r} at {server[0]}:{server[1]}"
    by_id = {c.chunk_id: c for c in CHUNKS}
    answers = store.search(QUESTIONS, 5)
    for hits, expected in zip(answers, exact_ranking(CHUNKS, QUESTIONS, 5), strict=True):
        assert [hit.chunk_id for hit in hits] == [chunk_id for chunk_id, _ in expected]
        # the score is the cosine itself (1 - Chroma's cosine distance): higher is better
        assert [hit.score for hit in hits] == pytest.approx([s for _, s in expected], abs=1e-4)
        assert all(
            (hit.doc_id, hit.text, hit.start, hit.end) == (*by_id[hit.chunk_id][1:], None)
            for hit in hits
        )
    # the questions of the examples go to their own documents
    assert [hits[0].doc_id for hits in answers] == ["volcanoes", "bread", "tides", "volcanoes"]


@pytest.mark.slow
def test_it_lists_every_chunk_a_page_at_a_time(server, collection, monkeypatch):
    monkeypatch.setattr(chroma, "PAGE", 5)  # 12 chunks: pages of 5, 5 and 2
    listed_hits = open_chroma(on_server(server, collection)).chunks()
    assert len(listed_hits) == len(CHUNKS)
    assert listed(listed_hits) == sorted(CHUNKS)
    assert all(hit.score is None for hit in listed_hits)


@pytest.mark.slow
def test_an_unknown_collection_lists_those_there_are(server, collection):
    message = one_line(lambda: open_chroma(on_server(server, "no-such-collection")))
    prefix = f"retrievers.chroma: no collection at {server[0]}:{server[1]} named "
    assert message.startswith(prefix + "'no-such-collection'; it has: ")
    listed, _, fix = message.split("it has: ")[1].partition(": ")
    assert collection in listed.split(", ")
    assert fix == "set retrievers.chroma.collection to one of them"


@pytest.mark.slow
def test_a_result_without_the_document_id_key_names_it(server, client, collection):
    store = open_chroma(on_server(server, collection, doc_id_key="source"))
    message = one_line(lambda: store.search(QUESTIONS[:1], 2))
    assert message == (
        f"retrievers.chroma: a result of {store.described} has no metadata key 'source': set "
        "retrievers.chroma.doc_id_key to the key that holds its document id (its keys: doc_id, "
        "start_index)"
    )
    assert one_line(store.chunks) == message


@pytest.mark.slow
def test_vectors_of_another_model_name_the_model_param(server, client):
    name = f"small-{uuid.uuid4().hex[:10]}"
    small = client.create_collection(name, embedding_function=None)
    small.add(ids=["a"], embeddings=[[1.0, 0.0, 0.0]], documents=["a"], metadatas=[{"doc_id": "a"}])
    try:
        message = one_line(lambda: open_chroma(on_server(server, name)).search(QUESTIONS[:1], 1))
    finally:
        client.delete_collection(name)
    assert "set retrievers.chroma.model to the model that embedded it" in message


@pytest.mark.slow
def test_a_rerun_answers_from_the_cache_without_opening_the_store(tmp_path: Path):
    """The second run's server is stopped: its answers can only come from the cache. A new
    version is a new identity, which asks the store again (and finds it down)."""
    own = start_chroma(tmp_path / "db")
    try:
        fill(chromadb.HttpClient(host=own.host, port=own.port, settings=quiet()), "docs")
        settings = on_server((own.host, own.port), "docs", cache_dir=str(tmp_path / "cache"))
        first = store_loader(open_chroma, "chroma")(settings)
        asked = ask_store("chroma", first, QUESTIONS, 3)
        chunks = listed_chunks("chroma", first)
        first.cache.save()
    finally:
        own.stop()
    again = store_loader(open_chroma, "chroma")(settings)
    assert ask_store("chroma", again, QUESTIONS, 3) == asked
    assert listed_chunks("chroma", again) == chunks and listed(chunks) == sorted(CHUNKS)
    assert again._store is None  # never opened
    bumped = store_loader(open_chroma, "chroma")(settings.model_copy(update={"version": "2"}))
    message = one_line(lambda: ask_store("chroma", bumped, QUESTIONS, 3))
    assert message.startswith("retrievers.chroma: cannot reach the Chroma server")
