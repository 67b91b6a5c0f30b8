"""How this installation of goldenset is named on pip's command line: for the errors that say
which extra to install, and for the CI workflow `goldenset init --ci` writes. goldenset-rag is
on no package index, so a bare name would not install."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
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


def installed_direct_url() -> dict | None:
    """The installed distribution's direct_url.json (PEP 610: where pip installed it from); None
    when pip installed it from an index (or it is not installed: run from a source folder)."""
    try:
        text = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        return json.loads(text) if text else None
    except json.JSONDecodeError:
        return None


def distribution_name(extras: Sequence[str]) -> str:
    """goldenset's distribution with its extras, as a pip requirement names them."""
    return DISTRIBUTION + (f"[{','.join(extras)}]" if extras else "")


def reachable_requirement(
    direct: dict | None, version: str, extras: Sequence[str], repository: str | None
) -> str | None:
    """A pip requirement for this very version with these extras that installs anywhere: from a
    git URL, the tag v<version> when that is what was asked for, else the commit; from an index
    or a wheel (None, or an archive), the tag v<version> in `repository`, since no index has
    this distribution. None for a local path (a checkout, an editable install, a local git
    repository), or a release that names no repository."""
    name = distribution_name(extras)
    url = (direct or {}).get("url", "")
    vcs = (direct or {}).get("vcs_info") or {}
    if vcs.get("vcs") == "git" and vcs.get("commit_id") and not url.startswith("file:"):
        tag = f"v{version}"
        revision = tag if vcs.get("requested_revision") == tag else vcs["commit_id"]
        return f"{name} @ git+{url}@{revision}"
    if (not direct or "archive_info" in direct) and repository is not None:
        return f"{name} @ git+{repository}@v{version}"
    return None


def install_command(extra: str) -> str:
    """`pip install` of this version with `extra`, from where it was installed: its git URL's
    commit (or tag), the release tag in its repository, or the local folder it came from."""
    direct = installed_direct_url()
    requirement = reachable_requirement(direct, goldenset.__version__, [extra], project_url())
    if requirement is not None:
        return f'pip install "{requirement}"'
    url = (direct or {}).get("url", "")
    if url.startswith("file://"):
        editable = ((direct or {}).get("dir_info") or {}).get("editable")
        return f'pip install {"-e " if editable else ""}"{url.removeprefix("file://")}[{extra}]"'
    return f'pip install "{DISTRIBUTION}[{extra}]"'
