"""The documentation site's reference pages, generated from the code when the site is built (by
docs/hooks.py; this file is not part of the package), never written by hand: every param from the
params model, every metric from MEASURES, every retriever from RETRIEVERS, each command's options
from its argument parser and each stage's outputs from dvc.yaml. Each function returns a page's
Markdown.
"""

from __future__ import annotations

import argparse
import io
import re
import textwrap
import tokenize
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel
from pydantic_core import PydanticUndefined, to_jsonable_python

from goldenset.core.markdown import table_cell
from goldenset.core.params import section_model
from goldenset.core.registered import RegisteredName

GENERATED = "<!-- generated from the code when the site is built: do not edit -->\n\n"


def code(text: str) -> str:
    """A code span inside a table cell (a pipe inside one is shown as text, not escaped)."""
    if "|" in text or "`" in text:
        return table_cell(text)
    return f"`{text}`"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# params ----------------------------------------------------------------------------------


def type_name(annotation: Any, metadata: list | None = None) -> str:
    """A field's type as a reader of params.yaml sees it."""
    for item in metadata or []:
        if isinstance(item, RegisteredName):
            return " | ".join(item.registry.names())
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation is type(None):
        return "null"
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in args)
    if origin is Literal:
        return " | ".join(str(arg) for arg in args)
    if hasattr(annotation, "__metadata__"):  # Annotated
        return type_name(args[0], list(annotation.__metadata__))
    if origin is not None:
        inner = ", ".join("..." if arg is Ellipsis else type_name(arg) for arg in args)
        return f"{getattr(origin, '__name__', str(origin))}[{inner}]"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    return {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(
        getattr(annotation, "__name__", str(annotation)), getattr(annotation, "__name__", "")
    )


def yaml_value(value: Any) -> str:
    """A value as params.yaml would show it, on one line."""
    dumped = yaml.safe_dump(to_jsonable_python(value), default_flow_style=True, width=10**6)
    return dumped.strip().removesuffix("...").strip()


def field_default(field: Any) -> str:
    if field.default is not PydanticUndefined:
        return code(yaml_value(field.default))
    if field.default_factory is not None:
        return code(yaml_value(field.default_factory()))
    return "required"


def yaml_comments(text: str) -> dict[str, str]:
    """The end-of-line comment of each dotted key of a YAML mapping (params.yaml's)."""
    from ruamel.yaml import YAML

    found: dict[str, str] = {}

    def walk(node: Any, where: str) -> None:
        if not hasattr(node, "items") or not hasattr(node, "ca"):
            return
        for key, value in node.items():
            dotted = f"{where}{key}"
            tokens = node.ca.items.get(key) or []
            token = tokens[2] if len(tokens) > 2 else None
            if token is None and hasattr(value, "ca") and value.ca.comment:
                token = value.ca.comment[0]
            if token is not None:
                first = token.value.strip().splitlines()[0] if token.value.strip() else ""
                found[dotted] = first.removeprefix("#").strip()
            walk(value, dotted + ".")

    walk(YAML().load(io.StringIO(text)), "")
    return found


def param_rows(
    model: type[BaseModel], where: str, comments: dict[str, str]
) -> Iterator[tuple[str, list[list[str]]]]:
    """(section, rows) of a model and, after it, of each of its nested sections."""
    rows, nested = [], []
    for name, field in model.model_fields.items():
        dotted = f"{where}{name}"
        inner = section_model(field.annotation)
        if inner is not None:
            nested.append((dotted, inner))
            continue
        description = field.description or comments.get(dotted, "")
        kind = type_name(field.annotation, list(field.metadata))
        rows.append([code(dotted), table_cell(kind), field_default(field), table_cell(description)])
    yield where.removesuffix("."), rows
    for dotted, inner in nested:
        yield from param_rows(inner, dotted + ".", comments)


def params_page(params_yaml: str | None = None) -> str:
    """Every param of goldenset.params.Params: a table per section with its dotted key, type,
    default and description (the model's, else the comment of `params_yaml`, the shipped file)."""
    from goldenset.params import Params

    comments = yaml_comments(params_yaml) if params_yaml else {}
    parts = [
        "# Params reference\n\n",
        GENERATED,
        "Every key of `params.yaml`, from the params model that validates it. A default of "
        "*required* has none: the section must spell it out.\n\n",
    ]
    for section, field in Params.model_fields.items():
        model = section_model(field.annotation)
        assert model is not None, section
        parts.append(f"## {section}\n\n")
        if comments.get(section):
            parts.append(table_cell(comments[section]) + "\n\n")
        if field.default is None:
            parts.append(f"Optional: without `{section}:` the command that reads it refuses.\n\n")
        for name, rows in param_rows(model, f"{section}.", comments):
            if name != section:
                parts.append(f"### {name}\n\n")
                if comments.get(name):
                    parts.append(table_cell(comments[name]) + "\n\n")
            if rows:
                parts.append(table(["Key", "Type", "Default", "Description"], rows) + "\n")
    return "".join(parts)


# metrics ---------------------------------------------------------------------------------


def metrics_page() -> str:
    """Every metric of goldenset.evaluation.measures.MEASURES."""
    from goldenset.evaluation.measures import MEASURES

    parameters = {"k": "a cutoff k of `score.ks`", "B": "a token budget B of `score.budgets`"}
    rows = [
        [
            code(measure.spelled()),
            ", ".join(measure.views),
            table_cell(measure.definition),
            code(measure.reference) if measure.reference else "",
            "closed form" if measure.chance is not None else "over random rankings",
            table_cell(parameters.get(measure.parameter or "", "none")),
        ]
        for measure in MEASURES.values()
    ]
    header = ["Metric", "Views", "Definition", "trec_eval", "Chance level", "Parameter"]
    return (
        "# Metrics reference\n\n"
        + GENERATED
        + "Every metric, from `goldenset.evaluation.measures.MEASURES`. In the doc view a ranking "
        "metric is named `doc_<metric>`: documents ranked by their best chunk. The trec_eval "
        "column names the trec_eval measure it equals.\n\n" + table(header, rows)
    )


# retrievers ------------------------------------------------------------------------------


def _kind(name: str) -> str:
    from goldenset.retrieval.retrievers import fusions, stores

    if name in stores():
        return "a store: its run is over its own chunking (not fusable)"
    return "fuses the runs of other retrievers" if name in fusions() else "fusable by hybrid"


def retrievers_page() -> str:
    """Every retriever of goldenset.retrieval.retrievers.RETRIEVERS, with its params section."""
    import sys

    from goldenset.retrieval.retrievers import RETRIEVERS

    parts = [
        "# Retrievers reference\n\n",
        GENERATED,
        "Every retriever of `goldenset.retrieval.retrievers.RETRIEVERS`, in the order they are "
        "scored and listed; each has its section under `retrievers:` in params.yaml.\n\n",
    ]
    for name, entry in RETRIEVERS.items():
        module = sys.modules.get(entry.params.__module__)
        doc = (entry.params.__doc__ or (module.__doc__ if module else "") or "").strip()
        parts.append(f"## {name}\n\n")
        if doc:
            parts.append(" ".join(doc.split("\n\n")[0].split()) + "\n\n")
        traits = [
            "reads no embedding" if entry.model_free else "reads the embeddings",
            _kind(name),
            f"approximates {entry.approximates} (recall_loss@k against it)"
            if entry.approximates
            else "",
        ]
        parts.append(
            "; ".join(t for t in traits if t) + f". Module `{entry.params.__module__}`.\n\n"
        )
        rows = [
            row for _, rows in param_rows(entry.params, f"retrievers.{name}.", {}) for row in rows
        ]
        parts.append(table(["Key", "Type", "Default", "Description"], rows) + "\n")
    return "".join(parts)


# commands --------------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def option_rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = ", ".join(action.option_strings) or (action.metavar or action.dest)
        if action.choices is not None:
            value = " \\| ".join(str(choice) for choice in action.choices)
        elif action.nargs == 0:
            value = ""
        else:
            value = table_cell(action.metavar or action.dest.upper())
        default = action.default
        shown = "" if default in (None, False, [], argparse.SUPPRESS) else code(str(default))
        rows.append([code(name), value, shown, table_cell(action.help or "")])
    return rows


def commands_page() -> str:
    """Each `goldenset` command's options, from goldenset.cli.parser()."""
    from goldenset.cli import parser

    main = parser()
    parts = [
        "# Commands reference\n\n",
        GENERATED,
        "The options of each `goldenset` command, from its argument parser "
        "(`goldenset.cli.parser`); `goldenset COMMAND --help` prints the same.\n\n",
    ]
    for name, sub in _subcommands(main).items():
        parts.append(f"## goldenset {name}\n\n")
        parts.append("```\n" + sub.format_usage().strip().removeprefix("usage: ") + "\n```\n\n")
        if sub.description:
            parts.append(table_cell(sub.description) + "\n\n")
        parts.append(table(["Option", "Value", "Default", "Description"], option_rows(sub)))
        parts.append("\n")
    return "".join(parts)


# stages ----------------------------------------------------------------------------------


def stages_page(dvc_yaml: str) -> str:
    """Each stage of a dvc.yaml: what it does (its comment), its outputs, metrics and plots."""
    from ruamel.yaml import YAML

    loaded = YAML().load(io.StringIO(dvc_yaml))
    stages = loaded.get("stages", {})

    def comment_of(tokens: list | None) -> str:
        """A mapping key's end-of-line comment (index 2) or a sequence item's (index 0)."""
        found = [token for token in (tokens or [None] * 3)[2::-2] if token is not None]
        if not found or not found[0].value.strip():
            return ""
        return found[0].value.strip().splitlines()[0].removeprefix("#").strip()

    parts = [
        "# Stages reference\n\n",
        GENERATED,
        "Each stage of `dvc.yaml`, in the order `dvc repro` runs them, and what it writes.\n\n",
    ]
    for name, stage in stages.items():
        parts.append(f"## {name}\n\n")
        about = comment_of(stages.ca.items.get(name))
        if about:
            parts.append(table_cell(about) + "\n\n")
        parts.append(f"Runs `{stage['cmd']}`.\n\n")
        rows = []
        for kind in ("outs", "metrics", "plots"):
            entries = stage.get(kind) or []
            for index, entry in enumerate(entries):
                path = next(iter(entry)) if isinstance(entry, dict) else str(entry)
                tokens = getattr(entries, "ca", None)
                comment = comment_of(tokens.items.get(index)) if tokens else ""
                if not comment and isinstance(entry, dict):
                    comment = comment_of(entry.ca.items.get(path))
                settings = entry[path] if isinstance(entry, dict) else None
                uncached = isinstance(settings, dict) and settings.get("cache") is False
                kept = " (kept in git, not in the DVC cache)" if uncached else ""
                shown = {"outs": "output", "metrics": "metrics", "plots": "plot"}[kind]
                rows.append([code(path), shown, (table_cell(comment) + kept).strip()])
        parts.append(table(["Path", "Kind", "Description"], rows) + "\n")
    plots = loaded.get("plots") or []
    if plots:
        parts.append(
            "## Plots\n\n`dvc plots show` draws these (dvc.yaml's top-level `plots:`).\n\n"
        )
        rows = []
        for entry in plots:
            path = next(iter(entry)) if isinstance(entry, dict) else str(entry)
            settings = entry[path] if isinstance(entry, dict) else None
            title = settings.get("title", "") if isinstance(settings, dict) else ""
            rows.append([code(path), table_cell(title)])
        parts.append(table(["Path", "Title"], rows))
    return "".join(parts)


# the Python API page (docs/api.md: mkdocstrings, through docs/hooks.py's griffe extension) -----

CODE_SPAN = re.compile(r"(`+).+?\1", re.DOTALL)
TAG_LIKE = re.compile(r"<(?=[A-Za-z_/!?])")
LIST_ITEM = re.compile(r"(?:[-*+]|\d+[.)])\s")


def docstring_markdown(docstring: str) -> str:
    """A docstring, written to be read as text, made Markdown that shows the same: a list right
    under its lead-in line gets the blank line Markdown needs to see a list, and a `<` outside
    code spans is text (``<name>.parquet`` would otherwise open an HTML tag and vanish)."""
    lines: list[str] = []
    for line in docstring.split("\n"):
        previous = lines[-1] if lines else ""
        lead_in = previous.strip() and not previous[0].isspace() and not LIST_ITEM.match(previous)
        if LIST_ITEM.match(line) and lead_in:
            lines.append("")
        lines.append(line)
    text, parts, last = "\n".join(lines), [], 0
    for match in CODE_SPAN.finditer(text):
        parts.append(TAG_LIKE.sub("&lt;", text[last : match.start()]) + match[0])
        last = match.end()
    return "".join(parts) + TAG_LIKE.sub("&lt;", text[last:])


def _comments(statement: str) -> list[str]:
    """The `#` comments of a statement's lines (a `#` inside a string is none)."""
    try:
        source = textwrap.dedent(statement) + "\n"
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    return [t.string.removeprefix("#").strip() for t in tokens if t.type == tokenize.COMMENT]


def field_comment(lines: list[str], lineno: int, endlineno: int | None = None) -> str:
    """What the source says of an attribute in comments: the comment lines right above it, then
    those on its own lines (``order: int = 100  # lower ranks first``). Lines count from 1, as
    in tracebacks. Tool directives (noqa, type:) and rulers say nothing to a reader."""
    above: list[str] = []
    number = lineno - 1
    while number >= 1 and lines[number - 1].strip().startswith("#"):
        above.insert(0, lines[number - 1].strip().removeprefix("#").strip())
        number -= 1
    own = _comments("\n".join(lines[lineno - 1 : endlineno or lineno]))
    said = [text for text in [*above, *own] if text]
    return " ".join(t for t in said if not t.startswith(("noqa", "type:", "pragma", "---")))


def pages(root: Path) -> dict[str, str]:
    """Every reference page, by its path under docs/, for the project at `root`."""
    return {
        "reference/params.md": params_page((root / "params.yaml").read_text(encoding="utf-8")),
        "reference/metrics.md": metrics_page(),
        "reference/retrievers.md": retrievers_page(),
        "reference/commands.md": commands_page(),
        "reference/stages.md": stages_page((root / "dvc.yaml").read_text(encoding="utf-8")),
    }
