"""Words that mean one thing, as docs/glossary.md defines them: `judged` names a query set's
judgments (an Qrels) and never the judge's probabilities, which the judge's side of the
code calls its pass probabilities (p_pass, judge_probabilities). And, under "Words in the code"
there: `query_set` is a query set's name (a str), `questions` one query set's questions as read
(a QuerySet), `found` a ranking's best items with their scores (a TopK), `example` one of the
example queries the question writer is shown (a str)."""

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
            if "Qrels" not in annotation:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line} {annotation}")
    assert seen and wrong == []


def test_the_checks_see_a_judged_of_another_kind():
    tree = ast.parse("def f(judged: dict[str, float]):\n    judged = 1\n")
    assert len(identifiers(tree, "judged")) == 2
    assert annotations(tree, "judged") == [(1, "dict[str, float]")]


# Four more words, each one kind of thing (docs/glossary.md, "Words in the code"): the
# annotations a binding of each name may carry
MEANINGS = {
    "query_set": {"str"},  # a query set's name: "synthetic", "real", "labelled"...
    "questions": {"QuerySet"},  # one query set's questions as read
    "found": {"TopK", "TopK | None"},  # a ranking's best items with their scores
    "example": {"str"},  # one example query the question writer is shown
}
# where rankings are read and measured: no identifier `found` anywhere else
RANKING_SIDE = [
    "core/ranked.py",
    "core/topk.py",
    "core/cover.py",
    "retrieval",
    "evaluation",
    "scoring",
]
# the dicts of query sets by name; a loop over one binds a name (a key) and a QuerySet (a value)
SET_DICTS = {"query_sets", "sets"}
NOT_A_NAME = {"questions", "found", "example"}
NOT_A_QUERY_SET = {"query_set", "found", "example"}


def bindings(tree: ast.AST, word: str) -> list[tuple[int, str]]:
    """(line, annotation) of each argument, annotated assignment or dataclass field named
    exactly `word` (`self.word: ...` too)."""
    annotated = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.arg == word and node.annotation is not None:
            annotated.append((node.lineno, ast.unparse(node.annotation)))
        if isinstance(node, ast.AnnAssign) and _name(node.target) == word:
            annotated.append((node.lineno, ast.unparse(node.annotation)))
    return annotated


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def set_loop_slips(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of each loop or comprehension over a dict of query sets (`query_sets`,
    `sets`: `.items()`, `.values()`, or its keys) that calls a set's name or a set by a word of
    another meaning (`for name, found in query_sets.items()`)."""
    slips = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.For, ast.comprehension)):
            continue
        iterated, method = node.iter, None
        if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute):
            iterated, method = iterated.func.value, iterated.func.attr
        if _name(iterated) not in SET_DICTS:
            continue
        key, value = None, None
        if method == "items" and isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2:
            key, value = node.target.elts
        elif method == "values":
            value = node.target
        elif method in (None, "keys"):
            key = node.target
        for target, wrong in ((key, NOT_A_NAME), (value, NOT_A_QUERY_SET)):
            if isinstance(target, ast.Name) and target.id in wrong:
                slips.append((node.iter.lineno, target.id))
    return slips


def test_each_annotated_word_is_its_one_kind():
    seen, wrong = set(), []
    for path in modules("."):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for word, kinds in MEANINGS.items():
            for line, annotation in bindings(tree, word):
                seen.add(word)
                if annotation not in kinds:
                    wrong.append(f"{path.relative_to(PACKAGE)}:{line} {word}: {annotation}")
    assert wrong == []
    assert seen >= {"query_set", "questions", "found"}  # the check reads their bindings


def test_nothing_outside_the_rankings_is_called_found():
    inside = set(modules(*RANKING_SIDE))
    outside = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in modules(".")
        if path not in inside
        for node in identifiers(ast.parse(path.read_text(encoding="utf-8")), "found")
    ]
    assert outside == []


def test_a_loop_over_the_query_sets_names_a_set_and_its_questions():
    slips = [
        f"{path.relative_to(PACKAGE)}:{line} {name}"
        for path in modules(".")
        for line, name in set_loop_slips(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert slips == []


def test_the_checks_see_each_word_of_another_kind():
    tree = ast.parse(
        "def f(query_set: QuerySet, questions: int, example: ExampleQuery):\n"
        "    found: list[Duplicate] = []\n"
        "    for name, found in query_sets.items():\n"
        "        self.questions: pd.DataFrame = found.table\n"
        "    return [questions for questions in inputs.query_sets], sets.values()\n"
        "def g(found: TopK | None, query_set: str):\n"
        "    return [query_set for found in sets.values()]\n"
    )
    assert bindings(tree, "query_set") == [(1, "QuerySet"), (6, "str")]
    assert bindings(tree, "questions") == [(1, "int"), (4, "pd.DataFrame")]
    assert bindings(tree, "example") == [(1, "ExampleQuery")]
    assert sorted(bindings(tree, "found")) == [(2, "list[Duplicate]"), (6, "TopK | None")]
    assert len(identifiers(tree, "found")) == 5
    assert sorted(set_loop_slips(tree)) == [(3, "found"), (5, "questions"), (7, "found")]
