"""What a page quotes from the repository's committed files, put into its Markdown when the site
is built (by docs/hooks.py; this file is not part of the package):

- `{{ version }}`: the `[project] version` of pyproject.toml;
- `{{ repo_url }}`: its `[project.urls] Repository`;
- `{{ figure("<path>", <key>, "<format>") }}`: a value read from a JSON or YAML file of the
  repository (`<path>` relative to its top). `<key>` is a dotted string,
  `"synthetic.dense.ndcg@10"`, or a list of keys, `["synthetic", "dense", "ndcg@10"]`, for a key
  that itself holds a dot; an integer, or a part all digits, is an index into a list.
  `<format>` is a Python format spec (`".3f"`, `".1%"`, `","`); left out, the value as it is.

The arguments are Python literals. A file, key or format that fails stops the build with one
line naming the page and the reference. `${{ ... }}` (a GitHub Actions expression) is left as it
is, and so is any other name.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlparse

from goldenset.core.errors import GoldensetError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# not after "$": `${{ github.sha }}` in a workflow a page shows is GitHub's, not ours
# a reference may be wrapped over lines, as a paragraph's text is
FIGURE = re.compile(r"(?<!\$)\{\{\s*figure\((?P<args>.*?)\)\s*\}\}", re.DOTALL)
UNFINISHED = re.compile(r"(?<!\$)\{\{\s*figure\b.{0,60}", re.DOTALL)
NAMED = re.compile(r"(?<!\$)\{\{\s*(?P<name>version|repo_url|install_ref)\s*\}\}")

Key = str | int


class FigureError(GoldensetError):
    """A reference a page makes that the repository's files cannot fill."""


@dataclass(frozen=True)
class Project:
    """What pages quote of pyproject.toml."""

    version: str
    repo_url: str
    install_ref: str = ""  # what install lines pin: the release's tag, else this commit

    @property
    def repo_name(self) -> str:
        """owner/name, as the site's header shows it."""
        return urlparse(self.repo_url).path.strip("/").removesuffix(".git")


def install_ref(root: Path, version: str) -> str:
    """What an install line can pin that exists: the tag v<version> once the release is tagged
    (docs/development.md, releasing), else the commit the site is built from; the tag's name
    outside a git checkout."""
    tag = f"v{version}"

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)

    try:
        if git("rev-parse", "-q", "--verify", f"refs/tags/{tag}").returncode == 0:
            return tag
        head = git("rev-parse", "HEAD")
    except OSError:  # no git
        return tag
    return head.stdout.strip() if head.returncode == 0 else tag


def project(pyproject_toml: str) -> Project:
    """The version and repository URL of a pyproject.toml's text."""
    table = tomllib.loads(pyproject_toml).get("project", {})
    version = table.get("version")
    repo_url = table.get("urls", {}).get("Repository")
    if not version:
        raise FigureError("pyproject.toml has no [project] version: the site shows it; add it")
    if not repo_url:
        raise FigureError(
            "pyproject.toml has no [project.urls] Repository: the site links it; add the "
            "repository's URL"
        )
    return Project(str(version), str(repo_url).rstrip("/"))


@dataclass(frozen=True)
class Figure:
    """One `{{ figure(...) }}` of a page: a file, the keys to a value in it, a format spec."""

    path: str
    keys: tuple[Key, ...]
    spec: str = ""


def parse_figure(args: str) -> Figure:
    """The arguments of `figure(...)`, as written between the parentheses."""
    try:
        values = ast.literal_eval(f"({args},)")
    except (ValueError, SyntaxError):
        raise FigureError(
            "its arguments are not Python literals: quote the file, the key and the format"
        ) from None
    if not 2 <= len(values) <= 3:
        raise FigureError('write figure("<file>", "<dotted.key>" or [keys], "<format>")')
    path, key, spec = (*values, "")[:3]
    if not isinstance(path, str) or not isinstance(spec, str):
        raise FigureError("the file and the format are strings")
    if isinstance(key, str):
        keys: tuple[Key, ...] = tuple(key.split("."))
    elif isinstance(key, (list, tuple)) and all(isinstance(k, (str, int)) for k in key):
        keys = tuple(key)
    else:
        raise FigureError("the key is a dotted string or a list of keys")
    if not keys or "" in keys:
        raise FigureError(f"an empty key in {key!r}")
    return Figure(path, keys, spec)


def lookup(data: Any, keys: tuple[Key, ...]) -> Any:
    """The value under ``keys`` of parsed JSON or YAML; an error naming the first key missing."""
    for depth, key in enumerate(keys):
        where = ".".join(map(str, keys[:depth])) or "the top"
        if isinstance(data, dict):
            if key not in data:
                known = ", ".join(map(str, data)) or "none"
                raise FigureError(f"no key {key!r} under {where} (its keys: {known})")
            data = data[key]
        elif isinstance(data, list):
            index = int(key) if isinstance(key, int) or key.isdigit() else None
            if index is None or index >= len(data):
                raise FigureError(f"no item {key!r} under {where} (a list of {len(data)})")
            data = data[index]
        else:
            raise FigureError(f"{where} is {data!r}, not a mapping or a list: no key {key!r}")
    if isinstance(data, (dict, list)):
        raise FigureError("the value is a mapping or a list, not a figure: name a key inside it")
    return data


def formatted(value: Any, spec: str) -> str:
    try:
        return format(value, spec)
    except (ValueError, TypeError) as error:
        raise FigureError(f"format {spec!r} does not apply to {value!r} ({error})") from None


def parsed_file(root: Path, path: str) -> Any:
    """A JSON or YAML file of the repository at ``root`` (a path inside it), parsed."""
    relative = PurePosixPath(path)
    if relative.is_absolute() or ".." in relative.parts:
        raise FigureError(f"{path} is not a path inside the repository")
    suffix = relative.suffix.lower()
    if suffix not in (".json", ".yaml", ".yml"):
        raise FigureError(f"{path}: figures are read from .json, .yaml or .yml files")
    try:
        text = (root / relative).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FigureError(f"no file {path} (paths are relative to the repository's top)") from None
    import yaml

    try:
        return json.loads(text) if suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as error:
        reason = str(error).strip().splitlines()[0]
        raise FigureError(f"{path} cannot be parsed ({reason})") from None


def figure_text(args: str, read: Callable[[str], Any]) -> str:
    """A figure's text: ``args`` as written in `figure(...)`, ``read`` a file's parsed content."""
    figure = parse_figure(args)
    return formatted(lookup(read(figure.path), figure.keys), figure.spec)


def fill(markdown: str, page: str, facts: Project, read: Callable[[str], Any]) -> str:
    """A page's Markdown with its version, repository URL and figures put in; an error naming
    ``page`` and the reference that failed."""

    def figure(match: re.Match) -> str:
        try:
            return figure_text(match["args"], read)
        except FigureError as error:
            raise FigureError(f"{page}: {match[0]}: {error}") from None

    ref = facts.install_ref or f"v{facts.version}"
    named = {"version": facts.version, "repo_url": facts.repo_url, "install_ref": ref}
    filled = FIGURE.sub(figure, NAMED.sub(lambda match: named[match["name"]], markdown))
    unfinished = UNFINISHED.search(filled)
    if unfinished:
        shown = " ".join(unfinished[0].split())
        raise FigureError(f"{page}: {shown}...: an unfinished figure; end it with ) }}}}")
    return filled
