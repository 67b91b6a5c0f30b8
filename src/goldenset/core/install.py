"""How this installation of goldenset is named on pip's command line, for the errors that say
which extra to install: goldenset-rag is on no package index, so a bare name would not install."""

from __future__ import annotations

import re
from importlib import metadata

import goldenset

DISTRIBUTION = "goldenset-rag"  # the import name is goldenset


def project_url(label: str = "Repository") -> str | None:
    """A URL of the installed distribution's metadata (pyproject.toml [project.urls]) by its
    label; None when it has none, or is not installed."""
    try:
        entries = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None

    def key(name: str) -> str:  # labels compare as the core metadata spec normalizes them
        return re.sub(r"[^a-z0-9]", "", name.lower())

    for entry in entries:
        name, _, url = entry.partition(",")
        if key(name) == key(label):
            return url.strip()
    return None


def install_command(extra: str) -> str:
    """`pip install` of this version with `extra`, from its repository's release tag."""
    url = project_url()
    if url is None:
        return f'pip install "{DISTRIBUTION}[{extra}]"'
    return f'pip install "{DISTRIBUTION}[{extra}] @ git+{url}@v{goldenset.__version__}"'
