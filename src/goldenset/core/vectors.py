"""Vectors on disk: `<name>.npy` with `<name>.ids.json` beside it, row i belonging to ids[i]."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically

CHUNK_VECTORS = "chunks"  # the chunks' vectors; each query set's vectors are named as the set


def write_vectors(folder: str | Path, name: str, ids: list[str], vectors: np.ndarray) -> None:
    """Both files atomically, the vectors as float32 .npy bytes."""
    folder = Path(folder)
    npy = io.BytesIO()
    np.save(npy, vectors.astype(np.float32, copy=False))
    write_atomically(folder / f"{name}.npy", npy.getvalue())
    write_atomically(folder / f"{name}.ids.json", json.dumps(ids))


def read_vectors(folder: str | Path, name: str, expected_ids: list[str]) -> np.ndarray:
    """The vectors of `name`, checked to belong to expected_ids in that order."""
    ids, vectors = _stored(Path(folder), name)
    if ids != list(expected_ids):
        raise GoldensetError(f"{folder}/{name}.npy is stale; run `dvc repro embed`")
    return vectors


def read_vectors_of(folder: str | Path, name: str, wanted: list[str]) -> np.ndarray:
    """The vectors of `name` of the ids `wanted`, some of those stored (the golden set less the
    questions people failed), in their order."""
    ids, vectors = _stored(Path(folder), name)
    row = {item_id: at for at, item_id in enumerate(ids)}
    if any(item_id not in row for item_id in wanted):
        raise GoldensetError(f"{folder}/{name}.npy is stale; run `dvc repro embed`")
    return vectors[[row[item_id] for item_id in wanted]]


def _stored(folder: Path, name: str) -> tuple[list[str], np.ndarray]:
    try:
        ids = json.loads((folder / f"{name}.ids.json").read_text(encoding="utf-8"))
        return ids, np.load(folder / f"{name}.npy")
    except FileNotFoundError:
        raise GoldensetError(f"{folder}: no {name} vectors; run `dvc repro embed`") from None
