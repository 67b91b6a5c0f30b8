"""calibrate reads what lives outside the pipeline as the score stage reads it: a store asked
once, scored once over its own chunks, a team's callable whose answers are kept, so that a second
calibrate asks neither anything; and a run file of one chunking's ids skipped, with one line, under
the chunkings it does not name."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from goldenset.chunking.configured import chunk_documents
from goldenset.chunking.params import ChunkParams
from tests.calibrate.test_calibrate import run_calibrate, write_inputs, write_params
from tests.scoring.test_exports import golden_questions, sample_documents

pytestmark = pytest.mark.slow

# a team's LangChain store over the project's documents and a team's search function, each
# writing a line to asked.log whenever it is built or asked
TEAM = """
from pathlib import Path

import pandas as pd
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

LOG = Path(__file__).resolve().parent.parent / "asked.log"


def note(line):
    with LOG.open("a") as log:
        log.write(line + "\\n")


class Noted(DeterministicFakeEmbedding):
    def embed_query(self, text):
        note("store asked")
        return super().embed_query(text)


def retriever():
    note("store opened")
    documents = pd.read_parquet(Path(__file__).resolve().parent.parent / "data/documents.parquet")
    store = InMemoryVectorStore(Noted(size=32))
    pairs = zip(documents["doc_id"], documents["text"])
    store.add_documents([Document(text, metadata={"doc_id": doc}) for doc, text in pairs])
    return store.as_retriever()


def search(query_texts, chunk_ids, chunk_texts, k):
    note(f"search asked {len(query_texts)}")
    words = [set(text.lower().split()) for text in chunk_texts]
    ranked = []
    for query in query_texts:
        asked = set(query.lower().split())
        order = sorted(range(len(chunk_ids)), key=lambda i: (-len(asked & words[i]), i))[:k]
        ranked.append([chunk_ids[i] for i in order])
    return ranked
"""

GRID = {
    "chunkings": [{"strategy": "sentences", "max_size": 250}, {"strategy": "none"}],
    "models": [{"model": "sentence-transformers/all-MiniLM-L6-v2"}],
    "splits": 5,
    "agreement_splits": 1,
    "resamples": 50,
    "permutations": 200,
    "views": {"doc": {"golden": "synthetic.doc_ndcg@10", "reference": "real.ndcg@10"}},
    "groups": {},
}


def test_a_store_and_a_callable_are_asked_once_and_a_second_calibrate_asks_nothing(tmp_path):
    write_inputs(tmp_path)
    (tmp_path / "external").mkdir()
    (tmp_path / "external/team.py").write_text(TEAM)
    write_params(
        tmp_path,
        calibrate={**GRID, "retrievers": ["dense", "langchain", "external"]},
        retrievers={
            "langchain": {"callable": "external.team:retriever", "start_key": None},
            "external": {"callable": "external.team:search"},
        },
    )
    first = run_calibrate(tmp_path)
    assert first.returncode == 0, first.stderr
    asked = (tmp_path / "asked.log").read_text().splitlines()
    assert asked.count("store opened") == 1
    # every question of both sets asked once (real and golden texts may repeat)
    assert 0 < asked.count("store asked") <= 16 + 8
    assert any(line.startswith("search asked") for line in asked)
    figures = json.loads((tmp_path / "figures.json").read_text())
    names = [c["name"] for c in figures["configurations"]]
    # the store once, over its own chunks; the callable at each chunking (it ranks them)
    assert names.count("langchain | its own chunks | -") == 1
    assert [n for n in names if n.startswith("external |")] == [
        "external | sentences 250 | -",
        "external | whole documents | -",
    ]
    second = run_calibrate(tmp_path)
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "asked.log").read_text().splitlines() == asked  # nothing asked again
    assert (
        json.loads((tmp_path / "figures.json").read_text())["configurations"]
        == figures["configurations"]
    )


def test_a_run_file_of_one_chunkings_ids_is_skipped_under_the_others_with_one_line(tmp_path):
    write_inputs(tmp_path)
    docs = sample_documents(16)
    chunks = chunk_documents(docs, ChunkParams(strategy="sentences", max_size=250))
    golden = pd.DataFrame(golden_questions(chunks))
    # each question's second chunk: a chunk id that whole documents do not have
    second = chunks.groupby("doc_id").nth(1).set_index("doc_id")["chunk_id"]
    (tmp_path / "external").mkdir()
    (tmp_path / "external/run.trec").write_text(
        "".join(f"{q.qid} Q0 {second[q.doc_id]} 1 1.0 team\n" for q in golden.itertuples())
    )
    write_params(
        tmp_path,
        calibrate={**GRID, "retrievers": ["dense", "external"]},
        retrievers={"external": {"run_file": "external/run.trec"}},
    )
    process = run_calibrate(tmp_path)
    assert process.returncode == 0, process.stderr
    [line] = [line for line in process.stderr.splitlines() if "skipped at" in line]
    assert line.startswith("calibrate: external skipped at whole documents: retrievers.external:")
    names = [
        c["name"] for c in json.loads((tmp_path / "figures.json").read_text())["configurations"]
    ]
    assert "external | sentences 250 | -" in names
    assert "external | whole documents | -" not in names
