"""A public collection whose qrels judge an empty document: ingest skips it, score counts it as
relevant and never retrieved, exactly as trec_eval does (pytrec_eval on the same run)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.evaluation.test_ranking import TREC_NAMES, trec_eval_scores
from tests.stage_runs import run_stage
from tests.support.documents import make_documents

pytestmark = pytest.mark.slow  # ingest, chunk, embed and score as subprocesses, real MiniLM

KS = [1, 2, 5]


def test_judged_empty_document_lowers_recall_as_in_trec_eval(tmp_path):
    docs = tmp_path / "collection"
    docs.mkdir()
    lines = [json.dumps({"_id": i, "title": "", "text": t}) for i, t in make_documents(5, 3)]
    lines.append(json.dumps({"_id": "empty-doc", "title": "", "text": "  "}))
    (docs / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    texts = [json.loads(line)["text"] for line in lines]
    queries = {"q1": texts[0][:60], "q2": texts[3][20:90], "q3": texts[4][:50]}
    judged = {
        "q1": {"doc-0000": 1, "empty-doc": 1},
        "q2": {"doc-0003": 2, "doc-0001": 1, "empty-doc": 1},
        "q3": {"doc-0004": 1},
    }
    (docs / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    rows = [f"{q}\t{d}\t{g}" for q, by_doc in judged.items() for d, g in by_doc.items()]
    (docs / "qrels.tsv").write_text("\n".join(["query-id\tcorpus-id\tscore", *rows]) + "\n")
    (tmp_path / "params.yaml").write_text(
        f"ingest:\n  path: collection\nchunk:\n  strategy: none\n"
        f"score:\n  ks: {KS}\n  headline: [mrr]\n"
        "  max_chance: 1.0\n"  # 5 documents: chance is high, and not what this test is about
    )
    log = ""
    for stage in ("ingest", "chunk", "embed", "score"):
        process = run_stage(stage, tmp_path)
        assert process.returncode == 0, f"{stage}: {process.stderr}"
        log += process.stderr
    assert "skipped corpus.jsonl:6: no title or text" in log
    warnings = [line for line in log.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: 1 judged documents were skipped at ingest (1 no text): they count as "
        "relevant and never retrieved, as trec_eval counts them"
    ]

    results = pd.read_parquet(tmp_path / "data" / "results.parquet")
    dense = results[(results.query_set == "real") & (results.retriever == "dense")]
    run = {
        row.qid: dict(zip(row.top_ids, map(float, row.top_scores), strict=True))
        for row in dense.itertuples()
    }
    trec = trec_eval_scores(judged, run, KS)
    metrics = tmp_path / "metrics"
    scores = {
        **json.loads((metrics / "scores.json").read_text())["real"]["dense"],
        **json.loads((metrics / "detail.json").read_text())["real"]["dense"],
    }
    for k in KS:
        for ours, theirs in TREC_NAMES.items():
            mean = sum(trec[q][theirs.format(k=k)] for q in judged) / len(judged)
            assert scores[ours.format(k=k)] == pytest.approx(mean, abs=1e-6), ours.format(k=k)
    mrr = sum(trec[q]["recip_rank"] for q in judged) / len(judged)
    assert scores["mrr"] == pytest.approx(mrr, abs=1e-6)
    assert scores["recall@5"] == pytest.approx((1 / 2 + 2 / 3 + 1) / 3)  # all 5 docs returned
