"""The troubleshooting page quotes messages it cannot provoke (the audit without llama.cpp, a
store on a server the test has none of): each such quote is marked with the source file that
prints it, and must still be a message that file can print, so that a reworded message fails
here instead of leaving the page stale. The page's runnable failures are run by
tests/test_docs_commands.py."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import pytest

from tests.conftest import ROOT

PAGE = ROOT / "docs" / "troubleshooting.md"
MARKER = re.compile(r"^<!-- message from: (?P<path>\S+) -->$")
OPENING = "```text"
CLOSING = "```"
STAGE_PREFIX = "error: "  # how a stage prints a GoldensetError (goldenset.core.stage)


@dataclass
class Quote:
    """A text block the page says is printed by `source` (a path from the repository's top)."""

    source: str
    line: int  # of the marker, 1-based
    messages: list[str]


def quotes(markdown: str) -> list[Quote]:
    """Every marked quote of a page, in order."""
    lines = markdown.splitlines()
    found = []
    for index, line in enumerate(lines):
        marker = MARKER.match(line.strip())
        if not marker:
            continue
        if index + 1 >= len(lines) or lines[index + 1].strip() != OPENING:
            raise ValueError(f"line {index + 1}: a message marker must precede a {OPENING} block")
        end = next((i for i in range(index + 2, len(lines)) if lines[i].strip() == CLOSING), None)
        if end is None:
            raise ValueError(f"line {index + 2}: the quoted block is never closed")
        messages = [text.strip() for text in lines[index + 2 : end] if text.strip()]
        found.append(Quote(marker["path"], index + 1, messages))
    return found


def printable(source: str) -> list[re.Pattern]:
    """The strings a Python file holds, as patterns: an f-string's `{value}` matches any text.
    Adjacent literals are one string to the parser, so a message split over lines is whole."""
    patterns = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            parts = [
                re.escape(part.value) if isinstance(part, ast.Constant) else ".+?"
                for part in node.values
            ]
            patterns.append(re.compile("".join(parts), re.DOTALL))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            patterns.append(re.compile(re.escape(node.value)))
    return patterns


def stale(quote: Quote, source: str) -> list[str]:
    """The quote's messages that the source cannot print (its stage's `error: ` prefix aside)."""
    patterns = printable(source)
    return [
        message
        for message in quote.messages
        if not any(p.fullmatch(message.removeprefix(STAGE_PREFIX)) for p in patterns)
    ]


def test_every_quoted_message_is_one_its_source_file_still_prints():
    found = quotes(PAGE.read_text(encoding="utf-8"))
    sources = {quote.source for quote in found}
    assert "src/goldenset/judge/reader.py" in sources, "the audit's [local] message is not quoted"
    problems = []
    for quote in found:
        path = ROOT / quote.source
        if not path.is_file():
            problems.append(f"docs/troubleshooting.md:{quote.line}: no file {quote.source}")
            continue
        for message in stale(quote, path.read_text(encoding="utf-8")):
            problems.append(
                f"docs/troubleshooting.md:{quote.line}: {quote.source} no longer prints "
                f"{message!r}: quote what it prints now"
            )
    assert not problems, "\n".join(problems)


SOURCE = """
def unreachable(url):
    return GoldensetError(
        f"retrievers.qdrant: cannot reach the Qdrant server at {url}: start it "
        "or fix retrievers.qdrant.url"
    )
"""


def marked(*messages: str) -> str:
    body = "\n".join(messages)
    return f"Prose.\n\n<!-- message from: store.py -->\n```text\n{body}\n```\n"


def test_a_quote_matches_the_message_with_any_value_in_place_of_a_placeholder(tmp_path):
    source = tmp_path / "store.py"
    source.write_text(SOURCE)
    shown = (
        "error: retrievers.qdrant: cannot reach the Qdrant server at http://localhost:6333: "
        "start it or fix retrievers.qdrant.url"
    )
    [quote] = quotes(marked(shown))
    assert (quote.source, quote.line, quote.messages) == ("store.py", 3, [shown])
    assert stale(quote, source.read_text()) == []


def test_a_reworded_or_cut_message_is_stale(tmp_path):
    source = tmp_path / "store.py"
    source.write_text(SOURCE)
    reworded = "retrievers.qdrant: cannot connect to the Qdrant server at x: start it"
    cut = "retrievers.qdrant: cannot reach the Qdrant server at x: start it"
    [quote] = quotes(marked(reworded, cut))
    assert stale(quote, source.read_text()) == [reworded, cut]


@pytest.mark.parametrize(
    ("page", "problem"),
    [
        ("<!-- message from: a.py -->\n\n```text\nx\n```\n", "must precede a ```text block"),
        ("<!-- message from: a.py -->\n```text\nx\n", "never closed"),
    ],
)
def test_a_marker_without_its_block_is_an_error(page, problem):
    with pytest.raises(ValueError, match=re.escape(problem)):
        quotes(page)
