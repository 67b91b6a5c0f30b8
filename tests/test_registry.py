"""The extension points' declarations (goldenset.scoring.retrievers, goldenset.scoring.measures)
and what is derived from them: the params sections, the ranking order, metric names, chance
levels, the plot declaration and the metric table of docs/reading-results.md."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest
import yaml

from goldenset.core.errors import GoldensetError
from goldenset.params import Params, parse_params
from goldenset.scoring.measures import MEASURES, is_per_question_metric, metric_table, parse_metric
from goldenset.scoring.metrics import evaluate
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.ranked import recall_plot_rows
from goldenset.scoring.retriever_params import RetrieversParams
from goldenset.scoring.retrievers import REGISTRY, ranking_order
from goldenset.scoring.views import CONTEXT_METRICS
from tests.conftest import ROOT


def test_every_registered_retriever_has_its_params_section_in_registry_order():
    assert list(RetrieversParams.model_fields) == list(REGISTRY)
    for name, entry in REGISTRY.items():
        assert RetrieversParams.model_fields[name].annotation is entry.params
    shipped = yaml.safe_load((ROOT / "params.yaml").read_text())["retrievers"]
    assert list(shipped) == list(REGISTRY)


def test_fusing_retrievers_rank_after_those_they_fuse():
    order = ranking_order()
    assert order == ["dense", "bm25", "ann", "external", "hybrid"]
    assert sorted(order) == sorted(REGISTRY)


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
    "name", ["mrr@10", "ndcg", "doc_context_hit@512", "recall@x", "n_queries", "recall_loss@10"]
)
def test_other_names_are_no_metric_column(name):
    assert parse_metric(name) is None and not is_per_question_metric(name)


def test_headline_validation_reads_the_declaration():
    assert ScoreParams(headline=["doc_precision@3", "context_iou@256"]).headline
    with pytest.raises(ValueError, match="use recall@k, hit@k, ndcg@k, precision@k, mrr, their"):
        ScoreParams(headline=["map@10"])
    with pytest.raises(ValueError, match="needs k=7"):
        ScoreParams(headline=["hit@7"])


def test_evaluate_returns_every_ranking_measure_in_declaration_order():
    from scipy.sparse import csr_array

    per_query = evaluate([[0, 1]], csr_array([[0, 1.0]]), [1, 2])
    declared = [m for m in MEASURES.values() if m.compute is not None]
    expected = [f"{m.name}@{k}" for k in (1, 2) for m in declared if m.parameter == "k"]
    expected += [m.name for m in declared if m.parameter is None]
    assert list(per_query)[2:] == expected


def test_the_context_view_computes_the_declared_context_measures():
    declared = tuple(name for name, m in MEASURES.items() if m.views == ("context",))
    assert declared == CONTEXT_METRICS
    assert all(MEASURES[name].compute is None for name in declared)  # computed by views.py


def test_the_plot_declaration_draws_every_retriever_from_the_rows():
    """dvc.yaml's plot reads columns the rows hold, and its template colours by the rows'
    retriever field: no list of registered names to keep in step."""
    plot = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]["score"]["plots"][0]
    ((path, spec),) = plot.items()
    metrics = {"synthetic": {name: {"recall@1": 0.5} for name in REGISTRY}}
    rows = recall_plot_rows(metrics, [1])
    assert {row["retriever"] for row in rows} == set(REGISTRY)
    assert {spec["x"], spec["y"]} <= set(rows[0])
    template = (ROOT / ".dvc/plots" / f"{spec['template']}.json").read_text()
    assert '"field": "retriever"' in template
    assert not [name for name in REGISTRY if f'"{name}"' in template]
    assert path == "plots/recall_at_k.json"


def docs_text(page: str) -> str:
    """A page of the documentation site, docs/<page>."""
    return (ROOT / "docs" / page).read_text(encoding="utf-8")


def test_the_docs_metric_table_is_the_declarations():
    assert metric_table() in docs_text("reading-results.md")


def test_every_params_field_of_a_retriever_is_reachable_from_params():
    assert json.loads(Params().model_dump_json())["retrievers"].keys() == REGISTRY.keys()


def test_each_retriever_module_of_the_package_declares_its_entry():
    """Importing the package imports every module in it: a new retriever is one new file."""
    import goldenset.scoring.retrievers as package

    modules = {info.name for info in pkgutil.iter_modules(package.__path__)}
    declared = {REGISTRY[name].build.__module__.rpartition(".")[2] for name in ranking_order()}
    assert declared == modules - {"base"}
    assert REGISTRY["bm25"].params.__module__ == "goldenset.scoring.retrievers.lexical"


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
