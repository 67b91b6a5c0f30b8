"""The review servers running on this machine, as `jupyter server list` knows a notebook's.

Each server writes its address (with its session token) to a file of its own in the user's
runtime folder (GOLDENSET_RUNTIME_DIR, else ~/.cache/goldenset/review), readable by that user
alone, and removes it when it stops; `goldenset review --list` prints the addresses of those
whose process still runs. The token never goes into the project's folder, which git and DVC see.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from goldenset.core.files import write_atomically


def runtime_dir() -> Path:
    return Path(os.environ.get("GOLDENSET_RUNTIME_DIR") or Path.home() / ".cache/goldenset/review")


def announce(port: int, url: str, project: Path) -> Path:
    """Record a running server (its address, process and project), private to this user."""
    folder = runtime_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{port}.json"
    entry = {"url": url, "pid": os.getpid(), "project": str(project.resolve())}
    write_atomically(path, json.dumps(entry) + "\n")
    path.chmod(0o600)
    return path


def running() -> list[dict]:
    """The servers still running, by port; the files of those that stopped are removed."""
    alive = []
    for path in sorted(runtime_dir().glob("*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            os.kill(int(entry["pid"]), 0)
        except (ValueError, KeyError, TypeError, ProcessLookupError, FileNotFoundError):
            path.unlink(missing_ok=True)
            continue
        except PermissionError:  # another user's process of the same number: not ours
            continue
        alive.append(entry)
    return alive
