"""The package's imports: no circle between modules, and no import back up the layers.

Every `import` and `from ... import` of a goldenset module counts, those inside functions and
those for type checkers too: a circle through a type-checking import is still a circle to a
reader."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "src" / "goldenset"
# lowest first: a package imports only from the layers below its own (never a sibling)
LAYERS = [
    ["core"],
    ["corpus"],
    ["chunking", "embedding", "generation"],
    # makes runs (a retriever: queries and a depth to a run keyed by id); never sees judgments
    ["retrieval"],
    # judges runs against qrels; of retrieval it imports the run alone (below)
    ["evaluation"],
    # the wiring: reads a project, scores each chunking, writes the outputs
    ["judge", "scoring"],
    ["audit", "calibrate", "compare", "review"],
    ["stages", "params"],
    # the package's own face: __version__, goldenset.evaluate
    ["goldenset"],
    ["init", "demo"],
    ["cli"],
    # run with `python -m`, imported by no module: the command line's entry and the loopback
    # stand-in for the LLM APIs that the docs' pages and the tests start
    ["__main__", "llm_stand_in"],
]


def module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the goldenset modules it imports."""
    modules = {module_name(path, package): path for path in package.rglob("*.py")}
    found: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            found[name] |= {target for target in targets if target in modules and target != name}
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


def top_package(module: str) -> str:
    """goldenset.retrieval.retrievers.dense -> scoring; goldenset.cli -> cli."""
    return module.split(".")[1] if "." in module else module


def arrows_up(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a package into its own layer or one above it."""
    layer = {name: number for number, names in enumerate(LAYERS) for name in names}
    wrong = []
    for module, targets in graph.items():
        source = top_package(module)
        for target in targets:
            into = top_package(target)
            if source == into or into == "goldenset":  # __version__
                continue
            if layer[into] >= layer[source]:
                wrong.append(f"{module} -> {target}")
    return sorted(wrong)


def test_no_module_imports_itself_through_others():
    graph = imports()
    assert len(graph) > 50
    assert circles(graph) == []


def test_no_package_imports_from_its_layer_or_above():
    graph = imports()
    packages = {top_package(module) for module in graph}
    assert packages <= {name for names in LAYERS for name in names}
    assert arrows_up(graph) == []


def reaches_into(graph: dict[str, set[str]], source: str, into: str) -> set[str]:
    """The modules of package ``into`` that package ``source`` imports."""
    return {
        target
        for module, targets in graph.items()
        if top_package(module) == source
        for target in targets
        if top_package(target) == into
    }


def test_the_evaluator_meets_retrieval_at_the_run_alone():
    """As in ranx and BEIR: a run and qrels meet in the evaluator. Retrieval never imports the
    evaluation (the layers), and the evaluation takes nothing from retrieval but the run."""
    graph = imports()
    assert reaches_into(graph, "evaluation", "retrieval") <= {"goldenset.retrieval.run"}
    assert reaches_into(graph, "retrieval", "evaluation") == set()


def test_the_checks_see_a_circle_and_an_arrow_up(tmp_path):
    package = tmp_path / "goldenset"
    (package / "core").mkdir(parents=True)
    (package / "scoring").mkdir()
    (package / "core" / "a.py").write_text("from goldenset.scoring.b import x\n")
    (package / "scoring" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from goldenset.core.a import y\n"
    )
    graph = imports(package)
    assert circles(graph) == [["goldenset.core.a", "goldenset.scoring.b"]]
    assert arrows_up(graph) == ["goldenset.core.a -> goldenset.scoring.b"]


# a package a newcomer reads first keeps each module to a few screens and each function to one;
# package -> (lines a module, lines a function)
SIZE_LIMITS = {
    "retrieval": (300, 60),
    "evaluation": (300, 60),
    "scoring": (300, 60),
    "calibrate": (300, 60),
}


def oversized(package: Path, module_lines: int, function_lines: int) -> list[str]:
    """Modules longer than ``module_lines`` and functions longer than ``function_lines``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(package.parent).as_posix()
        if len(text.splitlines()) > module_lines:
            found.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > function_lines:
                    found.append(f"{name}: {node.name}() {length} lines")
    return found


def test_the_packages_a_newcomer_reads_first_read_in_screens():
    for package, (module_lines, function_lines) in SIZE_LIMITS.items():
        assert oversized(PACKAGE / package, module_lines, function_lines) == []


def test_the_size_check_sees_a_long_function(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n" + "    x = 1\n" * 3)
    assert oversized(tmp_path, 10, 3) == [f"{tmp_path.name}/a.py: f() 4 lines"]
    assert oversized(tmp_path, 3, 60) == [f"{tmp_path.name}/a.py: 4 lines"]
