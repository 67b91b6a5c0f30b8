"""calibrate across golden sets that differ only in generate.seed, and each decision counted as
right, wrong (the golden set's own test separates the pair the other way) or undecided."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from goldenset.audit.checks import calibration_lines
from goldenset.calibrate.agreement import decision_agreement
from goldenset.calibrate.seeds import pooled, seed_params, seeds_to_score
from goldenset.core.files import file_md5
from goldenset.corpus.queries import golden_evidence
from goldenset.corpus.querysets import QUERY_SETS, QuerySet
from goldenset.llm_stand_in import LoopbackLLM
from tests.calibrate.test_calibrate import write_inputs, write_params
from tests.conftest import ROOT
from tests.support.dvc_project import run as run_command


def test_right_wrong_and_undecided_by_the_golden_sets_own_test():
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 0.5, 40)
    # the reference: B above A, C above A and D above A on every question
    reference = np.stack([base, base + 0.3, base + 0.3, base + 0.3])
    # the golden set: B clearly above A (right), C clearly below A (wrong), D level with A but
    # its mean a hair above (undecided, though its means agree)
    golden_base = rng.uniform(0.3, 0.5, 40)
    noise = rng.normal(0, 0.2, 40)
    golden = np.stack([golden_base, golden_base + 0.3, golden_base - 0.3, golden_base + noise])
    golden[3] += 0.001 - (golden[3].mean() - golden[0].mean())
    decisions = decision_agreement(golden, reference, 0.05, 2000, 0)
    pairs = list(zip(decisions.tests.first, decisions.tests.second, strict=True))
    named = {index: pairs[index] for index in range(len(pairs))}
    assert [named[i] for i in decisions.right()] == [(0, 1)]
    assert [named[i] for i in decisions.wrong()] == [(0, 2)]
    assert [named[i] for i in decisions.undecided()] == [(0, 3)]
    # the means count the level pair as agreeing: only the test tells it is a coin flip
    assert decisions.agrees[pairs.index((0, 3))]
    # pairs the reference does not separate (B, C, D among themselves) are none of the three
    assert decisions.significant == 3


def test_the_seeds_judged_and_their_params():
    assert seeds_to_score(None, 4) == [4]
    assert seeds_to_score([0, 1, 0, 2], 4) == [0, 1, 2]
    params = {"generate": {"seed": 0, "max_questions": 9}, "chunk": {"max_size": 3}}
    changed = seed_params(params, 2, Path("/answers"))
    assert changed["generate"] == {"seed": 2, "max_questions": 9, "cache_dir": "/answers"}
    assert changed["chunk"] == params["chunk"] and params["generate"]["seed"] == 0


def golden_set(rows: list[tuple[str, str]]) -> QuerySet:
    table = pd.DataFrame(
        [
            {"qid": q, "question": text, "doc_id": "d", "evidence_start": 0, "evidence_end": 4}
            for q, text in rows
        ]
    )
    qids = table["qid"].tolist()
    return QuerySet(
        QUERY_SETS["synthetic"], table, qids, table["question"].tolist(), golden_evidence(table)
    )


def test_pooled_holds_every_seeds_questions_once():
    union, qids = pooled(
        {0: golden_set([("a", "A?"), ("b", "B?")]), 1: golden_set([("b", "B?"), ("c", "C?")])}
    )
    assert union.qids == ["a", "b", "c"] and union.texts == ["A?", "B?", "C?"]
    assert union.judgments["qid"].tolist() == ["a", "b", "c"]
    assert qids == {0: ["a", "b"], 1: ["b", "c"]}


CALIBRATED = {
    "commit": "0123456789abcdef",
    "golden_set_md5": "feed",
    "alpha": 0.05,
    "seeds": {"0": 150, "1": 152},
    "groups": {
        "whole grid": {"document": {"pooled": {}}},
        "two models": {
            "chunk": {"pooled": {}},
            "document": {
                "pooled": {"pairs_separated": 9, "right": 4, "wrong": 0, "undecided": 5},
            },
        },
    },
}


def test_the_audit_quotes_the_calibration_of_its_own_golden_set_only():
    lines = calibration_lines(CALIBRATED, "feed")
    assert lines == [
        "- calibrate, at 0123456, seeds 0, 1 pooled: of the pairs real queries separate",
        "  - two models, document: 4 right, 0 wrong, 5 undecided of 9",
    ]
    for other in [calibration_lines(CALIBRATED, "beef"), calibration_lines(None, "feed")]:
        assert other == ["- calibrate: not calibrated on this set (`goldenset calibrate`)"]
    # a damaged file is one line, not a failed audit
    damaged = {"golden_set_md5": "feed", "seeds": {"0": 1}, "groups": {"two models": []}}
    assert calibration_lines(damaged, "feed") == [
        "- calibrate: metrics/calibration.json is damaged: run `goldenset calibrate` again"
    ]


GRID = {
    "chunkings": [{"strategy": "sentences", "max_size": 250}],
    "models": [{"model": "sentence-transformers/all-MiniLM-L6-v2"}],
    "retrievers": ["dense", "bm25"],
    "groups": {"good model": {"models": ["all-MiniLM-L6-v2"]}},
    "bias": [],
    "splits": 10,
    "agreement_splits": 2,
    "views": {"document": {"golden": "synthetic.doc_ndcg@10", "reference": "real.ndcg@10"}},
    "resamples": 50,
    "permutations": 500,
}


def calibrate(project: Path, *options: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "goldenset", "calibrate", "--json", "figures.json", *options],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_calibrate_writes_each_seeds_golden_set_judges_each_and_pools_them(tmp_path):
    project = tmp_path / "project"
    write_inputs(project)
    documents = pd.read_parquet(project / "data/documents.parquet")
    documents.assign(title="").to_parquet(project / "data/documents.parquet", index=False)
    run_command(["git", "init", "-q"], project)
    run_command(["git", "add", "-A"], project)
    run_command(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], project)
    with LoopbackLLM(api_key=None) as server:
        generate = {
            "provider": "openai",
            "model": "loopback-model",
            "max_questions": 6,
            "example_queries": None,
            "concurrency": 1,
            "openai": {"base_url": server.openai_url},
        }
        write_params(project, calibrate=GRID, generate=generate)
        first = calibrate(project, "--seeds", "0", "1", "2")
        assert first.returncode == 0, first.stderr
        asked = server.requests
        assert asked >= 12  # two golden sets written, seed 0 is the project's own
        again = calibrate(project, "--seeds", "0", "1", "2")
        assert again.returncode == 0, again.stderr
        assert server.requests == asked  # every answer came from calibrate's cache
    # each seed's set, written by the generate stage with only its seed changed
    for seed in [1, 2]:
        written = project / f"cache/calibrate/seeds/{seed}/data/goldenset.jsonl"
        assert written.is_file()
    sets = [
        (project / f"cache/calibrate/seeds/{seed}/data/goldenset.jsonl").read_text()
        for seed in [1, 2]
    ]
    assert sets[0] != sets[1]  # other passages drawn
    assert not (project / "cache/llm").exists()  # the stage's cache untouched
    figures = json.loads((project / "figures.json").read_text())
    assert set(figures["seeds"]) == {"0", "1", "2"}
    golden = (project / "data/goldenset.jsonl").read_text().splitlines()
    assert figures["seeds"]["0"]["questions"] == len(golden) - 4  # people's fails left out
    # each seed's figures read its own questions: the pooled mean is their weighted mean
    counts = {seed: figures["seeds"][seed]["questions"] for seed in ["0", "1", "2"]}
    for at, configuration in enumerate(figures["configurations"]):
        pooled_mean = configuration["values"]["synthetic.doc_ndcg@10"]
        seeded = [
            figures["seeds"][seed]["configurations"][at]["values"]["synthetic.doc_ndcg@10"]
            for seed in counts
        ]
        weighted = sum(n * mean for n, mean in zip(counts.values(), seeded, strict=True))
        assert pooled_mean == pytest.approx(weighted / sum(counts.values()), abs=1e-12)
        assert len(set(seeded)) > 1
    view = figures["groups"]["good model"]["views"]["document"]
    assert view["right"] + view["wrong"] + view["undecided"] == view["pairs_significant"]
    # the metrics file the audit quotes: the commit and this golden set's md5
    calibrated = json.loads((project / "metrics/calibration.json").read_text())
    head = run_command(["git", "rev-parse", "HEAD"], project).strip()
    assert calibrated["commit"] == head
    assert calibrated["golden_set_md5"] == file_md5(project / "data/applied.jsonl")
    assert set(calibrated["seeds"]) == {"0", "1", "2"}
    document = calibrated["groups"]["good model"]["document"]
    assert set(document["seeds"]) == {"0", "1", "2"}
    assert document["pooled"]["pairs_separated"] == view["pairs_significant"]
    assert "#### Across seeds" in first.stdout
    assert "| good model | document | pooled |" in first.stdout
