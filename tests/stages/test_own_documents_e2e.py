"""The "Your own documents" path of docs/own-documents.md, end to end, with real git and dvc.

Clone the project, drop the sample as docs/own-documents.md says (`rm data/docs/*`), add
Markdown, HTML, reST and text files in nested folders, commit, clone again (git keeps no empty
folder), and run
`dvc repro` in that clone. Questions come from an OpenAI-compatible loopback server. The run
has no real queries, says so in one line, and scores the golden set.
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import yaml

from goldenset.llm_stand_in import LoopbackLLM
from goldenset.retrieval.trec import read_trec_run
from tests.conftest import ROOT
from tests.scoring.test_exports import all_metrics, assert_trec_eval_agrees, read_qrels
from tests.support.documents import make_documents
from tests.support.dvc_project import PROJECT_FILES, commit, copy_project, run, stages_run

pytestmark = pytest.mark.slow

PROSE = [text for _, text in make_documents(4, sentences=6, seed=11)]
OWN_DOCUMENTS = {
    "guide/intro.md": f"# Introduction\n\n{PROSE[0]}\n",
    "guide/deeper/setup.rst": f"Setup\n=====\n\n{PROSE[1]}\n",
    "pages/faq.html": (
        "<html><head><title>FAQ</title><script>var x = 1;</script></head>"
        f"<body><nav>Home</nav><h1>FAQ</h1><p>{PROSE[2]}</p></body></html>"
    ),
    "notes.txt": PROSE[3] + "\n",
}


def test_own_documents_from_a_fresh_clone_to_scores(tmp_path):
    origin = copy_project(tmp_path / "origin", PROJECT_FILES)
    (origin / "data").mkdir(exist_ok=True)
    shutil.copytree(ROOT / "data" / "docs", origin / "data" / "docs")
    shutil.copy(ROOT / "data" / ".gitignore", origin / "data" / ".gitignore")
    commit(origin, "the project with its sample")

    mine = tmp_path / "mine"
    run(["git", "clone", "-q", str(origin), str(mine)], tmp_path)
    run(["sh", "-c", "rm data/docs/*"], mine)  # the words of docs/own-documents.md
    for name, text in OWN_DOCUMENTS.items():
        path = mine / "data" / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    commit(mine, "our own documents")

    fresh = tmp_path / "fresh"
    run(["git", "clone", "-q", str(mine), str(fresh)], tmp_path)
    assert not (fresh / "data" / "queries").exists()
    with LoopbackLLM(api_key=None) as server:
        params = yaml.safe_load((fresh / "params.yaml").read_text())
        params["generate"].update(
            provider="openai",
            model="loopback-model",
            max_questions=4,
            openai={"base_url": server.openai_url},
        )
        (fresh / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
        output = run(["dvc", "repro"], fresh)
    assert stages_run(output) == {"ingest", "chunk", "generate", "apply", "embed", "score", "audit"}
    assert output.count("no real queries: scoring the golden set only") == 2  # ingest, score

    documents = pd.read_parquet(fresh / "data" / "documents.parquet")
    assert sorted(documents["doc_id"]) == sorted(OWN_DOCUMENTS)
    titles = dict(zip(documents["doc_id"], documents["title"], strict=True))
    assert titles["guide/intro.md"] == "Introduction" and titles["pages/faq.html"] == "FAQ"
    assert titles["guide/deeper/setup.rst"] == "Setup"
    assert "var x" not in documents.set_index("doc_id").loc["pages/faq.html", "text"]

    golden = (fresh / "data" / "goldenset.jsonl").read_text().splitlines()
    scores = json.loads((fresh / "metrics" / "scores.json").read_text())
    assert set(scores) == {"synthetic"}
    assert scores["synthetic"]["dense"]["n_queries"] == len(golden) > 0
    assert 0 < scores["synthetic"]["bm25"]["recall@10"] <= 1
    # every retriever's scores, recomputed by pytrec_eval from the exported qrels and runs
    metrics = all_metrics(fresh)
    qrels = read_qrels(fresh / "data" / "export" / "beir" / "qrels" / "test.tsv")
    assert len(qrels) == len(golden)
    for retriever, ours in metrics["synthetic"].items():
        run_file = read_trec_run(fresh / "data" / "export" / "runs" / f"synthetic.{retriever}.trec")
        assert_trec_eval_agrees(qrels, run_file, ours)
