"""The install command errors print: this version in its repository, from pip's metadata."""

from __future__ import annotations

import re

import goldenset
from goldenset.core.install import install_command, project_url
from tests.conftest import ROOT


def test_the_install_command_is_this_versions_tag_in_the_repository_pyproject_names():
    repository = re.search(r'^Repository = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert project_url() == repository[1]
    assert install_command("chroma") == (
        f'pip install "goldenset-rag[chroma] @ git+{repository[1]}@v{goldenset.__version__}"'
    )
    assert project_url("No such label") is None
