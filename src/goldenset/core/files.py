"""The pipeline's file conventions: what the stages write is atomic (a reader or a crash sees the
old file or the whole new one) and byte-identical for identical content; JSON Lines (the golden
set, BEIR queries, labelled questions) are read by one reader; the JSON caches by another, which
takes a damaged file for an error."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from goldenset.core.errors import GoldensetError

T = TypeVar("T")
# read once, at import: setting the umask to read it is not safe while threads write files
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def file_md5(path: Path) -> str | None:
    """The md5 of a file's bytes (what dvc.lock records of it); None when it is absent."""
    try:
        return hashlib.md5(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def write_parquet(frame: pd.DataFrame, path: str | Path) -> None:
    """Write without the index, whole or not at all (write_atomically)."""
    table = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), table)
    write_atomically(Path(path), table.getvalue().to_pybytes())


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write text (or bytes) to path so that a reader, or a crash, sees the old file or the whole
    new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    mode = "wb" if isinstance(data, bytes) else "w"
    try:
        # mkstemp makes the file private (0600): give it the mode open() would
        os.fchmod(handle, 0o666 & ~_UMASK)
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


def read_json_cache(path: Path, what: str) -> dict:
    """The JSON object a cache file holds, {} when there is no file. A damaged file (not UTF-8,
    not JSON, or not an object) is a GoldensetError of one line naming it and saying to delete it;
    `what` is the work it held, done again then ("the retriever's answers")."""
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (json.JSONDecodeError, UnicodeDecodeError):
        cached = None
    # an error, not a fresh start: starting empty would hide the damage and pay for `what` again
    if not isinstance(cached, dict):
        raise damaged_cache(path, what, "not a JSON object")
    return cached


def damaged_cache(path: Path, what: str, why: str) -> GoldensetError:
    """The one line for a cache file that cannot be read: its path, why, and what to do."""
    return GoldensetError(
        f"{path} is a damaged cache ({why}): delete it, and the next run asks for {what} again"
    )


def read_jsonl(
    source: str | Path | bytes,
    parse: Callable[[Any, int], T] = lambda record, number: record,
    bad_line: Callable[[int], str] | None = None,
) -> list[T]:
    """`parse(record, line number)` of each non-blank line of a JSON Lines file (or its bytes),
    a byte-order mark allowed. A line that is not JSON, or that `parse` rejects (KeyError,
    TypeError, ValueError, AttributeError), is a GoldensetError with the message
    `bad_line(line number)`; without `bad_line` those errors propagate."""
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    records = []
    for number, line in enumerate(data.decode("utf-8-sig").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(parse(json.loads(line), number))
        except (KeyError, TypeError, ValueError, AttributeError):
            if bad_line is None:
                raise
            raise GoldensetError(bad_line(number)) from None
    return records


def read_parquet_bytes(data: bytes, columns: list[str] | None = None) -> pd.DataFrame:
    """A table from the bytes of a parquet file, copied into memory Arrow owns first: Arrow's
    threads release what they read after the call returns, and releasing a Python object then
    needs the interpreter, which aborts the process ("terminate called without an active
    exception") when it is exiting."""
    owned = pa.allocate_buffer(len(data))
    memoryview(owned).cast("B")[:] = data
    return pq.read_table(pa.BufferReader(owned), columns=columns).to_pandas()
