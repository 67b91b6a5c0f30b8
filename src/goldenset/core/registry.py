"""One way to add to goldenset, the same for every extension point: a :class:`Registry` of entries.

The five extension points each keep one registry beside their interface:

- retrievers: goldenset.retrieval.retrievers.base.RETRIEVERS (entry: RetrieverEntry);
- question writers: goldenset.generation.providers.registry.PROVIDERS (ProviderEntry);
- metrics: goldenset.evaluation.measures.MEASURES (Measure);
- chunking strategies: goldenset.chunking.base.STRATEGIES (Strategy);
- query sets: goldenset.corpus.querysets.QUERY_SETS (QuerySetEntry).

An entry is registered by the module that holds its code (``RETRIEVERS.register("dense",
RetrieverEntry(...))``); an entry with settings of its own names its params model (``params``),
and the params section of its extension point gets a field for it. A registry imports its
built-in modules and its plugins the first time it is read, so defining a params model that
names a registry (:class:`goldenset.core.registered.RegisteredName`) imports no entry code.

Plugins come through a Python entry-point group, one per registry (``goldenset.retrievers``,
...): an entry point names a module that registers its entries when imported, e.g. in a
plugin's pyproject.toml::

    [project.entry-points."goldenset.retrievers"]
    my_search = "my_package.search"

Each extension point's plugins and their versions (:func:`plugin_versions`) are what the plugins
stage writes, so that upgrading a plugin re-runs the stages it affects.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from typing import Any, Generic, TypeVar

from goldenset.core.errors import GoldensetError

Entry = TypeVar("Entry")

# the extension points: the entry-point group of each is goldenset.<name>
EXTENSION_POINTS = ("retrievers", "providers", "metrics", "chunking", "query_sets")


class Registry(Mapping[str, Entry], Generic[Entry]):
    """Entries by name, read-only as a mapping, in ``order`` (an entry's attribute, when it has
    one), then by where they were registered: the built-in modules in the order ``builtins``
    names them (a package's modules by name), then any other module; within a module, in the
    order it registers them. So the order never depends on which module was imported first."""

    def __init__(self, kind: str, point: str, builtins: Sequence[str]) -> None:
        assert point in EXTENSION_POINTS, point
        self.kind = kind  # what an entry is, for errors: "retriever"
        self.group = f"goldenset.{point}"  # the entry-point group of its plugins
        self.builtins = tuple(builtins)  # modules (or packages: every module in them) to import
        self.plugins: dict[str, str] = {}  # distribution -> version, of the plugins loaded
        self._entries: dict[str, Entry] = {}
        self._origin: dict[str, tuple[int, str, int]] = {}  # name -> where it was registered
        self._loaded = False

    __hash__ = object.__hash__  # a registry is itself, not its entries (a params annotation)

    def __eq__(self, other: object) -> bool:
        return self is other

    def register(self, name: str, entry: Entry) -> Entry:
        """Add (or replace) an entry; returns it."""
        # the registering module, read from the caller's frame, places the entry: one
        # `register` call is all an entry's module writes
        module = str(sys._getframe(1).f_globals.get("__name__", ""))
        self._entries[name] = entry
        self._origin[name] = (self._rank(module), module, len(self._origin))
        return entry

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)
        self._origin.pop(name, None)

    def _rank(self, module: str) -> int:
        """The position of the built-in module (or package) a module is, or len(builtins)."""
        for number, builtin in enumerate(self.builtins):
            if module == builtin or module.startswith(f"{builtin}."):
                return number
        return len(self.builtins)

    def get_entry(self, name: str) -> Entry:
        """The entry named; an error listing the names when there is none."""
        if name not in self:
            raise GoldensetError(f"unknown {self.kind} {name!r}; use one of {self.names()}")
        return self[name]

    def names(self) -> list[str]:
        return list(self)

    def with_params(self) -> dict[str, Any]:
        """The params model of each entry that has settings of its own, in order."""
        return {
            name: entry.params  # type: ignore[attr-defined]
            for name, entry in self.items()
            if getattr(entry, "params", None) is not None
        }

    def __getitem__(self, name: str) -> Entry:
        return self._ordered()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ordered())

    def __len__(self) -> int:
        return len(self._ordered())

    def _ordered(self) -> dict[str, Entry]:
        self.load()
        ranked = sorted(self._entries, key=lambda name: (self._order(name), self._origin[name]))
        return {name: self._entries[name] for name in ranked}

    def _order(self, name: str) -> int:
        return getattr(self._entries[name], "order", 0)

    def load(self) -> None:
        """Import the built-in modules, then the plugins, once."""
        if self._loaded:
            return
        self._loaded = True  # a module read while it registers sees the entries so far
        for name in self.builtins:
            module = importlib.import_module(name)
            for submodule in pkgutil.iter_modules(getattr(module, "__path__", []), f"{name}."):
                importlib.import_module(submodule.name)
        for plugin in metadata.entry_points(group=self.group):
            try:
                plugin.load()
            except Exception as error:  # a broken plugin names itself, not a traceback
                raise GoldensetError(
                    f"plugin {plugin.name!r} ({plugin.value}) of {self.group} failed to load: "
                    f"{error}; fix or uninstall it"
                ) from error
            if plugin.dist is not None:
                self.plugins[plugin.dist.name] = plugin.dist.version


def plugin_versions(point: str) -> dict[str, str]:
    """The plugins installed for one extension point (distribution -> version), loaded or not:
    what the plugins stage writes."""
    versions = {
        entry.dist.name: entry.dist.version
        for entry in metadata.entry_points(group=f"goldenset.{point}")
        if entry.dist is not None
    }
    return dict(sorted(versions.items()))
