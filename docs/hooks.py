"""MkDocs hook: the reference pages, generated from the code on every build (never committed);
the version and repository URL, read from pyproject.toml; and the values pages quote from
committed files.

In a page's Markdown, code blocks included:

- `{{ version }}` is pyproject.toml's `[project] version`, `{{ repo_url }}` its
  `[project.urls] Repository`, `{{ install_ref }}` the tag v<version> once it exists, else the
  commit the site is built from (so an install line can read
  `pip install "goldenset-rag[local] @ git+{{ repo_url }}@{{ install_ref }}"` and name
  something that exists);
- `{{ figure("metrics/scores.json", "synthetic.dense.ndcg@10", ".3f") }}` is the value under
  that key of that JSON or YAML file (a path from the repository's top), in that Python format
  spec (optional). A key holding a dot is written as a list of keys:
  `{{ figure("metrics/scores.json", ["synthetic", "dense", "ndcg@10"], ".3f") }}`. A missing
  file or key stops the build with one line naming the page and the reference.

docs/figures.py reads them; the site's repository link (repo_url, repo_name) and its footer
(the version) come from pyproject.toml too.

The repository's src/ goes first on sys.path, so the site builds from this checkout without
goldenset installed (docs/requirements.txt, no torch): reference.py imports the package, and
mkdocstrings reads its source without importing it (docs/api.md).
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path

import griffe
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

HERE = Path(__file__).resolve().parent
for folder in (HERE, HERE.parent / "src"):  # reference.py and figures.py; the package
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from figures import FigureError, Project, fill, install_ref, parsed_file, project  # noqa: E402
from reference import docstring_markdown, field_comment, pages  # noqa: E402

# Sphinx roles some docstrings use (":class:`Store`"): the API page shows the code name alone
ROLE = re.compile(r":(?:class|func|data|meth|mod|attr|exc|obj):(?=<code>)")


def root_of(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def on_config(config):
    try:
        facts = project((root_of(config) / "pyproject.toml").read_text(encoding="utf-8"))
    except (FigureError, OSError) as error:
        raise PluginError(str(error)) from None
    facts = replace(facts, install_ref=install_ref(root_of(config), facts.version))
    config.repo_url, config.repo_name = facts.repo_url, facts.repo_name
    config.copyright = f"goldenset-rag {facts.version}"
    config.extra["project"] = facts
    # snippets (docs/changelog.md's CHANGELOG.md) from the repository's top, wherever mkdocs runs
    config.mdx_configs.setdefault("pymdownx.snippets", {})["base_path"] = [str(root_of(config))]
    return config


def on_files(files: Files, config) -> Files:
    for path, content in pages(root_of(config)).items():
        files.append(File.generated(config, path, content=content))
    return files


VARYING_MARK = re.compile(r"~~(?=\$?-?\d)")
FENCE = re.compile(r"^\s*(?P<fence>`{3,})(?P<info>\S*)")


# a page's shared block (docs/_snippets/), put in before the page's {{ }} are filled, so that the
# block's install line names the same version and commit as the page's
SNIPPET = re.compile(r'^--8<-- "(?P<path>docs/_snippets/[^"]+)"$', re.MULTILINE)


def on_page_markdown(markdown: str, page, config, files) -> str:
    facts: Project = config.extra["project"]
    root = root_of(config)
    markdown = SNIPPET.sub(lambda match: (root / match["path"]).read_text("utf-8"), markdown)
    try:
        filled = fill(markdown, page.file.src_uri, facts, lambda path: parsed_file(root, path))
    except FigureError as error:
        raise PluginError(str(error)) from None
    return without_varying_marks(filled)


def without_varying_marks(markdown: str) -> str:
    """The docs test's mark of a value that varies (`~~40259`) dropped from console blocks, where
    the reader sees output as one run printed it; elsewhere (a page that explains the mark) it
    stays."""
    lines, open_fence, console = [], None, False
    for line in markdown.split("\n"):
        found = FENCE.match(line)
        if open_fence is None:
            if found:
                open_fence, console = found["fence"], found["info"].startswith("console")
        elif line.strip() == open_fence:  # the closing fence
            open_fence = None
        elif console:
            line = VARYING_MARK.sub("", line)
        lines.append(line)
    return "\n".join(lines)


def on_page_content(html: str, page, config, files) -> str:
    return ROLE.sub("", html)


class SourceComments(griffe.Extension):
    """The API page's griffe extension (mkdocs.yml loads it from this file): an attribute that
    has no docstring shows the comments the source gives it (a dataclass field's, a type
    alias's), and every docstring is read as the text it was written as."""

    def on_instance(self, *, node, obj: griffe.Object, agent, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = docstring_markdown(obj.docstring.value)

    def on_attribute_instance(self, *, node, attr: griffe.Attribute, agent, **kwargs) -> None:
        found = attr.filepath in attr.lines_collection if attr.filepath else False
        if attr.docstring is not None or not found or attr.lineno is None:
            return
        lines = attr.lines_collection[attr.filepath]
        said = field_comment(lines, attr.lineno, attr.endlineno)
        if said:
            attr.docstring = griffe.Docstring(
                docstring_markdown(said), lineno=attr.lineno, endlineno=attr.endlineno, parent=attr
            )
