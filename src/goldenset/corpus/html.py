"""An HTML page reduced to its title and readable text: blocks kept apart, navigation dropped."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from bs4 import BeautifulSoup, Comment, Declaration, Doctype, NavigableString, ProcessingInstruction

from goldenset.corpus.titles import is_title

_DROPPED_TAGS = frozenset(
    """head title script style noscript template nav svg iframe object embed canvas
    button select""".split()  # noqa: SIM905
)
_PARAGRAPH_TAGS = frozenset(
    """p h1 h2 h3 h4 h5 h6 pre blockquote table ul ol dl section article aside main header
    footer figure figcaption address details summary fieldset hr div body html form""".split()  # noqa: SIM905
)
_LINE_TAGS = frozenset(("li", "tr", "dt", "dd", "caption", "legend", "option"))
_CELL_TAGS = frozenset(("td", "th"))
_SKIPPED_STRINGS = (Comment, Declaration, Doctype, ProcessingInstruction)
_SPACES = re.compile(r"\s+")
LINE, PARAGRAPH = 1, 2  # strength of a break between blocks


def html_title_and_text(html: str) -> tuple[str | None, str]:
    """Title (<title>, else the first <h1>) and readable text of an HTML page.

    Scripts, styles and navigation are dropped; paragraphs, headings, lists and tables become
    lines separated by blank lines; whitespace inside a block collapses except in <pre>.
    """
    soup = BeautifulSoup(html, "html.parser")
    candidates = (_element_text(soup.find(name)) for name in ("title", "h1"))
    title = next((text for text in candidates if is_title(text)), None)
    return title, _join_blocks(_html_tokens(soup))


def _element_text(element) -> str:
    return "" if element is None else _SPACES.sub(" ", element.get_text(" ")).strip()


def _html_tokens(soup: BeautifulSoup) -> Iterator[tuple[str, bool] | int]:
    """Walk the tree without recursion (pages nest deeply), yielding (text, in_pre) and breaks."""
    stack: list = [(soup, False)]
    while stack:
        item = stack.pop()
        if isinstance(item, int):
            yield item
            continue
        node, in_pre = item
        if isinstance(node, NavigableString):
            if not isinstance(node, _SKIPPED_STRINGS):
                yield (str(node), in_pre)
            continue
        name = (node.name or "").lower()
        if name in _DROPPED_TAGS:
            continue
        if name == "br":
            yield LINE
            continue
        brk = PARAGRAPH if name in _PARAGRAPH_TAGS else LINE if name in _LINE_TAGS else 0
        children = [(child, in_pre or name == "pre") for child in node.children]
        tail: list = [brk] if brk else []
        if name in _CELL_TAGS:
            tail.append((NavigableString(" "), False))  # cells of a row stay apart
        stack.extend(reversed([*([brk] if brk else []), *children, *tail]))


def _join_blocks(tokens: Iterable[tuple[str, bool] | int]) -> str:
    """Assemble text runs into blocks; join blocks by the strongest break seen between them."""
    blocks: list[tuple[int, str]] = []  # (break before the block, block text)
    current: list[str] = []
    pending = 0  # strongest break since the last block
    before = 0  # the break recorded when the current block started

    def flush() -> None:
        nonlocal pending
        lines = "".join(current).split("\n")
        current.clear()
        while lines and not lines[0].strip():
            lines.pop(0)
        block = "\n".join(lines).rstrip()
        if block:
            blocks.append((before, block))
        else:
            pending = max(pending, before)

    for token in tokens:
        if isinstance(token, int):
            if current:
                flush()
            pending = max(pending, token)
            continue
        text, in_pre = token
        if not in_pre:
            text = _SPACES.sub(" ", text)
            if not current or current[-1].endswith(" "):
                text = text.lstrip(" ")
        if not text:
            continue
        if not current:
            before, pending = pending, 0
        current.append(text)
    if current:
        flush()
    parts = []
    for number, (brk, block) in enumerate(blocks):
        if number:
            parts.append("\n\n" if brk >= PARAGRAPH else "\n")
        parts.append(block)
    return "".join(parts)
