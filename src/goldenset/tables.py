"""Files the stages write: atomic (a reader or a crash sees the old file or the whole new one),
and byte-identical for identical content."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def write_parquet(frame: pd.DataFrame, path: str | Path) -> None:
    """Write without the index, through a temporary file, so a crash never leaves half a table."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), temporary)
    os.replace(temporary, path)


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write text (or bytes) to path so that a reader, or a crash, sees the old file or the whole
    new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    mode = "wb" if isinstance(data, bytes) else "w"
    try:
        with os.fdopen(handle, mode, encoding=None if mode == "wb" else "utf-8") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_json(path: Path, payload: object, indent: int = 2) -> None:
    """One JSON document, indented, ending in a newline, written atomically."""
    write_atomically(path, json.dumps(payload, indent=indent) + "\n")


def write_jsonl(path: Path, rows: list[dict]) -> None:
    """One JSON object a line, non-ASCII kept as is, written atomically."""
    write_atomically(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
