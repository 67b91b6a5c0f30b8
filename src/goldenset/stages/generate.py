"""generate: documents -> LLM questions with evidence spans, through the LLM answer cache."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_jsonl, write_json, write_jsonl
from goldenset.core.params import Params
from goldenset.core.paths import DOCUMENTS, GENERATE_STATS, GOLDENSET, REJECTS
from goldenset.core.stage import run_stage
from goldenset.generation.cache import AnswerCache
from goldenset.generation.prompt import pick_examples
from goldenset.generation.runner import run_generation
from goldenset.generation.summary import budget_stop, summary_lines

log = logging.getLogger("goldenset")
EXAMPLES_DIR = "examples"  # a dependency of generate in dvc.yaml


def read_documents(path: Path) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """(doc_id, text) pairs, and doc_id -> title."""
    if not path.exists():
        raise GoldensetError(f"{path} not found: run the ingest stage first (dvc repro ingest)")
    try:
        frame = pd.read_parquet(path, columns=["doc_id", "title", "text"])
    except (KeyError, ValueError) as error:
        raise GoldensetError(
            f"{path} lacks doc_id/title/text columns ({error}): re-run ingest"
        ) from None
    ids = frame["doc_id"].astype(str)
    titles = dict(zip(ids, frame["title"].fillna("").astype(str), strict=True))
    return list(zip(ids, frame["text"].astype(str), strict=True)), titles


def read_example_queries(value: str | list[str] | None) -> list[str]:
    """generate.example_queries: texts as given, or the texts of a BEIR queries.jsonl."""
    if value is None or isinstance(value, list):
        return list(value or [])
    path = Path(value)
    # a DVC dependency cannot follow a param that may be a list or null, so files live in one
    # folder that always is one: editing the file then re-runs the stage
    if not path.resolve().is_relative_to(Path(EXAMPLES_DIR).resolve()):
        raise GoldensetError(
            f"generate.example_queries: {path} is outside {EXAMPLES_DIR}/, the folder the "
            f"generate stage depends on: move the file into {EXAMPLES_DIR}/"
        )
    if not path.is_file():
        raise GoldensetError(
            f"generate.example_queries: {path} is not a file (give a BEIR queries.jsonl, "
            "a list of query texts, or null)"
        )
    return read_jsonl(
        path,
        lambda query, _: str(query["text"]),
        lambda number: (
            f"generate.example_queries: {path} line {number} is not a JSON object "
            'with "text": give a BEIR queries.jsonl'
        ),
    )


def main(params: Params) -> None:
    # one line per HTTP request (and per SDK retry) would bury the progress bar and the summary
    for noisy in ("httpx", "httpx2", "anthropic", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    settings = params.generate
    documents, titles = read_documents(DOCUMENTS)
    examples = pick_examples(
        read_example_queries(settings.example_queries), settings.example_count, settings.seed
    )
    Path(settings.cache_dir).mkdir(parents=True, exist_ok=True)  # a DVC output even when empty
    try:
        result = run_generation(documents, settings, example_queries=examples, titles=titles)
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
    write_json(GENERATE_STATS, result.stats.record())


if __name__ == "__main__":
    run_stage(main)
