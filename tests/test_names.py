"""Words that mean one thing (docs/glossary.md): `judged` names a query set's judgments (an
ItemJudgments) and never the judge's probabilities, which the judge's side of the code calls
its pass probabilities (p_pass, judge_probabilities)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "src" / "goldenset"
# where the judge's probabilities live: no identifier `judged` at all
JUDGE_SIDE = ["review", "judge", "audit", "stages/audit.py", "stages/generate.py"]


def identifiers(tree: ast.AST, word: str) -> list[ast.AST]:
    """The nodes binding or reading an identifier named `word`."""
    named = []
    for node in ast.walk(tree):
        name = {
            ast.Name: lambda n: n.id,
            ast.arg: lambda n: n.arg,
            ast.Attribute: lambda n: n.attr,
            ast.FunctionDef: lambda n: n.name,
        }.get(type(node), lambda n: None)(node)
        if name == word:
            named.append(node)
    return named


def modules(*parts: str) -> list[Path]:
    found = []
    for part in parts:
        path = PACKAGE / part
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def test_the_judges_side_never_calls_anything_judged():
    found = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in modules(*JUDGE_SIDE)
        for node in identifiers(ast.parse(path.read_text(encoding="utf-8")), "judged")
    ]
    assert found == []


def annotations(tree: ast.AST, word: str) -> list[tuple[int, str]]:
    """(line, annotation) of each argument or field named `word` that has one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.arg == word and node.annotation is not None:
            found.append((node.lineno, ast.unparse(node.annotation)))
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.target).endswith(word):
            found.append((node.lineno, ast.unparse(node.annotation)))
    return found


def test_an_annotated_judged_is_an_item_judgments():
    seen, wrong = 0, []
    for path in modules("."):
        for line, annotation in annotations(ast.parse(path.read_text(encoding="utf-8")), "judged"):
            seen += 1
            if "ItemJudgments" not in annotation:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} {annotation}")
    assert seen and wrong == []


def test_the_checks_see_a_judged_of_another_kind():
    tree = ast.parse("def f(judged: dict[str, float]):\n    judged = 1\n")
    assert len(identifiers(tree, "judged")) == 2
    assert annotations(tree, "judged") == [(1, "dict[str, float]")]
