"""Another revision's code beside this checkout's, in one process: a benchmark extracts the
baseline's files from git and switches `import goldenset` between the two source folders, so
both run on the same machine state and their noise cancels."""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def extract(rev: str, into: Path, *paths: str) -> Path:
    """The files of ``paths`` (default: src) at ``rev``, extracted under ``into``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, *(paths or ("src",))],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def use_source(src: Path) -> None:
    """Make `import goldenset` load from `src`: drop every goldenset module already imported."""
    for name in [n for n in sys.modules if n == "goldenset" or n.startswith("goldenset.")]:
        del sys.modules[name]
    # the old module paths' finder (goldenset.core.moved) belongs to the source it came with
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("goldenset")]
    sys.path[:] = [p for p in sys.path if not p.endswith("/src")]
    sys.path.insert(0, str(src))
    importlib.invalidate_caches()
