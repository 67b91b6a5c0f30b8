"""An unknown revision is named as such, with the nearest branches: no `dvc pull` brings back a
branch that does not exist (a newcomer's `git init` may call the first branch master)."""

from __future__ import annotations

import subprocess

import pytest

from goldenset.compare.revisions import check_revision
from goldenset.core.errors import GoldensetError


def _git(*args: str, cwd) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_an_unknown_branch_names_the_nearest_ones(tmp_path):
    _git("init", "-q", "-b", "master", cwd=tmp_path)
    (tmp_path / "a.txt").write_text("a")
    _git("add", "a.txt", cwd=tmp_path)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a", cwd=tmp_path)
    _git("branch", "chunk-300", cwd=tmp_path)
    check_revision("master", str(tmp_path))  # known: nothing raised
    check_revision("HEAD~0", str(tmp_path))
    with pytest.raises(GoldensetError) as raised:
        check_revision("main", str(tmp_path))
    message = str(raised.value)
    assert message.startswith("unknown revision 'main'")
    assert "nearest: master, chunk-300" in message and "dvc pull" not in message


def test_a_repository_without_commits_says_so(tmp_path):
    _git("init", "-q", cwd=tmp_path)
    with pytest.raises(GoldensetError, match="has no branch yet"):
        check_revision("main", str(tmp_path))
