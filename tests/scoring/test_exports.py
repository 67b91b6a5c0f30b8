"""The score stage's exports (BEIR golden set, TREC runs) read back by pytrec_eval, and reports."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import yaml

import goldenset
from goldenset.chunking.configured import chunk_documents
from goldenset.chunking.params import ChunkParams
from goldenset.core.vectors import write_vectors
from goldenset.retrieval.trec import read_trec_run, strictly_decreasing
from tests.conftest import ROOT
from tests.stage_runs import run_stage

KS = [1, 3, 5, 10]
RETRIEVERS = ["dense", "bm25", "ann", "external", "hybrid"]
TREC = {"recall": "recall_{k}", "hit": "success_{k}", "ndcg": "ndcg_cut_{k}", "precision": "P_{k}"}


def sample_documents(n_docs: int) -> pd.DataFrame:
    with gzip.open(ROOT / "data/docs/scifact-sample.jsonl.gz", "rt", encoding="utf-8") as lines:
        docs = [json.loads(line) for _, line in zip(range(n_docs), lines, strict=False)]
    return pd.DataFrame({"doc_id": [d["_id"] for d in docs], "text": [d["text"] for d in docs]})


def golden_questions(chunks: pd.DataFrame) -> list[dict]:
    """A question on the second chunk of every other document, its evidence inside that chunk."""
    rows = []
    for number, (doc_id, group) in enumerate(chunks.groupby("doc_id", sort=False)):
        if number % 2 or len(group) < 2:
            continue
        chunk = group.iloc[1]
        start, end = int(chunk.start), int(chunk.start) + min(120, len(chunk.text))
        words = chunk.text.split()
        rows.append(
            {
                "qid": f"gs-{doc_id}",
                "question": " ".join(words[2:9]) + "?",
                "doc_id": doc_id,
                "evidence_start": start,
                "evidence_end": end,
                "evidence": chunk.text[: end - start],
            }
        )
    return rows


def labelled_questions(chunks: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Labelled questions (qid, text) and evidence: each the first chunk of two documents, as
    spans equal to those chunks, so the relevant chunks are known without our judging rule."""
    firsts = chunks.groupby("doc_id", sort=False).head(1).reset_index(drop=True)
    questions, evidence = [], []
    for number in range(8):
        qid = f"l{number}"
        questions.append((qid, " ".join(firsts["text"][number].split()[:6]) + "?"))
        for row in (number, number + 10):
            chunk = firsts.iloc[row]
            evidence.append((qid, chunk.doc_id, int(chunk.start), int(chunk.end), chunk.chunk_id))
    columns = ["qid", "doc_id", "start", "end", "chunk_id"]
    return pd.DataFrame(questions, columns=["qid", "text"]), pd.DataFrame(evidence, columns=columns)


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """A project scored by the real stage: sample chunks, a golden set, real queries, and every
    retriever (the external one is the shipped example callable)."""
    project = tmp_path_factory.mktemp("exports")
    docs = sample_documents(30)
    chunks = chunk_documents(docs, ChunkParams(strategy="sentences", max_size=250))
    (project / "data").mkdir()
    docs.to_parquet(project / "data/documents.parquet", index=False)
    chunks.to_parquet(project / "data/chunks.parquet", index=False)
    golden = golden_questions(chunks)
    (project / "data/goldenset.jsonl").write_text("".join(json.dumps(q) + "\n" for q in golden))
    doc_ids = docs["doc_id"].tolist()
    # the real-query tables ingest writes
    judged = [(f"r{i}", doc_ids[(3 * i) % 30], 1.0) for i in range(12)]
    judged += [(f"r{i}", doc_ids[(3 * i + 1) % 30], 2.0) for i in range(0, 12, 3)]
    qrels = pd.DataFrame(judged, columns=["qid", "doc_id", "grade"]).assign(absent="")
    qrels.to_parquet(project / "data/qrels.parquet", index=False)
    texts = [" ".join(docs["text"][(3 * i) % 30].split()[5:12]) for i in range(12)]
    queries = pd.DataFrame({"qid": [f"r{i}" for i in range(12)], "text": texts})
    queries.to_parquet(project / "data/queries.parquet", index=False)
    labelled, evidence = labelled_questions(chunks)
    labelled.to_parquet(project / "data/labelled.parquet", index=False)
    evidence.to_parquet(project / "data/labelled_evidence.parquet", index=False)
    rng = np.random.default_rng(3)

    def unit(n: int) -> np.ndarray:
        vectors = rng.standard_normal((n, 16)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    embeddings = project / "data/embeddings"
    write_vectors(embeddings, "chunks", chunks["chunk_id"].tolist(), unit(len(chunks)))
    write_vectors(embeddings, "synthetic", [q["qid"] for q in golden], unit(len(golden)))
    write_vectors(embeddings, "real", [f"r{i}" for i in range(12)], unit(12))
    write_vectors(embeddings, "labelled", labelled["qid"].tolist(), unit(len(labelled)))
    shutil.copytree(ROOT / "external", project / "external")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["score"]["ks"] = KS
    params["score"]["worst_misses"] = 2
    params["retrievers"]["external"] = {
        "enabled": True,
        "callable": "external.tfidf_search:search",
        "run_file": None,
    }
    params["retrievers"]["hybrid"]["fuse"] = ["dense", "bm25", "external"]
    # one IVF cluster of 20 searched per query: the approximate search misses, and its loss shows
    params["retrievers"]["ann"].update(index="ivf", ivf_nlist=20, ivf_nprobe=1)
    (project / "params.yaml").write_text(yaml.safe_dump(params))
    process = run_stage("score", project)
    assert process.returncode == 0, process.stderr
    return project


def all_metrics(project: Path) -> dict:
    """The headline metrics and the long tail, merged per query set and retriever."""
    merged = json.loads((project / "metrics/scores.json").read_text())
    detail = json.loads((project / "metrics/detail.json").read_text())
    for set_name, retrievers in detail.items():
        if set_name == "chance":  # levels per query set, not per retriever
            continue
        for retriever, values in retrievers.items():
            merged[set_name][retriever].update(values)
    return merged


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines()[1:]:
        qid, item, grade = line.split("\t")
        qrels.setdefault(qid, {})[item] = int(grade)
    return qrels


def assert_trec_eval_agrees(qrels: dict, run: dict, ours: dict[str, float]) -> None:
    """pytrec_eval, and goldenset.evaluate, on the exported files give the stage's metrics."""
    names = [f"{name}@{k}" for name in TREC for k in KS] + ["mrr"]
    assert goldenset.evaluate(qrels, run, names) == pytest.approx(
        {name: ours[name] for name in names}, abs=1e-9
    )
    cut = ",".join(map(str, KS))
    measures = {f"recall.{cut}", f"success.{cut}", f"ndcg_cut.{cut}", f"P.{cut}", "recip_rank"}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert len(per_query) == ours["n_queries"]
    for name, trec_name in TREC.items():
        for k in KS:
            theirs = np.mean([values[trec_name.format(k=k)] for values in per_query.values()])
            assert ours[f"{name}@{k}"] == pytest.approx(theirs, abs=1e-9), f"{name}@{k}"
    theirs = np.mean([values["recip_rank"] for values in per_query.values()])
    assert ours["mrr"] == pytest.approx(theirs, abs=1e-9)


@pytest.mark.parametrize("retriever", RETRIEVERS)
def test_golden_set_export_and_runs_read_by_pytrec_eval_give_our_metrics(scored, retriever):
    metrics = all_metrics(scored)
    beir = scored / "data/export/beir"
    qrels = read_qrels(beir / "qrels/test.tsv")
    run = read_trec_run(scored / f"data/export/runs/synthetic.{retriever}.trec")
    assert_trec_eval_agrees(qrels, run, metrics["synthetic"][retriever])
    # the corpus is the chunks, the queries are the golden-set questions
    corpus = [json.loads(line) for line in (beir / "corpus.jsonl").read_text().splitlines()]
    chunks = pd.read_parquet(scored / "data/chunks.parquet")
    assert [c["_id"] for c in corpus] == chunks["chunk_id"].tolist()
    assert [c["text"] for c in corpus] == chunks["text"].tolist()
    questions = [json.loads(line) for line in (beir / "queries.jsonl").read_text().splitlines()]
    assert {q["_id"] for q in questions} == set(qrels)
    assert {item for judged in run.values() for item in judged} <= {c["_id"] for c in corpus}


@pytest.mark.parametrize("retriever", RETRIEVERS)
def test_real_query_runs_read_by_pytrec_eval_give_our_metrics(scored, retriever):
    metrics = all_metrics(scored)
    table = pd.read_parquet(scored / "data/qrels.parquet")  # document ids, graded
    qrels: dict[str, dict[str, int]] = {}
    for qid, doc_id, grade in table[["qid", "doc_id", "grade"]].itertuples(index=False):
        qrels.setdefault(qid, {})[doc_id] = int(grade)
    run = read_trec_run(scored / f"data/export/runs/real.{retriever}.trec")
    assert_trec_eval_agrees(qrels, run, metrics["real"][retriever])


@pytest.mark.parametrize("retriever", RETRIEVERS)
def test_labelled_runs_with_two_evidence_chunks_read_by_pytrec_eval_give_our_metrics(
    scored, retriever
):
    evidence = pd.read_parquet(scored / "data/labelled_evidence.parquet")
    qrels: dict[str, dict[str, int]] = {}
    for qid, chunk_id in evidence[["qid", "chunk_id"]].itertuples(index=False):
        qrels.setdefault(qid, {})[chunk_id] = 1
    run = read_trec_run(scored / f"data/export/runs/labelled.{retriever}.trec")
    assert_trec_eval_agrees(qrels, run, all_metrics(scored)["labelled"][retriever])


def ranking(run: dict[str, float]) -> list[str]:
    return sorted(run, key=run.get, reverse=True)


def test_ann_recall_loss_is_recomputed_from_the_exported_runs(scored):
    metrics = all_metrics(scored)
    assert set(metrics) == {"synthetic", "labelled", "real"}
    runs = scored / "data/export/runs"
    for query_set in ("synthetic", "labelled", "real"):
        assert set(metrics[query_set]) == set(RETRIEVERS)
        exact = read_trec_run(runs / f"{query_set}.dense.trec")
        approximate = read_trec_run(runs / f"{query_set}.ann.trec")
        depth = max(len(items) for items in exact.values())
        for k in KS:
            cut = min(k, depth)
            shared = [
                len(set(ranking(items)[:cut]) & set(ranking(approximate.get(qid, {}))[:cut]))
                for qid, items in exact.items()
            ]
            expected = 1.0 - np.mean(shared) / cut
            assert metrics[query_set]["ann"][f"recall_loss@{k}"] == pytest.approx(
                expected, abs=1e-9
            ), f"{query_set} recall_loss@{k}"
        assert metrics[query_set]["ann"]["recall_loss@10"] > 0  # the check is not 0 == 0


def test_worst_misses_shows_question_evidence_and_the_chunks_above_it(scored):
    report = (scored / "reports/worst_misses.md").read_text()
    results = pd.read_parquet(scored / "data/results.parquet")
    golden = {q["qid"]: q for q in map(json.loads, (scored / "data/goldenset.jsonl").open())}
    chunks = pd.read_parquet(scored / "data/chunks.parquet").set_index("chunk_id")
    for retriever in RETRIEVERS:
        section = report.split(f"## {retriever}\n")[1].split("\n## ")[0]
        synthetic = results[(results.query_set == "synthetic") & (results.retriever == retriever)]
        ranks = synthetic["first_relevant_rank"].fillna(10**6)
        ranks = ranks[ranks != 1]  # evidence ranked first is no miss
        worst = synthetic.loc[ranks.sort_values(ascending=False, kind="stable").index[:2]]
        assert section.count("\n### ") == len(worst)
        if retriever == "dense":  # random vectors: misses are certain
            assert len(worst) == 2
        for row in worst.itertuples():
            question = golden[row.qid]
            assert f"`{row.qid}`" in section
            assert " ".join(question["evidence"].split())[:100] in section
            # the first chunk listed is the one ranked first, which outranked the evidence
            top = " ".join(chunks.loc[row.top_ids[0], "text"].split())[:100]
            assert top in section


def test_strictly_decreasing_keeps_order_and_values():
    scores = np.array([3.0, 2.0, 2.0, 2.0, 1.0, 1.0, 0.0, 0.0], dtype=np.float32)
    separated = strictly_decreasing(scores)
    assert separated.dtype == np.float32 and np.all(np.diff(separated) < 0)
    np.testing.assert_allclose(separated, scores, rtol=1e-6, atol=1e-40)
    # what a run file holds reads back as the same float32 value
    assert [np.float32(float(f"{score}")) for score in separated] == separated.tolist()


def test_document_and_context_views_and_chance_levels_reach_the_metric_files(scored):
    """The chunk-size-fair views in scores.json (headline) and results.parquet (per question,
    averaging to the headline), their other budgets and ks in detail.json, and the chance
    levels; the document view read back from the synthetic run file agrees with pytrec_eval."""
    scores = json.loads((scored / "metrics/scores.json").read_text())
    detail = json.loads((scored / "metrics/detail.json").read_text())
    results = pd.read_parquet(scored / "data/results.parquet")
    for retriever in RETRIEVERS:
        synthetic, real = scores["synthetic"][retriever], scores["real"][retriever]
        assert {"doc_ndcg@10", "context_recall@512", "context_hit@512"} <= set(synthetic)
        assert "context_hit@512" in real and "doc_ndcg@10" not in real
        rows = results[(results.query_set == "synthetic") & (results.retriever == retriever)]
        for name in ("doc_ndcg@10", "context_recall@512", "context_hit@512", "ndcg@10"):
            assert rows[name].notna().all()
            assert rows[name].mean() == pytest.approx(synthetic[name], abs=1e-12), name
        more = detail["synthetic"][retriever]
        for budget in (256, 1024):
            for name in ("recall", "precision", "iou", "hit"):
                assert 0.0 <= more[f"context_{name}@{budget}"] <= 1.0
        assert more["context_recall@256"] <= synthetic["context_recall@512"]
        assert synthetic["context_recall@512"] <= more["context_recall@1024"]
    for set_name in ("synthetic", "real"):
        chance = detail["chance"][set_name]
        assert 0.0 < chance["recall@1"] < chance["recall@10"] <= 1.0
        assert 0.0 <= chance["context_hit@256"] <= chance["context_hit@1024"] <= 1.0
    assert "context_recall@512" in detail["chance"]["synthetic"]
    assert "context_recall@512" not in detail["chance"]["real"]
    assert detail["chance"]["synthetic"]["doc_recall@1"] == pytest.approx(
        1 / detail["chance"]["synthetic"]["documents"]
    )

    chunks = pd.read_parquet(scored / "data/chunks.parquet").set_index("chunk_id")
    golden = [json.loads(line) for line in (scored / "data/goldenset.jsonl").open()]
    qrels = {q["qid"]: {q["doc_id"]: 1} for q in golden}
    run = read_trec_run(scored / "data/export/runs/synthetic.dense.trec")
    by_doc = {
        qid: {
            doc: max(s for c, s in ranked.items() if chunks.loc[c, "doc_id"] == doc)
            for doc in {chunks.loc[c, "doc_id"] for c in ranked}
        }
        for qid, ranked in run.items()
    }
    ours = scores["synthetic"]["dense"]["doc_ndcg@10"]
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(by_doc)
    assert ours == pytest.approx(np.mean([v["ndcg_cut_10"] for v in theirs.values()]), abs=1e-9)


def test_the_callables_answers_are_kept_and_an_unchanged_rerun_asks_nothing(scored):
    (kept,) = (scored / "cache/retrievers").glob("*.json")
    answers = json.loads(kept.read_text())
    assert answers and all(isinstance(ranked, list) for ranked in answers.values())
    written = kept.stat().st_mtime_ns
    assert run_stage("score", scored).returncode == 0
    assert kept.stat().st_mtime_ns == written  # every answer came from the cache: none added
    params = yaml.safe_load((scored / "params.yaml").read_text())
    params["retrievers"]["external"]["version"] = "index rebuilt"
    (scored / "params.yaml").write_text(yaml.safe_dump(params))
    try:
        assert run_stage("score", scored).returncode == 0
        # a new version is a new identity: every question asked again, kept apart
        assert len(list((scored / "cache/retrievers").glob("*.json"))) == 2
    finally:
        params["retrievers"]["external"]["version"] = ""
        (scored / "params.yaml").write_text(yaml.safe_dump(params))


def test_a_chunk_of_a_pdf_or_word_file_carries_its_place_into_the_beir_corpus():
    from goldenset.scoring.exports import beir_corpus

    chunks = pd.DataFrame(
        {
            "chunk_id": ["m.pdf#0", "n.md#0"],
            "doc_id": ["m.pdf", "n.md"],
            "text": ["Torque 25 Nm.", "Grey."],
            "start": [0, 0],
            "end": [13, 5],
            "place": ["p. 12-13", ""],
        }
    )
    rows = [json.loads(line) for line in beir_corpus(chunks).splitlines()]
    assert rows[0]["metadata"] == {"doc_id": "m.pdf", "start": 0, "end": 13, "place": "p. 12-13"}
    assert rows[1]["metadata"] == {"doc_id": "n.md", "start": 0, "end": 5}
