"""The one door for the team's code: ``module:function`` parsed in one place, and the module
imported from the team's folder without changing ``sys.path`` for the rest of the process."""

from __future__ import annotations

import sys

import pytest
from pydantic import TypeAdapter, ValidationError

from goldenset.core.errors import GoldensetError
from goldenset.core.specs import FunctionSpec, parse_spec
from goldenset.retrieval.team_code import team_function


def test_a_spec_is_module_and_function_and_nothing_else_is():
    name = parse_spec("search.retrieve:search")
    assert (name.module, name.function, name.top) == ("search.retrieve", "search", "search")
    for bad in ["search", "search:", ":search", "a b:c", "a:b:c", "search.retrieve:se-arch"]:
        with pytest.raises(ValueError, match="is not module:function"):
            parse_spec(bad)
        with pytest.raises(ValidationError):
            TypeAdapter(FunctionSpec).validate_python(bad)
    assert TypeAdapter(FunctionSpec).validate_python("external.tfidf_search:search")


def write_team(project, answer: str) -> None:
    (project / "external").mkdir(parents=True)
    (project / "external" / "helpers.py").write_text(f"ANSWER = {answer!r}\n")
    (project / "external" / "teamsearch.py").write_text(
        "from external.helpers import ANSWER\n\n\ndef search():\n    return ANSWER\n"
    )


def test_the_teams_module_imports_from_its_folder_and_sys_path_is_left_alone(tmp_path, monkeypatch):
    first, second = tmp_path / "one", tmp_path / "two"
    write_team(first, "first")
    write_team(second, "second")
    monkeypatch.chdir(tmp_path)
    path = list(sys.path)
    try:
        found = team_function("external.teamsearch:search", str(first / "external"), "s")
        assert found() == "first" and sys.path == path
        # a second project in the same process gets its own module, not the first one's
        found = team_function("external.teamsearch:search", str(second / "external"), "s")
        assert found() == "second" and sys.path == path
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] == "external"]:
            del sys.modules[name]


def test_a_module_in_neither_folder_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GoldensetError, match=r"^s\.callable: cannot import 'nowhere_team'"):
        team_function("nowhere_team:search", str(tmp_path / "external"), "s")
