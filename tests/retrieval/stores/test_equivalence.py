"""A store filled with goldenset's own chunks and MiniLM vectors scores exactly as the built-in
dense retriever over those chunks and vectors: a LangChain in-memory store, and a Chroma
collection on a real server searched with an HNSW ef high enough to be exact. Every metric of
every view, to 1e-9 (no tie among these cosines)."""

from __future__ import annotations

import uuid
from dataclasses import replace

import numpy as np
import pytest

from goldenset.retrieval.params import RetrieversParams
from goldenset.retrieval.retrievers import load_retrievers
from goldenset.scoring.configuration import score_inputs
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.store_chunking import ask_stores
from tests.retrieval.stores import equivalence_team
from tests.retrieval.stores.team_corpus import embed
from tests.scoring.test_configuration import memory_inputs
from tests.scoring.test_exports import sample_documents

pytestmark = pytest.mark.slow


def minilm_inputs():
    """The in-memory project of the configuration tests, its vectors MiniLM's."""
    inputs = memory_inputs()
    golden = inputs.query_sets["synthetic"]
    return replace(
        inputs,
        chunk_vectors=np.asarray(embed(inputs.chunks["text"].tolist()), dtype=np.float32),
        query_vectors={"synthetic": np.asarray(embed(golden.texts), dtype=np.float32)},
        documents=sample_documents(12),
    )


def fill_chroma(server, chunks, vectors) -> str:
    import chromadb
    from chromadb.config import Settings

    host, port = server
    client = chromadb.HttpClient(
        host=host, port=port, settings=Settings(anonymized_telemetry=False)
    )
    name = f"goldenset-{uuid.uuid4().hex[:10]}"
    hnsw = {"space": "cosine", "ef_construction": 400, "ef_search": 400, "max_neighbors": 64}
    collection = client.create_collection(
        name, embedding_function=None, configuration={"hnsw": hnsw}
    )
    collection.add(
        ids=chunks["chunk_id"].tolist(),
        embeddings=vectors.tolist(),
        documents=chunks["text"].tolist(),
        metadatas=[
            {"doc_id": row.doc_id, "start_index": int(row.start)} for row in chunks.itertuples()
        ],
    )
    return name


def fill_langchain(chunks) -> None:
    from langchain_core.documents import Document

    equivalence_team.vector_store.cache_clear()
    equivalence_team.CHUNKS[:] = [
        Document(
            row.text, id=row.chunk_id, metadata={"doc_id": row.doc_id, "start_index": row.start}
        )
        for row in chunks.itertuples()
    ]


def test_langchain_and_chroma_holding_goldensets_chunks_score_as_dense(
    server, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # the stores' answers are cached under cache/retrievers here
    inputs = minilm_inputs()
    fill_langchain(inputs.chunks)
    host, port = server
    collection = fill_chroma(server, inputs.chunks, inputs.chunk_vectors)
    team = "tests.retrieval.stores.equivalence_team"
    retrievers = RetrieversParams.model_validate(
        {
            **{name: {"enabled": False} for name in ["bm25", "ann", "hybrid"]},
            "langchain": {
                "enabled": True,
                "callable": f"{team}:retriever",
                "chunks": f"{team}:chunks",
                "folder": ".",
            },
            "chroma": {"enabled": True, "host": host, "port": port, "collection": collection},
        }
    )
    inputs = replace(inputs, loaded=load_retrievers(retrievers))
    score = ScoreParams(device="cpu")
    outputs = score_inputs(ask_stores(inputs, score, retrievers), score, retrievers)
    metrics = {
        retriever: {**outputs.scores["synthetic"][retriever], **values}
        for retriever, values in outputs.detail["synthetic"].items()
    }
    assert len(metrics["dense"]) > 40  # the chunk, document and context views
    for store in ["langchain", "chroma"]:
        assert set(metrics[store]) == set(metrics["dense"])
        for name, value in metrics["dense"].items():
            assert metrics[store][name] == pytest.approx(value, abs=1e-9), (store, name)
        placed = outputs.detail["stores"][store]
        assert placed["located_share"] == 1.0 and placed["chunk_view"] == 1
        assert placed["located_by_offsets"] == len(inputs.chunks)
    rows = outputs.results.set_index(["retriever", "qid"])
    for store in ["langchain", "chroma"]:
        assert rows.loc[store, "top_ids"].tolist() == rows.loc["dense", "top_ids"].tolist()
