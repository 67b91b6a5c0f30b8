"""goldenset.retrieval.stores.llamaindex: a team's LlamaIndex retriever (a real VectorStoreIndex
of packaged-MiniLM vectors, cut by SentenceSplitter) asked through the adapter."""

from __future__ import annotations

import numpy as np
import pytest

from goldenset.retrieval.stores.base import ask_store
from goldenset.retrieval.stores.llamaindex import LlamaIndexParams, open_llamaindex
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

TEAM = f"{__package__}.llamaindex_team"  # the team's module, imported by its spec


@pytest.fixture
def settings(tmp_path, monkeypatch):
    """The section of a team whose code is in this folder; its cache in tmp_path."""
    return team_sections(LlamaIndexParams, TEAM, tmp_path, monkeypatch)


def cosine_ranking(questions: list[str], k: int) -> tuple[list[list[tuple]], np.ndarray]:
    """Each question's k best nodes, (document id, start, text), and their cosines, computed
    here over the same splitter's nodes, embedded as the index embeds them (metadata first)."""
    from llama_index.core.schema import MetadataMode

    from tests.retrieval.stores.llamaindex_team import documents, splitter

    nodes = splitter().get_nodes_from_documents(documents())
    embedded = [node.get_content(metadata_mode=MetadataMode.EMBED) for node in nodes]
    vectors = minilm().encode(embedded, normalize_embeddings=True)
    cosines = minilm().encode(questions, normalize_embeddings=True) @ vectors.T
    best = np.argsort(-cosines, axis=1)[:, :k]
    rows = [(node.metadata["doc_id"], node.start_char_idx, node.text) for node in nodes]
    return [[rows[i] for i in row] for row in best], np.take_along_axis(cosines, best, axis=1)


@pytest.mark.slow
def test_search_ranks_its_nodes_as_cosine_does_k_at_a_time(settings):
    store = open_llamaindex(settings())
    for k in (5, 3):  # 5: more than an index's retriever returns unless told (2)
        found = store.search(QUESTIONS, k)
        ranked, cosines = cosine_ranking(QUESTIONS, k)
        assert [[(hit.doc_id, hit.start, hit.text) for hit in hits] for hits in found] == ranked
        scores = [[hit.score for hit in hits] for hits in found]
        np.testing.assert_allclose(scores, cosines, atol=1e-5)
        assert all(hit.chunk_id for hits in found for hit in hits)  # the node ids


@pytest.mark.slow
def test_offsets_are_the_nodes_char_indexes_and_metadata_names_the_document(settings):
    found = open_llamaindex(settings()).search(QUESTIONS, 20)  # every node, for each question
    hits = [hit for hits in found for hit in hits]
    assert len(found[0]) == 11  # the splitter's nodes, overlapping ones among them
    assert {hit.start for hit in hits} > {0}
    for hit in hits:
        assert DOCUMENTS[hit.doc_id][hit.start : hit.end] == hit.text
    # a key the nodes lack: the document id is ref_doc_id, the id of the Document parsed
    by_ref = open_llamaindex(settings(doc_id_key="corpus_id")).search(QUESTIONS[:1], 3)
    assert [hit.doc_id for hit in by_ref[0]] == [f"file-{hit.doc_id}" for hit in found[0][:3]]


@pytest.mark.slow
def test_chunks_lists_the_nodes_only_when_set(settings):
    from tests.retrieval.stores.llamaindex_team import index

    listed = open_llamaindex(settings(chunks=f"{TEAM}:chunks")).chunks()
    nodes = index().docstore.docs.values()
    expected = [(n.node_id, n.metadata["doc_id"], n.start_char_idx, n.end_char_idx) for n in nodes]
    assert [(hit.chunk_id, hit.doc_id, hit.start, hit.end) for hit in listed] == expected
    assert len(listed) == 11 and {hit.score for hit in listed} == {None}
    assert open_llamaindex(settings()).chunks() is None


@pytest.mark.slow
def test_a_node_with_no_document_id_is_one_line_naming_the_key(settings):
    message = asked_one_line("llamaindex", settings("orphan_retriever"))
    assert "no metadata key 'doc_id'" in message
    assert "retrievers.llamaindex.doc_id_key" in message
    assert "its keys: title" in message


@pytest.mark.slow
def test_answers_come_from_the_cache_the_second_time(settings):
    first, bumped = assert_answers_come_from_the_cache(
        "llamaindex", lambda **fields: settings(chunks=f"{TEAM}:chunks", **fields)
    )
    assert [hit.chunk_id for hit in ask_store("llamaindex", bumped, QUESTIONS[:1], 3)[0]] == [
        hit.chunk_id for hit in first[0]
    ]
    assert bumped._store is not None  # a new version asks again


def test_a_failing_retriever_is_one_line(settings):
    assert_unreachable_store_is_one_line("llamaindex", settings("unreachable_store"), "LlamaIndex")


@pytest.mark.parametrize(
    "function, expected",
    [
        (
            "the_index",
            "returned VectorStoreIndex, not a LlamaIndex BaseRetriever (call .as_retriever() "
            "on it)",
        ),
        ("fails_to_connect", "fails_to_connect failed (ConnectionError: connection refused"),
        ("missing", f"retrievers.llamaindex.callable: '{TEAM}' has no function 'missing'"),
    ],
    ids=["not a retriever", "fails", "no such function"],
)
def test_a_callable_that_gives_no_retriever_is_one_line(settings, function, expected):
    assert expected in one_line(lambda: open_llamaindex(settings(function)))


def test_a_module_that_does_not_import_is_one_line(settings):
    assert_module_that_does_not_import_is_one_line("llamaindex", settings(), open_llamaindex)
