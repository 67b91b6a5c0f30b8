"""Vectors on disk: `<name>.npy` with `<name>.ids.json` beside it, row i belonging to ids[i]."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from goldenset.errors import GoldensetError


def write_vectors(folder: str | Path, name: str, ids: list[str], vectors: np.ndarray) -> None:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / f"{name}.npy", vectors.astype(np.float32, copy=False))
    (folder / f"{name}.ids.json").write_text(json.dumps(ids), encoding="utf-8")


def read_vectors(folder: str | Path, name: str, expected_ids: list[str]) -> np.ndarray:
    """The vectors of `name`, checked to belong to expected_ids in that order."""
    folder = Path(folder)
    try:
        ids = json.loads((folder / f"{name}.ids.json").read_text(encoding="utf-8"))
        vectors = np.load(folder / f"{name}.npy")
    except FileNotFoundError:
        raise GoldensetError(f"{folder}: no {name} vectors; run `dvc repro embed`") from None
    if ids != list(expected_ids):
        raise GoldensetError(f"{folder}/{name}.npy is stale; run `dvc repro embed`")
    return vectors
