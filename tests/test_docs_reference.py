"""The documentation site: its reference pages are generated from the code and name everything
they document, and `mkdocs build --strict` passes, without torch, and fails on a broken internal
link."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from pydantic import BaseModel

import goldenset
from docs.reference import commands_page, metrics_page, params_page, retrievers_page, stages_page
from goldenset.cli import parser
from goldenset.core.moved import new_home
from goldenset.core.params import section_model
from goldenset.evaluation.measures import MEASURES
from goldenset.params import Params
from goldenset.retrieval.retrievers import RETRIEVERS
from tests.conftest import ROOT


def shipped_keys(model: type[BaseModel], shown: dict, where: str = "") -> list[str]:
    """Dotted keys of params.yaml, walked where the model has a section: the entries of a value
    that is itself a mapping or a list (calibrate.views, compare.budgets, generate.prices) are
    free-form, named by the user, not params."""
    keys = []
    for name, value in shown.items():
        dotted = f"{where}{name}"
        keys.append(dotted)
        field = model.model_fields.get(name)
        inner = section_model(field.annotation) if field is not None else None
        if inner is not None and isinstance(value, dict):
            keys += shipped_keys(inner, value, dotted + ".")
    return keys


def keys_not_on(page: str) -> list[str]:
    """The dotted keys of the shipped params.yaml that a params page does not show: a value is
    a row of its section's table, a section a heading of its own."""
    shown = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    keys = shipped_keys(Params, shown)
    assert "retrievers.bm25.k1" in keys and "generate.local.n_ctx" in keys
    assert "calibrate.views.chunk" not in keys  # a user's name, not a param
    return [key for key in keys if f"`{key}`" not in page and f"# {key}\n" not in page]


def test_every_params_yaml_key_is_on_the_params_page():
    page = params_page((ROOT / "params.yaml").read_text(encoding="utf-8"))
    assert keys_not_on(page) == []
    # and a key left off the page is seen
    assert keys_not_on(page.replace("`retrievers.bm25.k1`", "")) == ["retrievers.bm25.k1"]
    assert keys_not_on(page.replace("### generate.local\n", "")) == ["generate.local"]


def test_the_params_page_shows_types_defaults_and_descriptions():
    page = params_page((ROOT / "params.yaml").read_text(encoding="utf-8"))
    assert "| `chunk.max_size` | integer | `600` | characters, or tokens for strategy" in page
    assert "| `compare.gate` | list[string] | required |" in page
    # a field without a description in the model shows its params.yaml comment
    assert "| `score.depth` | integer | `100` | results kept per question |" in page


def test_every_metric_is_on_the_metrics_page():
    page = metrics_page()
    for measure in MEASURES.values():
        assert f"`{measure.spelled()}`" in page
        assert measure.definition.split("`")[0] in page
        if measure.reference:
            assert f"`{measure.reference}`" in page


def test_every_retriever_is_on_the_retrievers_page():
    page = retrievers_page()
    for name, entry in RETRIEVERS.items():
        assert f"## {name}\n" in page
        for field in entry.params.model_fields:
            assert f"`retrievers.{name}.{field}`" in page


def test_every_command_option_is_on_the_commands_page():
    page = commands_page()
    main = parser()
    (commands,) = [a for a in main._actions if isinstance(a, argparse._SubParsersAction)]
    assert commands.choices
    for name, sub in commands.choices.items():
        assert f"## goldenset {name}\n" in page
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            spelled = ", ".join(action.option_strings) or action.metavar or action.dest
            assert f"`{spelled}`" in page, (name, spelled)


def test_every_stage_output_is_on_the_stages_page():
    text = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    page = stages_page(text)
    stages = yaml.safe_load(text)["stages"]
    for name, stage in stages.items():
        assert f"## {name}\n" in page
        for kind in ("outs", "metrics", "plots"):
            for entry in stage.get(kind) or []:
                path = next(iter(entry)) if isinstance(entry, dict) else entry
                assert f"`{path}`" in page, (name, path)
    # and the stage's comment in dvc.yaml describes it
    assert "documents -&gt; chunks with character offsets" in page


# The site builds without these (docs/requirements.txt has none of them): a build that imports
# one fails, as it would in CI's environment for the docs
HEAVY = ("torch", "sentence_transformers", "transformers", "faiss")
MKDOCS_WITHOUT_HEAVY = (
    f"import sys\nfor name in {HEAVY!r}:\n    sys.modules[name] = None\n"
    "from mkdocs.__main__ import cli\ncli()"
)


def build(root, site) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", MKDOCS_WITHOUT_HEAVY, "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def copy_site_sources(to):
    """docs/ copied (a test edits it); every other file of the repository's top copied and every
    folder linked, so the pages' figures, the changelog and src/ are there."""
    shutil.copytree(ROOT / "docs", to / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    for entry in ROOT.iterdir():
        if entry.name.startswith(".") or entry.name in ("docs", "site"):
            continue
        if entry.is_dir():
            (to / entry.name).symlink_to(entry, target_is_directory=True)
        else:
            shutil.copy(entry, to / entry.name)


def needs_site_tools() -> None:
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason="the site's tools: pip install -r docs/requirements.txt")


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path):
    needs_site_tools()
    copy_site_sources(tmp_path)
    built = build(tmp_path, tmp_path / "site")
    assert built.returncode == 0, built.stderr
    site = tmp_path / "site"
    for page in ("params", "metrics", "retrievers", "commands", "stages"):
        assert (site / "reference" / page / "index.html").is_file()
    # generated at build time, never written into docs/
    assert not (tmp_path / "docs" / "reference").exists()
    # the version and the repository from pyproject.toml, on every page
    index = (site / "index.html").read_text(encoding="utf-8")
    assert f"goldenset-rag {goldenset.__version__}" in index
    assert 'href="https://github.com/goldenset-rag/goldenset"' in index
    # the API page from the docstrings: a field documented by its comment, a Sphinx role shown
    # as the name alone
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "goldenset.core.registry.Registry" in api and "RetrieverEntry" in api
    assert "lower first (equal orders keep the order of registration)" in api
    assert ":class:" not in api and ":func:" not in api
    # the top-level CHANGELOG.md, included; the stylesheet that keeps names whole in tables
    changelog = (site / "changelog" / "index.html").read_text(encoding="utf-8")
    assert f"{goldenset.__version__} — unreleased" in changelog
    assert "stylesheets/extra.css" in index and (site / "stylesheets" / "extra.css").is_file()
    # the build's own files are not pages
    assert not list(site.rglob("*.py")) and not (site / "requirements.txt").exists()
    assert not (site / "_snippets").exists()
    # one "Before you start" block on every tutorial, its install line filled (no git here: the
    # version's tag)
    for tutorial in (site / "tutorials").glob("*/index.html"):
        text = tutorial.read_text(encoding="utf-8")
        assert "Before you start" in text, tutorial
        assert f"goldenset@v{goldenset.__version__}" in text and "install_ref" not in text, tutorial


@pytest.mark.slow
def test_a_broken_internal_link_fails_the_strict_build(tmp_path):
    needs_site_tools()
    copy_site_sources(tmp_path)
    index = tmp_path / "docs" / "index.md"
    index.write_text(
        index.read_text(encoding="utf-8") + "\nSee [nowhere](no-such-page.md).\n",
        encoding="utf-8",
    )
    built = build(tmp_path, tmp_path / "site")
    assert built.returncode != 0
    assert "no-such-page.md" in built.stderr


def test_the_plugin_retriever_on_the_development_page_is_the_tested_one():
    """The page shows the toy retriever the plugin test installs, in full and under 30 lines, at
    today's module paths (the toy keeps the old ones, which work until they are removed)."""
    plugin = ROOT / "tests" / "toy_plugins" / "goldenset-toy-search" / "goldenset_toy_search.py"
    code = plugin.read_text(encoding="utf-8")
    assert len(code.splitlines()) <= 30
    code = re.sub(r"goldenset(\.\w+)+", lambda path: new_home(path[0]) or path[0], code)
    assert f"```python\n{code}```" in (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
