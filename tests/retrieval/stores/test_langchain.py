"""goldenset.retrieval.stores.langchain: a team's LangChain retriever (a real InMemoryVectorStore
of packaged-MiniLM vectors, cut by RecursiveCharacterTextSplitter) asked through the adapter."""

from __future__ import annotations

import re

import numpy as np
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.install import install_command
from goldenset.retrieval.stores.base import ask_store, needs
from goldenset.retrieval.stores.langchain import LangChainParams, open_langchain
from tests.retrieval.stores.store_checks import TEAM_QUESTIONS as QUESTIONS
from tests.retrieval.stores.store_checks import (
    asked_one_line,
    assert_answers_come_from_the_cache,
    assert_module_that_does_not_import_is_one_line,
    assert_unreachable_store_is_one_line,
    one_line,
    team_sections,
)
from tests.retrieval.stores.team_corpus import DOCUMENTS, minilm

TEAM = f"{__package__}.langchain_team"  # the team's module, imported by its spec


@pytest.fixture
def settings(tmp_path, monkeypatch):
    """The section of a team whose code is in this folder; its cache in tmp_path."""
    return team_sections(LangChainParams, TEAM, tmp_path, monkeypatch)


def cosine_ranking(questions: list[str], k: int) -> list[list[tuple]]:
    """Each question's k best chunks, (document id, start, text), by a cosine computed here
    over the same splitter's chunks."""
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=1000, chunk_overlap=200, add_start_index=True
    )
    documents = [Document(text, metadata={"doc_id": doc}) for doc, text in DOCUMENTS.items()]
    chunks = splitter.split_documents(documents)
    vectors = minilm().encode([chunk.page_content for chunk in chunks], normalize_embeddings=True)
    asked = minilm().encode(questions, normalize_embeddings=True)
    best = np.argsort(-(asked @ vectors.T), axis=1)[:, :k]
    rows = [(c.metadata["doc_id"], c.metadata["start_index"], c.page_content) for c in chunks]
    return [[rows[i] for i in row] for row in best]


def placed(hits) -> list[list[tuple]]:
    return [[(hit.doc_id, hit.start, hit.text) for hit in found] for found in hits]


@pytest.mark.slow
def test_search_ranks_its_chunks_as_cosine_does_k_at_a_time(settings):
    store = open_langchain(settings())
    for k in (5, 2):  # 5: more than a vector store's retriever returns unless told (4)
        found = store.search(QUESTIONS, k)
        assert placed(found) == cosine_ranking(QUESTIONS, k)
        # LangChain gives no scores: ranked by place; the store's own ids are kept
        assert {hit.score for hits in found for hit in hits} == {None}
        assert all(hit.chunk_id.startswith(f"{hit.doc_id}#") for hits in found for hit in hits)


@pytest.mark.slow
def test_offsets_are_the_splitters_start_index(settings):
    found = open_langchain(settings()).search(QUESTIONS, 6)  # every chunk, for each question
    hits = [hit for hits in found for hit in hits]
    assert {hit.start for hit in hits} > {0}  # chunks past their document's start
    for hit in hits:
        assert DOCUMENTS[hit.doc_id][hit.start : hit.end] == hit.text
        assert hit.end == hit.start + len(hit.text)
    unplaced = open_langchain(settings(start_key=None)).search(QUESTIONS[:1], 2)
    assert [(hit.start, hit.end) for hit in unplaced[0]] == [(None, None)] * 2


@pytest.mark.slow
def test_chunks_lists_the_chunking_only_when_set(settings):
    from tests.retrieval.stores.langchain_team import split

    listed = open_langchain(settings(chunks=f"{TEAM}:chunks")).chunks()
    expected = [
        (c.id, c.metadata["doc_id"], c.metadata["start_index"], c.page_content) for c in split()
    ]
    assert [(hit.chunk_id, hit.doc_id, hit.start, hit.text) for hit in listed] == expected
    assert {hit.doc_id for hit in listed} == set(DOCUMENTS)
    assert open_langchain(settings()).chunks() is None


@pytest.mark.slow
def test_a_result_without_the_doc_id_key_is_one_line_naming_it(settings):
    message = asked_one_line("langchain", settings(doc_id_key="source"))
    assert "no metadata key 'source'" in message
    assert "retrievers.langchain.doc_id_key" in message
    assert "its keys: doc_id, start_index" in message


@pytest.mark.slow
def test_answers_come_from_the_cache_the_second_time(settings):
    first, bumped = assert_answers_come_from_the_cache(
        "langchain", lambda **fields: settings(chunks=f"{TEAM}:chunks", **fields)
    )
    assert ask_store("langchain", bumped, QUESTIONS[:1], 3) == first[:1]
    assert bumped._store is not None  # a new version asks again


def test_a_failing_retriever_is_one_line(settings):
    assert_unreachable_store_is_one_line("langchain", settings("unreachable_store"), "LangChain")


@pytest.mark.parametrize(
    "function, expected",
    [
        (
            "the_store",
            "returned InMemoryVectorStore, not a LangChain BaseRetriever (call "
            ".as_retriever() on it)",
        ),
        ("a_list", "returned list, not a LangChain BaseRetriever"),
        ("fails_to_connect", "fails_to_connect failed (ConnectionError: connection refused"),
        ("missing", f"retrievers.langchain.callable: '{TEAM}' has no function 'missing'"),
    ],
)
def test_a_callable_that_gives_no_retriever_is_one_line(settings, function, expected):
    assert expected in one_line(lambda: open_langchain(settings(function)))


def test_a_module_that_does_not_import_is_one_line(settings):
    message = assert_module_that_does_not_import_is_one_line(
        "langchain", settings(), open_langchain
    )
    assert "retrievers.langchain.folder" in message


def test_the_section_needs_a_callable_and_its_identity_holds_the_folders_files(tmp_path):
    with pytest.raises(ValueError, match="set callable"):
        LangChainParams(enabled=True)
    section = LangChainParams(enabled=True, callable="team.search:make", folder=str(tmp_path))
    before = section.identity_fields()
    (tmp_path / "search.py").write_text("def make(): ...\n")
    assert section.identity_fields()["code"] != before["code"]
    assert section.model_copy(update={"batch_size": 3}).identity_fields() == (
        section.identity_fields()
    )


def test_a_chunks_module_that_does_not_import_names_the_chunks_field(settings):
    store = open_langchain(settings("unreachable_store", chunks=f"{__package__}.nothing_here:f"))
    assert one_line(store.chunks).startswith(
        f"retrievers.langchain.chunks: cannot import '{__package__}.nothing_here'"
    )


def test_a_client_that_is_not_installed_names_its_extra():
    with pytest.raises(GoldensetError, match=re.escape(install_command("langchain"))):
        needs("langchain_core_not_installed", "langchain", "langchain")
