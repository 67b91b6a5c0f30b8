"""Answers of a retriever that lives outside the pipeline (a team's own callable), kept by the
retriever's identity and the question: a re-run of score that changes nothing of the retriever
asks it nothing again.

The identity holds what changes an answer: the callable's name, its folder's files (also a dep of
score) and retrievers.external.version, which a team bumps when what the retriever answers changes
outside its files (a live index). Opened and saved at the edges (read_score_inputs, the score
stage): scoring fills it in memory. It lives in cache/retrievers, a DVC output of score, so that
a team's remote shares it like the LLM answers.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldenset.core.files import read_json_cache, write_json

FOLDER_README = """# cache/retrievers

Answers of your own retrievers (`retrievers.external`) and stores, one JSON file per retriever
identity, written by the score stage: a re-run that changes nothing of a retriever asks it
nothing again. A DVC output of score, shared through your remote like the LLM answers.
"""


def prepare_folder(folder: Path) -> None:
    """The answers' folder, with a README: an output folder DVC finds empty draws a warning."""
    folder.mkdir(parents=True, exist_ok=True)
    readme = folder / "README.md"
    if not readme.exists():
        readme.write_text(FOLDER_README, encoding="utf-8")


def digest(*parts: str) -> str:
    """A short stable hash of some strings (their order counts)."""
    hashed = hashlib.sha256()
    for part in parts:
        hashed.update(part.encode("utf-8") + b"\0")
    return hashed.hexdigest()[:24]


def folder_digest(folder: Path) -> str:
    """A hash of every file under a folder, by path and content ("" when there is none)."""
    if not folder.is_dir():
        return digest("")
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    files = [path for path in files if "__pycache__" not in path.parts]
    parts = [
        f"{path.relative_to(folder).as_posix()}:{hashlib.sha256(path.read_bytes()).hexdigest()}"
        for path in files
    ]
    return digest(*parts)


@dataclass
class QueryCache:
    """One retriever's answers by question key, as read from its file, plus those added."""

    path: Path
    answers: dict[str, Any] = field(default_factory=dict)
    added: int = 0

    @classmethod
    def open(cls, folder: Path, identity: str) -> QueryCache:
        """The answers kept in `folder` for this identity (none when it has no file yet)."""
        path = folder / f"{identity}.json"
        return cls(path, read_json_cache(path, "the retriever's answers"))

    def get(self, key: str) -> Any:
        return self.answers.get(key)

    def put(self, key: str, answer: Any) -> None:
        self.answers[key] = answer
        self.added += 1

    def save(self) -> None:
        """Write the file when answers were added (nothing otherwise)."""
        if self.added:
            write_json(self.path, self.answers, indent=0)
            self.added = 0
