"""A team package named like a module it did not write (a library already imported) is one line
naming both and leaves the library loaded; the team's own package is still loaded again from
another project's folder."""

from __future__ import annotations

import re
import sys

import pytest
import yaml  # surely loaded: the library the team's package is named like

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.team_code import team_function
from tests.retrieval.test_team_code import write_team


def entries(top: str) -> dict[str, object]:
    return {key: module for key, module in sys.modules.items() if key.split(".")[0] == top}


@pytest.fixture
def restored_modules():
    """sys.modules' yaml and external entries as they were, whatever the test did to them."""
    kept = {**entries("yaml"), **entries("external")}
    yield
    for key in [*entries("yaml"), *entries("external")]:
        del sys.modules[key]
    sys.modules.update(kept)


def test_a_team_package_named_like_a_loaded_library_is_one_line(
    tmp_path, monkeypatch, restored_modules
):
    library = sys.modules["yaml"]
    (tmp_path / "yaml").mkdir()
    (tmp_path / "yaml" / "__init__.py").write_text("")
    (tmp_path / "yaml" / "search.py").write_text("def search():\n    return 'team'\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GoldensetError) as raised:
        team_function("yaml.search:search", str(tmp_path / "external"), "s")
    message = str(raised.value)
    assert message.startswith("s.callable: the team's package 'yaml' (")
    assert str(tmp_path / "yaml" / "__init__.py") in message
    assert re.search(re.escape(str(library.__file__)), message)
    assert "rename the team's package" in message and "\n" not in message
    assert sys.modules["yaml"] is library and "yaml.search" not in sys.modules
    assert yaml.safe_load("a: 1") == {"a": 1}


def test_the_teams_package_imported_the_usual_way_is_loaded_again(
    tmp_path, monkeypatch, restored_modules
):
    """Imported from the project folder on sys.path (not by import_from), then asked for from
    another project's folder: it is the team's (the project folder holds it), so it is replaced."""
    first, second = tmp_path / "one", tmp_path / "two"
    write_team(first, "first")
    write_team(second, "second")
    for key in entries("external"):
        del sys.modules[key]
    monkeypatch.syspath_prepend(str(first))
    import external.teamsearch  # noqa: F401 - the usual way, as `python -m` from the project

    monkeypatch.chdir(first)
    found = team_function("external.teamsearch:search", str(second / "external"), "s")
    assert found() == "second"
