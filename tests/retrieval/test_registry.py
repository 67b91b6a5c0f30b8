"""The extension points' declarations (goldenset.retrieval.retrievers,
goldenset.evaluation.measures) and what is derived from them: the params sections, the ranking
order, metric names, chance levels, the plot declaration and the metric table of
docs/reading-results.md."""

from __future__ import annotations

import dataclasses
import json
import pkgutil
import subprocess
import sys

import numpy as np
import pytest
import yaml

from goldenset.core.errors import GoldensetError
from goldenset.evaluation.context import ContextInputs, ContextOverlap, context_view
from goldenset.evaluation.measures import (
    MEASURES,
    Measure,
    context_measures,
    is_per_question_metric,
    metric_table,
    parse_metric,
    ranking_measures,
)
from goldenset.evaluation.ranking import evaluate
from goldenset.params import Params, parse_params
from goldenset.retrieval.params import RetrieversParams
from goldenset.retrieval.retrievers import (
    RETRIEVERS,
    RetrieverEntry,
    fusable,
    fusions,
    ranking_order,
)
from goldenset.scoring.outputs import recall_plot_rows
from goldenset.scoring.params import ScoreParams
from tests.conftest import ROOT


def test_every_registered_retriever_has_its_params_section_in_registry_order():
    assert list(RetrieversParams.model_fields) == list(RETRIEVERS)
    for name, entry in RETRIEVERS.items():
        assert RetrieversParams.model_fields[name].annotation is entry.params
    shipped = yaml.safe_load((ROOT / "params.yaml").read_text())["retrievers"]
    assert list(shipped) == list(RETRIEVERS)


def test_fusing_retrievers_rank_after_those_they_fuse():
    order = ranking_order()
    stores = ["chroma", "langchain", "llamaindex", "postgres", "qdrant"]  # each over its own chunks
    assert order == ["dense", "bm25", "tfidf", "ann", "external", "hybrid", *stores]
    assert sorted(order) == sorted(RETRIEVERS)


def test_an_entry_holds_only_what_a_retriever_is():
    """Its params and builder, and four things more: what kind it is, its params class says."""
    names = [field.name for field in dataclasses.fields(RetrieverEntry)]
    assert names == ["params", "build", "order", "model_free", "approximates", "load"]
    assert fusions() == ["hybrid"] and "external" in fusable() and "chroma" not in fusable()


def test_hybrid_fuses_only_retrievers_that_can_be_fused():
    with pytest.raises(GoldensetError, match=r"retrievers: .*hybrid.fuse: \['hybrid'\] cannot"):
        parse_params({"retrievers": {"hybrid": {"fuse": ["dense", "hybrid"]}}})
    with pytest.raises(GoldensetError, match=r"calibrate: .*unknown \['sparse'\]"):
        parse_params(
            {
                "calibrate": {
                    "chunkings": [{}],
                    "models": [{}],
                    "retrievers": ["dense", "sparse"],
                    "views": {"v": {"golden": "synthetic.mrr", "reference": "real.mrr"}},
                }
            }
        )


@pytest.mark.parametrize(
    ("name", "measure", "value"),
    [
        ("ndcg@10", "ndcg", 10),
        ("doc_mrr", "mrr", None),
        ("context_hit@512", "context_hit", 512),
    ],
)
def test_metric_names_parse_to_their_measure(name, measure, value):
    parsed = parse_metric(name)
    assert parsed is not None and (parsed[0].name, parsed[1]) == (measure, value)
    assert is_per_question_metric(name)


@pytest.mark.parametrize(
    "name", ["mrr@10", "ndcg", "doc_context_hit@512", "recall@x", "n_queries", "doc_recall_loss@10"]
)
def test_other_names_are_no_metric_column(name):
    assert parse_metric(name) is None and not is_per_question_metric(name)


def test_recall_loss_is_a_declared_metric_without_a_value_per_question():
    """ann's recall_loss@k is scored from MEASURES like every metric, a mean over questions:
    no per-question column, no headline."""
    parsed = parse_metric("recall_loss@10")
    assert parsed is not None and parsed[0].views == ("exact",)
    assert not is_per_question_metric("recall_loss@10")
    with pytest.raises(GoldensetError, match="unknown metric 'recall_loss@10'"):
        parse_params({"score": {"headline": ["recall_loss@10"]}})


def test_headline_validation_reads_the_declaration():
    assert ScoreParams(headline=["doc_precision@3", "context_iou@256"]).headline
    with pytest.raises(ValueError, match="use recall@k, hit@k, ndcg@k, precision@k, mrr, their"):
        ScoreParams(headline=["map@10"])
    with pytest.raises(ValueError, match="needs k=7"):
        ScoreParams(headline=["hit@7"])


def test_evaluate_returns_every_ranking_measure_in_declaration_order():
    from scipy.sparse import csr_array

    per_query = evaluate([[0, 1]], csr_array([[0, 1.0]]), [1, 2])
    declared = ranking_measures()
    expected = [f"{m.name}@{k}" for k in (1, 2) for m in declared if m.parameter == "k"]
    expected += [m.name for m in declared if m.parameter is None]
    assert list(per_query)[2:] == expected


def test_the_context_view_computes_each_registered_context_measure():
    declared = [m.name for m in context_measures()]
    assert declared == ["context_recall", "context_precision", "context_iou", "context_hit"]
    shown = ContextOverlap(shown=10, wanted=4, both=2, relevant_shown=True)
    values = [m.compute(shown) for m in context_measures()]
    assert values == [0.5, 0.2, 2 / 12, 1.0]
    # a context measure registered from outside is computed with the others, in order
    chars = Measure(
        name="context_chars",
        parameter="B",
        views=("context",),
        definition="characters in the context",
        compute=lambda overlap: float(overlap.shown),
    )
    inputs = ContextInputs(
        item_chunk=np.array([0]),
        chunk_doc=np.array([0]),
        chunk_start=np.array([0]),
        chunk_end=np.array([5]),
        token_starts=[[0, 1, 2, 3, 4]],
        evidence=[{0: [(0, 2)]}],
        relevant_docs=[{0}],
    )
    MEASURES.register("context_chars", chars)
    try:
        out = context_view(np.array([[0]]), inputs, [8])
    finally:
        MEASURES.unregister("context_chars")
    assert list(out) == [f"{name}@8" for name in declared] + ["context_chars@8"]
    assert out["context_chars@8"][0] == 5.0 and out["context_recall@8"][0] == 1.0


def test_the_plot_declaration_draws_every_retriever_from_the_rows():
    """dvc.yaml's plot reads columns the rows hold, and its template colours by the rows'
    retriever field: no list of registered names to keep in step."""
    plot = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["score"]["plots"][0]
    ((path, spec),) = plot.items()
    metrics = {"synthetic": {name: {"recall@1": 0.5} for name in RETRIEVERS}}
    rows = recall_plot_rows(metrics, [1])
    assert {row["retriever"] for row in rows} == set(RETRIEVERS)
    assert {spec["x"], spec["y"]} <= set(rows[0])
    template = (ROOT / ".dvc/plots" / f"{spec['template']}.json").read_text()
    assert '"field": "retriever"' in template
    assert not [name for name in RETRIEVERS if f'"{name}"' in template]
    assert path == "plots/recall_at_k.json"


def docs_text(page: str) -> str:
    """A page of the documentation site, docs/<page>."""
    return (ROOT / "docs" / page).read_text(encoding="utf-8")


def test_the_docs_metric_table_is_the_declarations():
    assert metric_table() in docs_text("reading-results.md")


def test_every_params_field_of_a_retriever_is_reachable_from_params():
    assert json.loads(Params().model_dump_json())["retrievers"].keys() == RETRIEVERS.keys()


def test_each_retriever_module_of_the_package_declares_its_entry():
    """Importing the packages imports every module in them: a new retriever, or a new store, is
    one new file."""
    import goldenset.retrieval.retrievers as retrievers
    import goldenset.retrieval.stores as stores

    # the interface, what two store modules share, and the deeper asking every store shares
    shared = {"base", "callable", "deepen"}
    modules = {
        f"{package.__name__}.{info.name}"
        for package in (retrievers, stores)
        for info in pkgutil.iter_modules(package.__path__)
        if info.name not in shared
    }
    assert {RETRIEVERS[name].params.__module__ for name in ranking_order()} == modules
    assert RETRIEVERS["bm25"].params.__module__ == "goldenset.retrieval.retrievers.lexical"


def test_reading_params_loads_no_numerical_library():
    """core.params reads the registries; the retrievers import numpy, torch, faiss and bm25s
    only when they rank."""
    code = "import sys, goldenset.core.params; print(sorted(set(sys.modules) & {LIBRARIES}))"
    libraries = {"numpy", "torch", "faiss", "bm25s", "scipy", "pandas"}
    process = subprocess.run(
        [sys.executable, "-c", code.replace("{LIBRARIES}", repr(libraries))],
        capture_output=True,
        text=True,
        check=True,
    )
    assert process.stdout.strip() == "[]"
