"""MkDocs hook: the reference pages, generated from the code on every build (never committed)."""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).parent))  # reference.py beside this file: not the package's
from reference import pages  # noqa: E402


def on_files(files: Files, config) -> Files:
    root = Path(config.config_file_path).resolve().parent
    for path, content in pages(root).items():
        files.append(File.generated(config, path, content=content))
    return files
