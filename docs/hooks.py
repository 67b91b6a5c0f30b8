"""MkDocs hook: the reference pages, generated from the code on every build (never committed)."""

from __future__ import annotations

from pathlib import Path

from mkdocs.structure.files import File, Files

from goldenset.docs_reference import pages


def on_files(files: Files, config) -> Files:
    root = Path(config.config_file_path).resolve().parent
    for path, content in pages(root).items():
        files.append(File.generated(config, path, content=content))
    return files
