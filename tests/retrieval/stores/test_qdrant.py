"""The Qdrant store on a real local-mode folder (qdrant-client's embedded store: the server does
not install here): it ranks as exact search over MiniLM vectors, lists every chunk, reads a
LangChain payload, each fault is one line naming what to fix, and a re-run reads its answers from
the cache without opening the store."""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from goldenset.retrieval.stores import qdrant
from goldenset.retrieval.stores.base import ask_store, listed_chunks, store_loader
from goldenset.retrieval.stores.qdrant import QdrantParams, QdrantStore, open_qdrant
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
from tests.support.s3_server import free_port

pytest.importorskip("qdrant_client")
from qdrant_client import QdrantClient, models  # noqa: E402


class Chunk(NamedTuple):
    point_id: str  # Qdrant's ids are integers (or UUIDs): the chunk's row
    doc_id: str
    text: str
    start: int


def paragraphs() -> list[Chunk]:
    """The team's chunking: each document's paragraphs, with where each starts."""
    chunks: list[Chunk] = []
    for doc_id, document in DOCUMENTS.items():
        start = 0
        for text in document.split("\n\n"):
            start = document.index(text, start)
            chunks.append(Chunk(str(len(chunks)), doc_id, text, start))
    return chunks


CHUNKS = paragraphs()
FLAT = [{"text": c.text, "doc_id": c.doc_id, "start_index": c.start} for c in CHUNKS]
CHEAP = np.eye(len(CHUNKS)).tolist()  # for the tests that never search: no model loaded


def fill(
    folder: Path,
    name: str = "docs",
    vectors: list | None = None,
    payloads: list[dict] = FLAT,
    distance: models.Distance = models.Distance.COSINE,
    vector_name: str | None = None,
) -> None:
    """A local-mode collection of CHUNKS as the team's pipeline writes it (MiniLM vectors
    unless ``vectors``); its client closed, since local mode lets one client open a folder."""
    vectors = vectors if vectors is not None else embed([c.text for c in CHUNKS])
    params = models.VectorParams(size=len(vectors[0]), distance=distance)
    client = QdrantClient(path=str(folder))
    try:
        client.create_collection(
            name, vectors_config={vector_name: params} if vector_name else params
        )
        points = [
            models.PointStruct(id=i, vector={vector_name: v} if vector_name else v, payload=p)
            for i, (v, p) in enumerate(zip(vectors, payloads, strict=True))
        ]
        client.upsert(name, points=points)
    finally:
        client.close()


@contextmanager
def opened(settings: QdrantParams) -> Iterator[QdrantStore]:
    store = open_qdrant(settings)
    try:
        yield store
    finally:
        store.client.close()  # its folder's lock


def local(folder: Path, **changes: Any) -> QdrantParams:
    return QdrantParams(enabled=True, path=str(folder), **{"collection": "docs", **changes})


def test_it_is_a_registered_store_off_by_default():
    assert_registered_off_by_default("qdrant", QdrantParams)


def test_an_enabled_section_names_exactly_one_place_and_a_collection():
    assert_one_place_and_collection(
        QdrantParams, {"url": "http://q:6333"}, {"path": "p"}, {"path": "p"}
    )


def test_its_identity_is_what_changes_an_answer():
    assert_identity_is_what_changes_an_answer(
        QdrantParams(enabled=True, url="http://q:6333", collection="docs"),
        {"timeout_s": 5, "api_key_env": "KEY"},
        [{"version": "2"}, {"collection": "other"}, {"vector_name": "v"}],
    )


def test_reading_its_params_does_not_import_qdrant_client():
    assert_params_do_not_import("qdrant", "QdrantParams", "qdrant_client")


def test_a_server_that_is_not_there_is_one_line_naming_the_url():
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens on it
    settings = QdrantParams(enabled=True, url=url, collection="docs", timeout_s=5)
    assert one_line(lambda: open_qdrant(settings)) == (
        f"retrievers.qdrant: cannot reach the Qdrant server at {url}: start it "
        "(`docker run -p 6333:6333 qdrant/qdrant`) or fix retrievers.qdrant.url"
    )


def test_a_silent_server_times_out_into_the_same_line():
    """It accepts the connection and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        settings = QdrantParams(enabled=True, url=url, collection="docs", timeout_s=1)
        started = time.monotonic()
        message = one_line(lambda: open_qdrant(settings))
    assert message.startswith(f"retrievers.qdrant: cannot reach the Qdrant server at {url}")
    assert time.monotonic() - started < 10


def test_it_lists_every_chunk_a_page_at_a_time(tmp_path, monkeypatch):
    fill(tmp_path, vectors=CHEAP)
    monkeypatch.setattr(qdrant, "PAGE", 5)  # 12 chunks: pages of 5, 5 and 2
    with opened(local(tmp_path)) as store:
        hits = store.chunks()
    assert store.described == f"Qdrant collection 'docs' in {tmp_path}"
    assert len(hits) == len(CHUNKS) and listed(hits) == sorted(CHUNKS)
    assert all(hit.score is None and hit.end is None for hit in hits)


def test_a_langchain_payload_is_read_under_its_metadata_key(tmp_path):
    """LangChain's QdrantVectorStore: {"page_content": text, "metadata": {...}}."""
    nested = [
        {"page_content": c.text, "metadata": {"doc_id": c.doc_id, "start_index": c.start}}
        for c in CHUNKS
    ]
    fill(tmp_path, vectors=CHEAP, payloads=nested)
    with opened(local(tmp_path, text_key="page_content", metadata_key="metadata")) as store:
        assert listed(store.chunks()) == sorted(CHUNKS)
    with opened(local(tmp_path, text_key="page_content")) as store:
        message = one_line(store.chunks)
    assert "no metadata key 'doc_id'" in message and "(its keys: metadata, page_content)" in message


def test_a_point_without_the_document_id_or_text_key_names_it(tmp_path):
    fill(tmp_path, vectors=CHEAP)
    with opened(local(tmp_path, doc_id_key="source")) as store:
        assert one_line(store.chunks) == (
            f"retrievers.qdrant: a result of {store.described} has no metadata key 'source': "
            "set retrievers.qdrant.doc_id_key to the key that holds its document id (its keys: "
            "doc_id, start_index, text)"
        )
    with opened(local(tmp_path, text_key="body")) as store:
        assert one_line(store.chunks) == (
            f"retrievers.qdrant: a point of {store.described} has no text under payload key "
            "'body': set retrievers.qdrant.text_key to the key that holds it (its keys: doc_id, "
            "start_index, text)"
        )


def test_an_unknown_collection_lists_those_there_are(tmp_path):
    fill(tmp_path, "docs", vectors=CHEAP)
    fill(tmp_path, "notes", vectors=CHEAP)
    assert one_line(lambda: open_qdrant(local(tmp_path, collection="nope"))) == (
        f"retrievers.qdrant: no collection in {tmp_path} named 'nope'; it has: docs, notes: "
        "set retrievers.qdrant.collection to one of them"
    )


def test_a_named_vector_that_is_not_there_lists_those_there_are(tmp_path):
    fill(tmp_path, vectors=CHEAP, vector_name="dense")
    assert one_line(lambda: open_qdrant(local(tmp_path))) == (
        f"retrievers.qdrant.vector_name: collection 'docs' in {tmp_path} has no unnamed vector: "
        "set it to one of 'dense'"
    )
    with opened(local(tmp_path, vector_name="dense")) as store:
        assert len(store.chunks()) == len(CHUNKS)


def test_a_missing_or_locked_folder_is_one_line(tmp_path):
    missing = tmp_path / "nowhere"
    assert one_line(lambda: open_qdrant(local(missing))) == (
        f"retrievers.qdrant.path: no Qdrant folder {missing}: set it to the folder of the "
        "local-mode collection"
    )
    assert not missing.exists()  # not created empty
    fill(tmp_path, vectors=CHEAP)
    holder = QdrantClient(path=str(tmp_path))  # the team's own program, still running
    try:
        message = one_line(lambda: open_qdrant(local(tmp_path)))
    finally:
        holder.close()
    assert message.startswith(f"retrievers.qdrant.path: {tmp_path} is open in another Qdrant")


@pytest.mark.slow
@pytest.mark.parametrize("distance", [models.Distance.COSINE, models.Distance.EUCLID])
def test_it_ranks_as_exact_search(tmp_path, distance):
    """Euclid's score is a distance (smaller is better): negated, it ranks the same way, as
    unit vectors' distance sqrt(2 - 2 cos) does."""
    fill(tmp_path, distance=distance)
    by_id = {c.point_id: c for c in CHUNKS}
    with opened(local(tmp_path)) as store:
        answers = store.search(QUESTIONS, 5)
    for hits, expected in zip(answers, exact_ranking(CHUNKS, QUESTIONS, 5), strict=True):
        assert [hit.chunk_id for hit in hits] == [point_id for point_id, _ in expected]
        cosines = np.array([cosine for _, cosine in expected])
        scores = cosines if distance == models.Distance.COSINE else -np.sqrt(2 - 2 * cosines)
        assert [hit.score for hit in hits] == pytest.approx(scores.tolist(), abs=1e-4)
        assert all(
            (hit.doc_id, hit.text, hit.start, hit.end) == (*by_id[hit.chunk_id][1:], None)
            for hit in hits
        )
    assert [hits[0].doc_id for hits in answers] == ["volcanoes", "bread", "tides", "volcanoes"]


@pytest.mark.slow
def test_vectors_of_another_size_name_the_model_param(tmp_path):
    fill(tmp_path, vectors=CHEAP)
    with opened(local(tmp_path)) as store:
        message = one_line(lambda: store.search(QUESTIONS[:1], 1))
    assert message == (
        f"retrievers.qdrant: {store.described} holds vectors of 12 dimensions, "
        "'sentence-transformers/all-MiniLM-L6-v2' makes 384: set retrievers.qdrant.model to the "
        "model that embedded it"
    )


@pytest.mark.slow
def test_a_rerun_answers_from_the_cache_without_opening_the_store(tmp_path: Path):
    """The second run's folder is gone: its answers can only come from the cache. A new
    version is a new identity, which asks the store again (and finds no folder)."""
    folder = tmp_path / "qdrant"
    fill(folder)
    settings = local(folder, cache_dir=str(tmp_path / "cache"))
    first = store_loader(open_qdrant, "qdrant")(settings)
    asked = ask_store("qdrant", first, QUESTIONS, 3)
    chunks = listed_chunks("qdrant", first)
    first.cache.save()
    first.store.client.close()
    shutil.rmtree(folder)
    again = store_loader(open_qdrant, "qdrant")(settings)
    assert ask_store("qdrant", again, QUESTIONS, 3) == asked
    assert listed_chunks("qdrant", again) == chunks and listed(chunks) == sorted(CHUNKS)
    assert again._store is None  # never opened
    bumped = store_loader(open_qdrant, "qdrant")(settings.model_copy(update={"version": "2"}))
    message = one_line(lambda: ask_store("qdrant", bumped, QUESTIONS, 3))
    assert message.startswith("retrievers.qdrant.path: no Qdrant folder")
