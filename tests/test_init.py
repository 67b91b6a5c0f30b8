"""What `goldenset init` writes comes from this repository's own dvc.yaml and params.yaml: one
source of truth, and --upgrade adds params without touching the user's values."""

from __future__ import annotations

import pytest
import yaml

from goldenset.core.errors import GoldensetError
from goldenset.init import (
    CODE,
    MANIFEST,
    TEMPLATES,
    _dump,
    _round_trip,
    add_missing,
    pipeline,
    requirement,
)
from goldenset.init import render_params as render
from goldenset.params import Params, parse_params
from tests.conftest import ROOT
from tests.test_project_files import missing_fields


def test_the_templates_are_this_repositorys_own_files():
    for template, own in [("pipeline.yaml", "dvc.yaml"), ("params.yaml", "params.yaml")]:
        assert (TEMPLATES / template).read_bytes() == (ROOT / own).read_bytes(), template


def test_the_written_pipeline_is_this_one_without_the_code_deps():
    own = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    written = pipeline({"stages": own})["stages"]
    assert list(written) == list(own)
    for name, stage in written.items():
        assert stage["cmd"] == own[name]["cmd"] == f"python -m goldenset.stages.{name}"
        assert stage["outs"] == own[name]["outs"] and stage.get("metrics") == own[name].get(
            "metrics"
        )
        assert stage["deps"] == [dep for dep in own[name]["deps"] if not dep.startswith(CODE)]
        assert stage["params"] == [*own[name].get("params", []), {MANIFEST: [f"code.{name}"]}]


def test_the_written_params_spell_out_every_param_and_point_at_the_documents():
    text = _dump(render("../docs", ("search.retrieve:search", "../search"), real_queries=False))
    written = yaml.safe_load(text)
    params = parse_params(written)
    assert missing_fields(Params, written) == []
    assert params.ingest.path == "../docs" and params.generate.example_queries is None
    assert params.retrievers.external.enabled and params.retrievers.external.folder == "../search"
    assert params.compare is not None and params.compare.gate
    assert all(gate.startswith("synthetic.external.") for gate in params.compare.gate)
    assert "# a folder of .md" in text  # the comments kept


def test_upgrade_adds_what_is_missing_and_keeps_every_value():
    new = render("../docs", None, real_queries=True)
    mine = _round_trip().load(_dump(new))
    mine["score"]["worst_misses"] = 4
    del mine["score"]["worst_misses_chars"]
    del mine["retrievers"]["bm25"]["k1"]
    mine["compare"]["budgets"] = {"ndcg@10": 0.01}  # a mapping value: never merged into
    added = add_missing(mine, new, Params)
    assert added == ["score.worst_misses_chars", "retrievers.bm25.k1"]
    merged = yaml.safe_load(_dump(mine))
    assert merged["score"]["worst_misses"] == 4 and merged["score"]["worst_misses_chars"] == 300
    assert list(merged["score"]) == list(yaml.safe_load(_dump(new))["score"])  # in its place
    assert merged["compare"]["budgets"] == {"ndcg@10": 0.01}


COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_ci_installs_from_the_index_under_the_distribution_name():
    assert requirement(None, "0.1.0") == "goldenset-rag[local]==0.1.0"
    assert requirement({}, "0.1.0") == "goldenset-rag[local]==0.1.0"


def test_ci_installs_the_commit_a_git_install_came_from():
    direct = {
        "url": "https://github.com/someone/goldenset",
        "vcs_info": {"vcs": "git", "commit_id": COMMIT, "requested_revision": "main"},
    }
    assert requirement(direct, "0.1.0") == (
        f"goldenset-rag[local] @ git+https://github.com/someone/goldenset@{COMMIT}"
    )


@pytest.mark.parametrize(
    "direct",
    [
        {"url": "file:///home/me/goldenset", "dir_info": {"editable": True}},
        {"url": "file:///home/me/goldenset", "dir_info": {}},
        {"url": "file:///home/me/goldenset", "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
        {"url": "file:///home/me/goldenset-rag-0.1.0.tar.gz", "archive_info": {}},
    ],
)
def test_a_local_install_is_refused_in_one_line_that_says_how(direct):
    with pytest.raises(GoldensetError) as refused:
        requirement(direct, "0.1.0")
    message = str(refused.value)
    assert "\n" not in message
    assert "installed from a local path (/home/me/goldenset" in message
    assert '--package "goldenset-rag[local] @ git+https://' in message
