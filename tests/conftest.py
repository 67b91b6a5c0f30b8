"""Fixtures shared by the whole suite."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from tests.support.dvc_project import ROOT  # the repository: tests import it from here

# Tests never reach a model hub: models come from installed packages or local folders.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# each worker's cores, the order the tests start in, and the tests that share a worker
pytest_plugins = ["tests.support.workers"]

SHARED_DATASETS = ROOT.parent / "shared" / "datasets"


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    folder = SHARED_DATASETS / "scifact"
    if not (folder / "corpus.jsonl.gz").exists():
        pytest.skip(f"SciFact test collection not found at {folder}")
    return folder


@pytest.fixture(scope="session")
def squad_file() -> Path:
    path = SHARED_DATASETS / "squad-superbowl50" / "squad-dev-v1.1-super-bowl-50.json"
    if not path.exists():
        pytest.skip(f"SQuAD Super Bowl 50 article not found at {path}")
    return path


def for_type_checkers(tree: ast.AST) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:``, which never run."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for statement in node.body
        for inner in ast.walk(statement)
    }


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium driven by Playwright (the system's browser: nothing is downloaded), one
    for the session: Playwright's sync API runs one event loop, so every test shares it."""
    from playwright.sync_api import sync_playwright

    from tests.browser import chromium

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield launched
        launched.close()
