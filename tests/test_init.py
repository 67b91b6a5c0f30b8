"""What `goldenset init` writes comes from this repository's own dvc.yaml and params.yaml: one
source of truth, and --upgrade adds params without touching the user's values."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata

import pytest
import yaml

from goldenset.core.errors import GoldensetError
from goldenset.demo import DEMO, DEMO_DOCUMENTS, demo_files, read_demo
from goldenset.init import (
    CODE,
    EXTRA_REASONS,
    MANIFEST,
    STORE_EXTRAS,
    TEMPLATES,
    _dump,
    _round_trip,
    add_missing,
    ci_extras,
    pipeline,
    requirement,
)
from goldenset.init import render_params as render
from goldenset.params import Params, parse_params
from goldenset.retrieval.retrievers import stores
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
REPOSITORY = "https://github.com/goldenset-rag/goldenset"


@pytest.mark.parametrize(
    "direct",
    [
        None,  # from an index
        {},
        {"url": "file:///home/me/goldenset_rag-0.1.0-py3-none-any.whl", "archive_info": {}},
        {"url": "https://example.org/goldenset_rag-0.1.0.tar.gz", "archive_info": {}},
    ],
)
def test_ci_installs_a_release_from_its_tag_in_the_repository(direct):
    assert requirement(direct, "0.1.0", ["local", "s3"], REPOSITORY) == (
        f"goldenset-rag[local,s3] @ git+{REPOSITORY}@v0.1.0"
    )
    assert (
        requirement(direct, "0.1.0", [], REPOSITORY) == f"goldenset-rag @ git+{REPOSITORY}@v0.1.0"
    )


def test_a_release_without_a_repository_url_is_refused_in_one_line():
    with pytest.raises(GoldensetError) as refused:
        requirement(None, "0.1.0", ["local"], None)
    assert "\n" not in str(refused.value)
    assert "Project-URL Repository" in str(refused.value) and "--package" in str(refused.value)


def test_ci_installs_the_commit_a_git_install_came_from():
    direct = {
        "url": "https://github.com/someone/goldenset",
        "vcs_info": {"vcs": "git", "commit_id": COMMIT, "requested_revision": "main"},
    }
    assert requirement(direct, "0.1.0", ["chroma", "local"], REPOSITORY) == (
        f"goldenset-rag[chroma,local] @ git+https://github.com/someone/goldenset@{COMMIT}"
    )


@pytest.mark.parametrize(
    "direct",
    [
        {"url": "file:///home/me/goldenset", "dir_info": {"editable": True}},
        {"url": "file:///home/me/goldenset", "dir_info": {}},
        {"url": "file:///home/me/goldenset", "vcs_info": {"vcs": "git", "commit_id": COMMIT}},
    ],
)
def test_a_local_install_is_refused_in_one_line_that_says_how(direct):
    with pytest.raises(GoldensetError) as refused:
        requirement(direct, "0.1.0", ["local"], REPOSITORY)
    message = str(refused.value)
    assert "\n" not in message
    assert "installed from a local path (/home/me/goldenset)" in message
    assert f'--package "goldenset-rag[local] @ git+{REPOSITORY}@<commit>"' in message


def with_changes(**changes: dict) -> dict:
    """The params `goldenset init` writes, sections changed (retrievers__chroma: a nested one)."""
    params = yaml.safe_load(_dump(render("../docs", None, real_queries=True)))
    for where, values in changes.items():
        section = params
        for key in where.split("__"):
            section = section[key]
        section.update(values)
    return params


def test_ci_extras_follow_the_params_and_the_remote():
    assert ci_extras(with_changes(), []) == ["local"]  # the local writer and the judge
    paid = {"generate": {"provider": "anthropic"}}
    assert ci_extras(with_changes(**paid), []) == ["local"]  # still the judge
    no_model = {**paid, "audit": {"judge_sample": 0}}
    assert ci_extras(with_changes(**no_model), []) == []
    assert ci_extras(with_changes(**paid, audit={"judge_sample": None}), []) == ["local"]
    assert ci_extras(with_changes(**no_model), ["s3://bucket/dvc", "/mnt/dvc"]) == ["s3"]
    assert ci_extras(with_changes(**no_model), ["gs://bucket", "/mnt/s3://x"]) == []
    several = with_changes(
        **no_model,
        embed={"engine": "ray"},
        retrievers__postgres={"enabled": True},
        retrievers__chroma={"enabled": True},
    )
    assert ci_extras(several, ["s3://bucket"]) == ["chroma", "postgres", "ray", "s3"]
    for name in STORE_EXTRAS:
        enabled = {f"retrievers__{name}": {"enabled": True}}
        assert ci_extras(with_changes(**no_model, **enabled), []) == [name]


def test_every_extra_init_chooses_is_one_of_the_package_and_every_store_has_its_own():
    extras = set(metadata.metadata("goldenset-rag").get_all("Provides-Extra"))
    assert set(EXTRA_REASONS) <= extras
    assert set(STORE_EXTRAS) == set(stores())  # a new store adapter: add its extra


def test_the_example_is_markdown_documents_and_their_real_queries_in_the_beir_layout():
    docs = [
        {"_id": "7", "title": "Seven", "text": "Body."},
        {"_id": "8", "title": "T", "text": "B"},
    ]
    queries = ['{"_id": "q1", "text": "seven?"}']
    files = demo_files(docs, queries, [["q1", "7", "1"]])
    assert files == {
        "7.md": "# Seven\n\nBody.\n",
        "8.md": "# T\n\nB\n",
        "queries.jsonl": '{"_id": "q1", "text": "seven?"}\n',
        "qrels.tsv": "query-id\tcorpus-id\tscore\nq1\t7.md\t1\n",
    }


CODE_FILES = {"README.md", "__init__.py", "pdf.py", "__pycache__"}  # beside the data, not cut


def test_the_shipped_example_is_what_the_script_cuts_from_the_sample(tmp_path):
    script = ROOT / "data" / "make_demo_docs.py"
    subprocess.run([sys.executable, script, tmp_path], cwd=ROOT, check=True, capture_output=True)
    shipped = sorted(path.name for path in DEMO.iterdir() if path.name not in CODE_FILES)
    assert shipped == sorted(path.name for path in tmp_path.iterdir())
    for name in shipped:
        assert (DEMO / name).read_bytes() == (tmp_path / name).read_bytes(), name
    docs, queries, qrels = read_demo(DEMO_DOCUMENTS)
    assert len(docs) == DEMO_DOCUMENTS and queries and qrels


def test_init_takes_the_users_queries_from_a_file_or_typed(tmp_path):
    from goldenset.init import EXAMPLES_FILE, Options, example_lines, init

    lines = tmp_path / "queries.txt"
    lines.write_text("how do I restore a backup?\n\n  rotate the api key  \n")
    beir = tmp_path / "queries.jsonl"
    beir.write_text('{"_id": "q1", "text": "vitamin D and fractures", "doc_id": 7}\n')
    typed = ["What does the storage team restore?"]
    assert example_lines(Options(tmp_path, examples=lines, typed_examples=typed)) == [
        {"_id": "example-1", "text": "how do I restore a backup?"},
        {"_id": "example-2", "text": "rotate the api key"},
        {"_id": "example-3", "text": "What does the storage team restore?"},
    ]
    assert example_lines(Options(tmp_path, examples=beir)) == [
        {"_id": "example-1", "text": "vitamin D and fractures", "doc_id": "7"}
    ]
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    for bad, message in [(empty, "holds no query"), (tmp_path / "absent.txt", "not a file")]:
        with pytest.raises(GoldensetError, match=message):
            example_lines(Options(tmp_path, examples=bad))
    # init copies them where the generate stage reads them, and its params name the file
    repository = tmp_path / "repository"
    (repository / "docs").mkdir(parents=True)
    (repository / "docs" / "a.md").write_text("# A\n\nSome text.\n")
    subprocess.run(["git", "init", "-q"], cwd=repository, check=True)
    options = Options(
        repository / "goldenset", repository / "docs", examples=lines, typed_examples=typed
    )
    said = init(options)
    written = repository / "goldenset"
    params = parse_params(yaml.safe_load((written / "params.yaml").read_text()))
    assert params.generate.example_queries == EXAMPLES_FILE
    examples = (written / EXAMPLES_FILE).read_text().splitlines()
    assert [json.loads(line)["text"] for line in examples][-1] == typed[0]
    assert any("3 example queries in examples/queries.jsonl" in line for line in said)
