"""The one door for a team's own code: a ``module:function`` imported from a folder of the
project (its files part of the retriever's identity), and its answers, asked a batch of
questions at a time and kept by that identity (goldenset.retrieval.query_cache).

retrievers.external's callable (it ranks goldenset's chunk ids) and the stores built by the
team's callable (retrievers.langchain, retrievers.llamaindex: they answer with passages) both
come in through here.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib.machinery import ModuleSpec, PathFinder
from importlib.util import module_from_spec
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from goldenset.core.errors import GoldensetError
from goldenset.core.specs import FunctionName, parse_spec

if TYPE_CHECKING:
    from goldenset.core.ranked import TopK
    from goldenset.retrieval.query_cache import QueryCache

# the folder a team's ``module:function`` is imported from; its files are the code's identity
CodeFolder = Annotated[
    str,
    Field(
        min_length=1,
        description="the retriever's files, a dep of score; its module imports from the folder "
        "holding this one",
    ),
]


def team_function(spec: str, folder: str, section: str, field: str = "callable") -> Callable:
    """``module:function`` imported from ``folder`` (``section``.``field`` names it in errors)."""
    name = parse_spec(spec)
    # the user's module sits in `folder`, named from the folder above it (the project folder
    # for external/, the repository's top for ../search), or in the project folder itself
    roots = list(dict.fromkeys([Path(folder).resolve().parent, Path.cwd()]))
    try:
        module = import_from(name, roots)
    except NameClash as clash:
        raise GoldensetError(f"{section}.{field}: {clash}") from None
    except ImportError as error:
        raise GoldensetError(
            f"{section}.{field}: cannot import {name.module!r} ({error}); put the module in "
            f"{section}.folder, e.g. external/<name>.py named external.<name>"
        ) from None
    function = getattr(module, name.function, None)
    if not callable(function):
        raise GoldensetError(
            f"{section}.{field}: {name.module!r} has no function {name.function!r}"
        )
    return function


class NameClash(GoldensetError):
    """The team's top package has the name of a module the team did not write, already
    imported: loading the team's would evict it for the whole process."""


# the top packages import_from loaded from a team's folder, by name: those it may load again
# from another folder (two projects in one process), as no other module is ever evicted
_TEAM_PACKAGES: dict[str, ModuleType] = {}


def import_from(name: FunctionName, roots: Sequence[Path]) -> ModuleType:
    """The module `name` names, its top package (or module) found in the first of `roots` holding
    it, else on the usual import path; `sys.path` is left as it was. A top of that name the team
    wrote, loaded before from another place, is loaded again from here (two projects in one
    process); a module of that name it did not write (a library) is a :class:`NameClash`."""
    top = name.top
    located = next(
        (spec for root in roots if (spec := PathFinder.find_spec(top, [str(root)]))), None
    )
    loaded = sys.modules.get(top)
    if located is not None and _location(loaded) != _location(located):
        if loaded is not None:
            _check_team_wrote(top, loaded, located, roots)
            _forget(top)
        _TEAM_PACKAGES[top] = _load(top, located)
    return importlib.import_module(name.module)


def _check_team_wrote(
    top: str, loaded: ModuleType, located: ModuleSpec, roots: Sequence[Path]
) -> None:
    """A NameClash unless ``loaded`` is the team's: loaded by import_from, or what one of
    ``roots`` holds (imported the usual way from the project folder; a namespace package may
    span that folder and others on sys.path)."""
    in_roots = {
        place for root in roots for place in _places(PathFinder.find_spec(top, [str(root)]))
    }
    if _TEAM_PACKAGES.get(top) is loaded or _places(loaded) & in_roots:
        return
    raise NameClash(
        f"the team's package {top!r} ({_where(located)}) has the name of a library already "
        f"imported from {_where(loaded)}; rename the team's package (and the module:function "
        "naming it) so that both can be imported"
    )


def _forget(top: str) -> None:
    """The team's package and its modules out of sys.modules, to be imported again."""
    for loaded in [key for key in sys.modules if key == top or key.startswith(top + ".")]:
        del sys.modules[loaded]


def _load(top: str, located: ModuleSpec) -> ModuleType:
    package = module_from_spec(located)
    sys.modules[top] = package
    try:
        if located.loader is not None:  # a namespace package (a folder only) has none
            located.loader.exec_module(package)
    except BaseException:
        del sys.modules[top]
        raise
    return package


def _where(what: ModuleType | ModuleSpec) -> str:
    """Where a module or spec comes from, for a message: its file, or its first folder."""
    location = _location(what)
    if isinstance(location, tuple):
        return location[0] if location else repr(what)
    return str(location or getattr(what, "__file__", None) or repr(what))


def _places(what: ModuleType | ModuleSpec | None) -> set[str]:
    """Each file or folder a module or spec comes from."""
    location = _location(what)
    if location is None:  # no spec: nowhere, matching nothing
        return set()
    return {str(place) for place in location} if isinstance(location, tuple) else {str(location)}


def _location(what: ModuleType | ModuleSpec | None) -> object:
    """Where a module or spec comes from: its file, or a namespace package's folders."""
    spec = what if isinstance(what, ModuleSpec) or what is None else getattr(what, "__spec__", None)
    if spec is None:
        return None
    return spec.origin or tuple(spec.submodule_search_locations or ())


def team_object(section: str, field: str, spec: str, folder: str) -> Any:
    """What the team's ``module:function`` returns, called with no arguments; one line when it
    cannot be imported or fails."""
    function = team_function(spec, folder, section, field)
    try:
        return function()
    except Exception as error:  # the team's code, or the store it opens: any error
        raise GoldensetError(f"{section}.{field}: {spec} failed ({first_line(error)})") from error


def code_identity(folder: str) -> str:
    """The folder's files, hashed: a change to the team's code is a new retriever."""
    from goldenset.retrieval.query_cache import folder_digest

    return folder_digest(Path(folder))


def first_line(error: Exception) -> str:
    """An error as one line: its type and the first line of its message (300 characters)."""
    reason = (str(error).strip().splitlines() or [""])[0][:300]
    return f"{type(error).__name__}: {reason}"


def ask_missing(
    cache: QueryCache,
    keys: Sequence[str],
    texts: Sequence[str],
    batch_size: int,
    label: str,
    ask: Callable[[list[str]], Sequence[Any]],
) -> list[Any]:
    """Each question's answer: from the cache, or asked a batch at a time (``ask``: the texts
    of a batch -> one answer per text, as the cache keeps it). Each batch's answers are kept as
    they come, so a failure loses none of them."""
    missing = [i for i, key in enumerate(keys) if cache.get(key) is None]
    for batch in _batches(missing, batch_size, label):
        for i, answer in zip(batch, ask([texts[i] for i in batch]), strict=True):
            cache.put(keys[i], answer)
    return [cache.get(key) for key in keys]


def _batches(rows: list[int], size: int, label: str) -> Iterator[list[int]]:
    """The rows a batch at a time, with a progress bar for more than one."""
    from tqdm import tqdm

    batches = [rows[start : start + size] for start in range(0, len(rows), size)]
    yield from tqdm(batches, desc=label, unit="batch", disable=len(batches) < 2)


def plain(entry: object) -> str | list:
    """An answer's entry as JSON keeps it: an id, or [id, score] (a numpy score as a float)."""
    if isinstance(entry, str):
        return entry
    item, score = entry  # type: ignore[misc]
    return [str(item), float(score)]


def check_answer_count(answer: object, n_queries: int, origin: str) -> None:
    if not isinstance(answer, Sequence) or len(answer) != n_queries:
        raise GoldensetError(
            f"retrievers.external: {origin} must return one ranked list per query "
            f"({n_queries}), got {type(answer).__name__}"
            + (f" of {len(answer)}" if isinstance(answer, Sequence) else "")
        )


def parse_ranked_ids(answer: object, item_ids: list[str], n_queries: int, origin: str) -> TopK:
    """Per-query lists of ids or (id, score) pairs -> a run; scores default to 1/rank."""
    from goldenset.core.ranked import padded, rank_score

    check_answer_count(answer, n_queries, origin)
    assert isinstance(answer, Sequence)
    index_of = {item: position for position, item in enumerate(item_ids)}
    depth = max((len(ranked) for ranked in answer), default=0)
    found = padded(n_queries, depth)
    for row, ranked in enumerate(answer):
        for column, entry in enumerate(ranked):
            item, score = (entry, None) if isinstance(entry, str) else entry
            position = index_of.get(str(item))
            if position is None:
                raise GoldensetError(
                    f"retrievers.external: {origin} ranked unknown chunk id {item!r} for query "
                    f"{row}; return ids from the chunk_ids it was given"
                )
            found.indices[row, column] = position
            found.scores[row, column] = rank_score(score, column + 1)
    return found
