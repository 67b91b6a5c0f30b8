"""The commands a page of the docs shows, and whether their real output is what the page shows.

The rules a page follows are in docs/development.md ("Pages whose commands are run"): commands
and their shown output in ``console`` blocks, ``~N`` for a number that varies, ``# exits N`` for a
command that fails on purpose, titled blocks for files the reader writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,})(?P<info>.*)$")
TITLE = re.compile(r'title="(?P<path>[^"]+)"')
HIDDEN = re.compile(r"^<!-- test: (?P<command>.+?) -->$")
EXITS = re.compile(r"#\s*exits? (?P<status>\d+)")
ELLIPSIS = "…"
# a number that varies from run to run: `~~N` one the program prints plain (the site shows N,
# the mark dropped: docs/hooks.py), `~N` one it prints after a real `~` (an estimate); e.g.
# ~~12, ~~-0.03, ~~$0.0031, ~1,234.5 (the `$` stays literal)
VARYING = re.compile(r"(?P<tilde>~~?)(?P<dollar>\$?)-?\d[\d,]*(?:\.\d+)?")
NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class Command:
    """A command the page shows (or hides in a test comment), with the output lines it shows."""

    text: str
    line: int  # in the page, 1-based
    shown: list[str] = field(default_factory=list)
    exits: int = 0


@dataclass
class FileEdit:
    """A titled block: YAML merged into the file, anything else written whole."""

    path: str
    text: str
    line: int

    @property
    def merges(self) -> bool:
        return self.path.endswith((".yaml", ".yml"))


Step = Command | FileEdit


def steps(markdown: str) -> list[Step]:
    """The page's commands and file edits, in the order a reader meets them."""
    found: list[Step] = []
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        hidden = HIDDEN.match(lines[index].strip())
        fence = FENCE.match(lines[index])
        if hidden:
            found.append(Command(hidden["command"], index + 1))
        elif fence:
            end = _closing(lines, index, fence)
            body = [line[len(fence["indent"]) :] for line in lines[index + 1 : end]]
            found.extend(_block(fence["info"].strip(), body, index + 1))
            index = end
        index += 1
    return found


def _closing(lines: list[str], start: int, fence: re.Match) -> int:
    marker = fence["indent"] + fence["fence"]
    for index in range(start + 1, len(lines)):
        if lines[index].rstrip() == marker:
            return index
    raise ValueError(f"line {start + 1}: a code block is never closed")


def _block(info: str, body: list[str], line: int) -> list[Step]:
    title = TITLE.search(info)
    if title:
        return [FileEdit(title["path"], "\n".join(body) + "\n", line)]
    if info.split()[:1] != ["console"]:
        return []
    commands: list[Command] = []
    continued = False
    for offset, text in enumerate(body, start=line + 1):
        if continued:
            commands[-1].text += "\n" + text
        elif text.startswith("$ "):
            commands.append(Command(text[2:], offset))
        elif commands:
            commands[-1].shown.append(text)
        else:
            raise ValueError(f"line {offset}: output before any `$ ` command")
        continued = text.endswith("\\")
    for command in commands:
        exits = EXITS.search(command.text)
        command.exits = int(exits["status"]) if exits else 0
    return commands


def normalise(line: str) -> str:
    return " ".join(ANSI.sub("", line).split())


def pattern(shown: str) -> re.Pattern:
    """A shown line as a pattern over a real one: `~~N` any number, `~N` a real `~` and any
    number, `…` at an end any text."""
    text = normalise(shown)
    head = text.startswith(ELLIPSIS)
    tail = text.endswith(ELLIPSIS) and len(text) > 1
    text = text.removeprefix(ELLIPSIS).removesuffix(ELLIPSIS).strip()
    parts, last = [], 0
    for varying in VARYING.finditer(text):
        parts.append(re.escape(text[last : varying.start()]))
        real_tilde = "~" if varying["tilde"] == "~" else ""
        parts.append(real_tilde + re.escape(varying["dollar"]) + NUMBER)
        last = varying.end()
    parts.append(re.escape(text[last:]))
    body = "".join(parts).replace(r"\ ", r"\s+")
    return re.compile(("" if head else "^") + body + ("" if tail else "$"))


def output_lines(output: str) -> list[str]:
    """Real output as lines a reader sees: a progress bar's redraws (\\r) are lines too."""
    return [normalise(line) for line in re.split(r"\r\n|\r|\n", output)]


def drift(shown: list[str], output: str) -> str | None:
    """None when every shown line is in the output, in order; else what is missing, and where."""
    real = output_lines(output)
    position, previous = 0, None
    for line in shown:
        if normalise(line) in ("", ELLIPSIS):
            continue
        wanted = pattern(line)
        found = next((i for i in range(position, len(real)) if wanted.search(real[i])), None)
        if found is None:
            after = f" after the line {previous!r}" if previous else ""
            return f"the page shows {normalise(line)!r}, not in the real output{after}"
        position, previous = found + 1, normalise(line)
    return None
