"""generate: documents -> LLM questions with evidence spans, through the LLM answer cache."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd

from goldenset.errors import GoldensetError
from goldenset.generation.cache import AnswerCache
from goldenset.generation.runner import run_generation
from goldenset.generation.summary import budget_stop, summary_lines
from goldenset.params import Params
from goldenset.stage import run_stage
from goldenset.tables import write_atomically

log = logging.getLogger("goldenset")
DOCUMENTS = Path("data/documents.parquet")
GOLDENSET = Path("data/goldenset.jsonl")
REJECTS = Path("data/goldenset.rejects.jsonl")
STATS = Path("data/generate_stats.json")


def read_documents(path: Path) -> list[tuple[str, str]]:
    if not path.exists():
        raise GoldensetError(f"{path} not found: run the ingest stage first (dvc repro ingest)")
    try:
        frame = pd.read_parquet(path, columns=["doc_id", "text"])
    except (KeyError, ValueError) as error:
        raise GoldensetError(f"{path} lacks doc_id/text columns ({error}): re-run ingest") from None
    return list(zip(frame["doc_id"].astype(str), frame["text"].astype(str), strict=True))


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def main(params: Params) -> None:
    # one line per HTTP request (and per SDK retry) would bury the progress bar and the summary
    for noisy in ("httpx", "httpx2", "anthropic", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    settings = params.generate
    documents = read_documents(DOCUMENTS)
    Path(settings.cache_dir).mkdir(parents=True, exist_ok=True)  # a DVC output even when empty
    try:
        result = run_generation(documents, settings)
    finally:
        # one segment per run instead of one file per answer: DVC pushes one object per file
        AnswerCache(settings.cache_dir).pack()
    for line in summary_lines(result.stats):
        log.info(line)
    stopped = budget_stop(result.stats, settings.max_usd)
    if stopped:
        # a failing stage is not recorded in dvc.lock, so the next `dvc repro` runs it again
        raise GoldensetError(stopped)
    write_jsonl(GOLDENSET, result.rows)
    write_jsonl(REJECTS, result.rejects)
    write_atomically(STATS, json.dumps(result.stats.record(), indent=2) + "\n")


if __name__ == "__main__":
    run_stage(main)
