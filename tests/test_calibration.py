"""benchmarks/calibration.py runs on a tiny project and prints its table and Kendall tau."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from goldenset.chunking import chunk_documents
from goldenset.params import ChunkParams
from tests.conftest import ROOT
from tests.test_exports import golden_questions, sample_documents


@pytest.mark.slow
def test_calibration_scores_every_configuration_on_a_tiny_project(tmp_path):
    docs = sample_documents(16)
    (tmp_path / "data").mkdir(parents=True)
    docs.to_parquet(tmp_path / "data/documents.parquet", index=False)
    golden = golden_questions(
        chunk_documents(docs, ChunkParams(strategy="sentences", max_size=250))
    )
    (tmp_path / "data/goldenset.jsonl").write_text("".join(json.dumps(q) + "\n" for q in golden))
    doc_ids = docs["doc_id"].tolist()
    # the real-query tables ingest writes
    texts = [" ".join(docs["text"][i].split()[3:10]) for i in range(8)]
    queries = pd.DataFrame({"qid": [f"r{i}" for i in range(8)], "text": texts})
    queries.to_parquet(tmp_path / "data/queries.parquet", index=False)
    qrels = pd.DataFrame({"qid": queries["qid"], "doc_id": doc_ids[:8], "grade": 1.0, "absent": ""})
    qrels.to_parquet(tmp_path / "data/qrels.parquet", index=False)
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    process = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks/calibration.py"),
            str(tmp_path),
            "--truncate",
            "16",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert process.returncode == 0, process.stderr
    lines = process.stdout.splitlines()
    # 4 retrievers x (chunks of 300, of 600, whole documents), and all but bm25 with chunks of
    # 600 and a 16-token embedding
    table = [line for line in lines if " | " in line and "scored" not in line]
    assert len(table) == 15
    assert any("whole documents" in line for line in table)
    assert any("max_seq_length 16" in line for line in table)
    # every row names how many questions it rests on
    assert all(f" {len(golden)} " in line and " 8" in line for line in table)
    assert any(line.startswith("Kendall tau") for line in lines)
    assert list((tmp_path / "cache/embeddings").glob("*.npz"))  # through the embedding cache
