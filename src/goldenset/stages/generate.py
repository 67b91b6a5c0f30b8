"""generate: documents -> LLM questions with evidence spans, through the LLM answer cache."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import Field

from goldenset.core.echo import WindowIndex
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_json, write_jsonl
from goldenset.core.params import Disagreement, ReviewParams, StageParams
from goldenset.core.paths import DOCUMENTS, GENERATE_STATS, GOLDENSET, REJECTS
from goldenset.core.stage import run_stage
from goldenset.corpus.places import read_places, with_places
from goldenset.corpus.queries import in_examples, read_examples, read_refused, refused_qids
from goldenset.generation.cache import AnswerCache
from goldenset.generation.params import GenerateParams
from goldenset.generation.prompt import pick_examples
from goldenset.generation.runner import GenerationResult, run_generation
from goldenset.generation.summary import budget_stop, summary_lines
from goldenset.judge.model import WEIGHTS, load_judge
from goldenset.judge.selection import (
    asked_for,
    cached_pass_probabilities,
    keep_best,
    pass_judge,
    weights_digest,
)

log = logging.getLogger("goldenset")


class GenerateStage(StageParams):
    generate: GenerateParams = Field(default_factory=GenerateParams)
    review: ReviewParams = Field(default_factory=ReviewParams)  # disagreement: what failed means


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


def generation(
    settings: GenerateParams, ask: bool = True, disagreement: Disagreement = "fail"
) -> GenerationResult:
    """The run over the ingested documents; ask=False logs what it would take, asking nothing."""
    # one line per HTTP request (and per SDK retry) would bury the progress bar and the summary
    for noisy in ("httpx", "httpx2", "anthropic", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    documents, titles = read_documents(DOCUMENTS)
    aim_examples = read_examples(settings.example_queries)
    examples = pick_examples(
        [query.text for query in aim_examples], settings.example_count, settings.seed
    )
    return run_generation(
        documents,
        settings,
        example_queries=examples,
        titles=titles,
        aim_examples=aim_examples,
        ask=ask,
        refused=read_refused(settings.failed_queries, disagreement),
    )


def estimate(params: GenerateStage) -> None:
    """`goldenset estimate`: the requests, tokens, dollars and minutes the stage would take."""
    generation(params.generate, ask=False, disagreement=params.review.disagreement)


def main(params: GenerateStage) -> None:
    settings = params.generate
    Path(settings.cache_dir).mkdir(parents=True, exist_ok=True)  # a DVC output even when empty
    asked = asked_for(settings.max_questions, settings.keep_share)
    # a judge file that cannot select fails before anything is paid for
    weights = selecting_judge(settings.judge) if asked > settings.max_questions else WEIGHTS
    if asked > settings.max_questions:
        log.info(
            "generate: generate.keep_share=%g: asking %d questions to keep the judge's best %d "
            "(%.1fx the requests of asking %d)",
            settings.keep_share,
            asked,
            settings.max_questions,
            asked / max(settings.max_questions, 1),
            settings.max_questions,
        )
    try:
        result = generation(
            settings.model_copy(update={"max_questions": asked}),
            disagreement=params.review.disagreement,
        )
    finally:
        # one segment per run instead of one file per answer: DVC pushes one object per file
        AnswerCache(settings.cache_dir).pack()
    for line in summary_lines(result.stats):
        log.info(line)
    stopped = budget_stop(result.stats, settings.max_usd)
    if stopped:
        # a failing stage is not recorded in dvc.lock, so the next `dvc repro` runs it again
        raise GoldensetError(stopped)
    rows, rejects = result.rows, result.rejects
    if asked > settings.max_questions and rows:
        rows, rejects = select(rows, rejects, settings, weights)
    write_jsonl(GOLDENSET, with_places(rows, read_places(DOCUMENTS)))
    write_jsonl(REJECTS, rejects)
    reasked = refused_qids(
        settings.failed_queries, result.stats.asked_again, params.review.disagreement
    )
    write_json(
        GENERATE_STATS, {**result.stats.record(), **({"reasked": reasked} if reasked else {})}
    )


def selecting_judge(value: str | None) -> Path:
    """generate.judge: the weights keep_share selects with (the shipped judge when null)."""
    if value is None:
        return WEIGHTS
    path = in_examples(
        Path(value), "generate.judge", "a judge.json from `goldenset review --refit`, or null"
    )
    try:
        load_judge(path)
    except (ValueError, KeyError, TypeError):
        raise GoldensetError(
            f"generate.judge: {path} is not a judge file: copy review/judge.json, which "
            "`goldenset review --refit` writes"
        ) from None
    return path


def select(
    rows: list[dict], rejects: list[dict], settings: GenerateParams, weights: Path = WEIGHTS
) -> tuple[list[dict], list[dict]]:
    """The judge's best generate.max_questions rows (judge/selection.py); the others join the
    rejects as `not_selected`, with the judge's probability."""
    documents, _ = read_documents(DOCUMENTS)
    needed = {row["doc_id"] for row in rows}
    indexes = {doc_id: WindowIndex.of(text) for doc_id, text in documents if doc_id in needed}
    judge = pass_judge(indexes, weights)
    scores = cached_pass_probabilities(rows, settings.cache_dir, weights_digest(weights), judge)
    doc_ids = [row["doc_id"] for row in rows]
    kept = set(keep_best(doc_ids, scores, settings.max_questions, settings.keep_share))
    dropped = [
        {**row, "reason": "not_selected", "judge_pass": round(float(scores[i]), 4)}
        for i, row in enumerate(rows)
        if i not in kept
    ]
    log.info(
        "generate: the judge kept %d of %d questions (median P(pass) %.2f kept, %.2f dropped)",
        len(kept),
        len(rows),
        float(np.median(scores[sorted(kept)])),
        float(np.median([row["judge_pass"] for row in dropped])) if dropped else float("nan"),
    )
    return [row for i, row in enumerate(rows) if i in kept], rejects + dropped


if __name__ == "__main__":
    run_stage(main, GenerateStage)
