"""Markdown a person reads: text made safe for a table cell."""

from __future__ import annotations


def table_cell(text: object) -> str:
    """Text safe inside a Markdown table cell: no pipe, no HTML, no emphasis, one line."""
    text = " ".join(str(text).split())
    for raw, escaped in [("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")]:
        text = text.replace(raw, escaped)
    return text.replace("|", "\\|").replace("*", "\\*")
