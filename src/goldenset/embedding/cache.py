"""A content-addressed store of vectors: append-only segment files, one per flush.

Each flush writes one new `.npz` segment atomically, so a crash loses at most the batch in
flight, and a small change of the corpus adds a small file that `dvc push` uploads alone.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from goldenset.core.files import write_atomically

KEY_BYTES = 32


def cache_key(model_identity: dict, prefix: str, text: str) -> bytes:
    """Key of one vector: the model (name, revision, settings), the prefix and the text."""
    digest = hashlib.sha256()
    digest.update(json.dumps(model_identity, sort_keys=True).encode())
    digest.update(b"\0" + prefix.encode() + b"\0" + text.encode())
    return digest.digest()


class EmbeddingCache:
    """Vectors by key, written to `directory`; `read_also`: folders whose vectors are read but
    never written to (calibrate reads the embed stage's cache and fills its own)."""

    def __init__(self, directory: str | Path, read_also: Sequence[str | Path] = ()) -> None:
        self.directory = Path(directory)
        self._rows: dict[bytes, np.ndarray] = {}
        for leftover in self.directory.glob("*.tmp"):  # a write cut short by a crash
            leftover.unlink()
        for folder in [*map(Path, read_also), self.directory]:
            for segment in sorted(folder.glob("*.npz")):
                self._load_segment(segment)

    def _load_segment(self, path: Path) -> None:
        with np.load(path) as segment:
            keys, vectors = segment["keys"], segment["vectors"]
        for key, vector in zip(keys, vectors, strict=True):
            self._rows[key.tobytes()] = vector

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, key: bytes) -> bool:
        return key in self._rows

    def get(self, key: bytes) -> np.ndarray:
        return self._rows[key]

    def add(self, keys: list[bytes], vectors: np.ndarray) -> None:
        """Store vectors and write them as one new segment, atomically."""
        fresh = [i for i, key in enumerate(keys) if key not in self._rows]
        if not fresh:
            return
        key_array = np.frombuffer(b"".join(keys[i] for i in fresh), dtype=np.uint8)
        key_array = key_array.reshape(len(fresh), KEY_BYTES)
        vectors = np.ascontiguousarray(vectors[fresh], dtype=np.float32)
        self._write_segment(key_array, vectors)
        for i, vector in zip(fresh, vectors, strict=True):
            self._rows[keys[i]] = vector

    def _write_segment(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        name = hashlib.sha256(keys.tobytes()).hexdigest()[:24] + ".npz"
        segment = io.BytesIO()
        np.savez(segment, keys=keys, vectors=vectors)
        write_atomically(self.directory / name, segment.getvalue())
