"""Parquet output of the stages: atomic, and byte-identical for identical tables."""

from __future__ import annotations

import os
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
