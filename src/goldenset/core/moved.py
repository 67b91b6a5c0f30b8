"""The import paths of modules that moved when goldenset.scoring split into retrieval/ and
evaluation/ (goldenset.metrics went into evaluation/), kept working through 0.1.x and removed in
0.2.0: a plugin or notebook that imports ``goldenset.scoring.retrievers`` or
``goldenset.scoring.topk`` gets the module at its new home, and one FutureWarning per process
names it.

One finder on ``sys.meta_path`` serves every old path, submodules included, with the module
object itself: a registry read through an old path is the registry."""

from __future__ import annotations

import importlib
import sys
import warnings
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.util import spec_from_loader
from types import ModuleType

REMOVED_IN = "0.2.0"
# old prefix -> new prefix; the longest old prefix that names a module wins
MOVED = {
    "goldenset.metrics": "goldenset.evaluation",
    "goldenset.scoring.cover": "goldenset.core.cover",
    "goldenset.scoring.selection": "goldenset.core.selection",
    "goldenset.scoring.topk": "goldenset.core.topk",
    "goldenset.scoring.retrievers": "goldenset.retrieval.retrievers",
    "goldenset.scoring.stores": "goldenset.retrieval.stores",
    "goldenset.scoring.locate": "goldenset.retrieval.locate",
    "goldenset.scoring.team_code": "goldenset.retrieval.team_code",
    "goldenset.scoring.query_cache": "goldenset.retrieval.query_cache",
    "goldenset.scoring.retriever_params": "goldenset.retrieval.params",
    "goldenset.scoring.projection": "goldenset.evaluation.projection",
    "goldenset.scoring.ranked": "goldenset.evaluation.evaluator",
    "goldenset.scoring.evaluation": "goldenset.scoring.one_chunking",
    "goldenset.scoring.foreign": "goldenset.scoring.store_chunking",
}
_warned: list[str] = []


def new_home(name: str) -> str | None:
    """The module an old path names today; None for a path that did not move."""
    for old in sorted(MOVED, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return MOVED[old] + name[len(old) :]
    return None


def warn_moved(old: str, new: str) -> None:
    """The one warning of a process, at the first old path imported."""
    if _warned:
        return
    _warned.append(old)
    warnings.warn(
        f"{old} moved to {new}; goldenset's old module paths (goldenset.scoring's retrievers, "
        f"stores and topk, goldenset.metrics) work until {REMOVED_IN}: see the CHANGELOG",
        FutureWarning,
        stacklevel=2,
    )


class MovedFinder(MetaPathFinder, Loader):
    """Answers an old path with the module at its new home."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        home = new_home(name)
        return None if home is None else spec_from_loader(name, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        home = new_home(spec.name)
        assert home is not None
        module = importlib.import_module(home)
        warn_moved(spec.name, home)
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The module ran at its new home."""


def install() -> None:
    """Serve the old paths (once per process)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
