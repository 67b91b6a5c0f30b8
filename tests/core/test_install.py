"""The install command errors print: this version from where it was installed, read from pip's
metadata (the repository URL, direct_url.json)."""

from __future__ import annotations

import re

import pytest

from goldenset.core.install import (
    install_command,
    installed_direct_url,
    project_url,
    reachable_requirement,
)
from tests.conftest import ROOT

REPOSITORY = "https://github.com/goldenset-rag/goldenset"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_the_repository_is_the_one_pyproject_names():
    repository = re.search(r'^Repository = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert project_url() == repository[1]
    assert project_url("No such label") is None


def test_this_checkouts_install_command_installs_the_checkout_with_the_extra():
    direct = installed_direct_url()
    if not direct or not direct.get("url", "").startswith("file://"):
        pytest.skip("goldenset is not installed from a local folder here")
    editable = "-e " if (direct.get("dir_info") or {}).get("editable") else ""
    assert install_command("chroma") == f'pip install {editable}"{ROOT}[chroma]"'


@pytest.mark.parametrize(
    ("requested", "pinned"), [("v0.1.0", "v0.1.0"), ("main", COMMIT), (None, COMMIT)]
)
def test_a_git_install_is_named_by_its_tag_when_asked_for_by_it_else_by_its_commit(
    requested, pinned
):
    direct = {
        "url": "https://github.com/someone/goldenset",
        "vcs_info": {"vcs": "git", "commit_id": COMMIT, "requested_revision": requested},
    }
    assert reachable_requirement(direct, "0.1.0", ["local"], REPOSITORY) == (
        f"goldenset-rag[local] @ git+https://github.com/someone/goldenset@{pinned}"
    )


def test_a_wheel_or_an_index_install_is_named_by_the_release_tag_and_a_folder_by_nothing():
    wheel = {"url": "file:///home/me/goldenset_rag-0.1.0-py3-none-any.whl", "archive_info": {}}
    for direct in (None, wheel):
        assert reachable_requirement(direct, "0.1.0", [], REPOSITORY) == (
            f"goldenset-rag @ git+{REPOSITORY}@v0.1.0"
        )
    assert reachable_requirement(None, "0.1.0", [], None) is None  # no repository named
    folder = {"url": "file:///home/me/goldenset", "dir_info": {"editable": True}}
    assert reachable_requirement(folder, "0.1.0", ["local"], REPOSITORY) is None
