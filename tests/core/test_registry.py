"""The one registry idiom of every extension point: entries in a stable order whatever was
imported first, built-in modules imported when first read, plugins through entry points, clear
errors."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata

import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.registry import EXTENSION_POINTS, Registry, plugin_versions


@dataclass(frozen=True)
class Entry:
    value: int
    order: int = 0


def test_an_entry_is_read_by_name_and_an_unknown_name_lists_the_known_ones():
    registry: Registry[Entry] = Registry("toy", "metrics", [])
    registry.register("b", Entry(1))
    registry.register("a", Entry(2))
    assert registry["a"] == Entry(2) and "b" in registry and len(registry) == 2
    assert registry.names() == ["b", "a"]  # registration order within a module
    with pytest.raises(GoldensetError, match=r"unknown toy 'c'; use one of \['b', 'a'\]"):
        registry.get_entry("c")
    registry.unregister("b")
    assert registry.names() == ["a"]


def test_order_comes_first_then_the_built_in_modules_then_the_rest():
    registry: Registry[Entry] = Registry("toy", "metrics", [])
    registry.register("late", Entry(1, order=5))
    registry.register("early", Entry(1, order=1))
    assert registry.names() == ["early", "late"]


def test_a_registrys_order_does_not_depend_on_which_module_is_imported_first():
    # the context measures (views) imported before the ranking ones: still listed after them
    script = (
        "import goldenset.evaluation.views\n"
        "from goldenset.evaluation.measures import MEASURES\n"
        "print(list(MEASURES))\n"
    )
    process = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert process.stdout.split("'")[1::2] == [
        "recall",
        "hit",
        "ndcg",
        "precision",
        "mrr",
        "context_recall",
        "context_precision",
        "context_iou",
        "context_hit",
        "recall_loss",
    ]


def test_the_built_in_modules_load_when_the_registry_is_first_read():
    script = (
        "import sys\n"
        "from goldenset.retrieval.retrievers.base import RETRIEVERS\n"
        "print('goldenset.retrieval.retrievers.fusion' in sys.modules)\n"
        "print(list(RETRIEVERS))\n"
        "print('goldenset.retrieval.retrievers.fusion' in sys.modules)\n"
    )
    process = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    before, names, after = process.stdout.splitlines()
    assert (before, after) == ("False", "True")
    stores = "'chroma', 'langchain', 'llamaindex', 'postgres', 'qdrant'"
    assert names == f"['dense', 'bm25', 'tfidf', 'ann', 'external', 'hybrid', {stores}]"


def test_a_registry_is_itself_and_not_its_entries():
    one: Registry[Entry] = Registry("toy", "metrics", [])
    other: Registry[Entry] = Registry("toy", "metrics", [])
    assert one != other and one == one and len({one, other}) == 2


def test_an_entry_with_settings_of_its_own_names_its_params_model():
    @dataclass(frozen=True)
    class WithParams:
        params: type | None = None

    registry: Registry[WithParams] = Registry("toy", "chunking", [])
    registry.register("plain", WithParams())
    registry.register("tuned", WithParams(int))
    assert registry.with_params() == {"tuned": int}


def test_a_plugin_that_fails_to_load_names_itself(monkeypatch):
    broken = metadata.EntryPoint("broken", "no_such_module_anywhere", "goldenset.metrics")

    def entry_points(group: str):
        return [broken] if group == "goldenset.metrics" else []

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    registry: Registry[Entry] = Registry("metric", "metrics", [])
    with pytest.raises(GoldensetError, match="plugin 'broken' .* failed to load: .*uninstall"):
        registry.names()


def test_every_extension_point_has_an_entry_point_group_and_no_plugin_here():
    assert EXTENSION_POINTS == ("retrievers", "providers", "metrics", "chunking", "query_sets")
    assert all(plugin_versions(point) == {} for point in EXTENSION_POINTS)
