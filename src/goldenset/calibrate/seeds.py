"""Golden sets that differ only in `generate.seed`, which draws the passages and the examples.

One golden set is one draw: its close-call decisions can swing with the passages drawn. So
calibrate can judge several draws (calibrate.seeds, or `--seeds`), each written by the generate
stage itself with only its seed changed, in a folder of calibrate's cache
(`cache/calibrate/seeds/<seed>/`: its params.yaml, links to the project's documents and examples,
and the data/goldenset.jsonl the stage wrote). The writer's answers go to calibrate's own answer
cache (`cache/calibrate/llm`), never to the stage's, so `dvc status` stays as it was, and a second
calibrate asks the writer nothing. The project's own seed is its golden set as `dvc repro` left
it (data/applied.jsonl); each other seed's gets the project's verdicts as the apply stage applies
them: a verdict on a question that reads the same carries over.

The draws are scored together, as one set of their questions (the pooled set), and their figures
read per draw from its questions' rows.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pandas as pd
import yaml

from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_jsonl
from goldenset.core.params import ReviewParams
from goldenset.corpus.queries import EXAMPLES_DIR
from goldenset.corpus.querysets import QuerySet, golden_query_set
from goldenset.scoring.configuration import ProjectUpstream
from goldenset.scoring.reviewed import apply_verdicts, read_reviewed

SEEDS_FOLDER = "seeds"  # under calibrate's cache: a folder per seed the generate stage runs in
ANSWERS_FOLDER = "llm"  # under calibrate's cache: the writer's answers for those seeds


def seeds_to_score(listed: list[int] | None, project_seed: int) -> list[int]:
    """The seeds calibrate judges: those listed, each once, in order; none listed: the project's."""
    return list(dict.fromkeys(listed)) if listed else [project_seed]


def seed_params(project_params: dict, seed: int, answers: Path) -> dict:
    """The project's params with generate.seed and the writer's answer cache replaced."""
    generate = {**(project_params.get("generate") or {}), "seed": seed, "cache_dir": str(answers)}
    return {**project_params, "generate": generate}


def write_seed_set(project: Path, seed: int, cache: Path) -> Path:
    """The folder in which the generate stage wrote the golden set of this seed: the stage run
    there (its progress and summary on stderr), over links to the project's documents and
    examples; a GoldensetError when it fails (what it was answered stays cached)."""
    folder = cache / SEEDS_FOLDER / str(seed)
    (folder / paths.DOCUMENTS.parent).mkdir(parents=True, exist_ok=True)
    for linked in [paths.DOCUMENTS, Path(EXAMPLES_DIR)]:
        target, link = project / linked, folder / linked
        if link.is_symlink() or link.exists():
            link.unlink()
        if target.exists():
            link.symlink_to(target.resolve(), target_is_directory=target.is_dir())
    project_params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params = seed_params(project_params, seed, (cache / ANSWERS_FOLDER).resolve())
    (folder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    process = subprocess.run(
        [sys.executable, "-m", "goldenset.stages.generate"], cwd=folder, check=False
    )
    if process.returncode != 0:
        raise GoldensetError(
            f"calibrate: writing the golden set of generate.seed {seed} failed (its line is "
            f"above); the answers it got are kept in {cache / ANSWERS_FOLDER}: run calibrate "
            "again to resume"
        )
    return folder


def seed_sets(
    project: Path,
    upstream: ProjectUpstream,
    review: ReviewParams,
    project_seed: int,
    seeds: list[int],
    cache: Path,
    progress: Callable[[str], None],
) -> dict[int, QuerySet]:
    """seed -> its golden set as people left it: the project's own for its seed, the others
    written by the generate stage with that seed (write_seed_set), with the project's verdicts
    applied as the apply stage applies them."""
    [golden] = [questions for questions in upstream.query_sets.values() if questions.entry.golden]
    sets = {}
    for seed in seeds:
        if seed == project_seed:
            sets[seed] = golden
            continue
        progress(f"calibrate: the golden set of generate.seed {seed} (cached answers reused)")
        written = read_jsonl(write_seed_set(project, seed, cache) / paths.GOLDENSET)
        reviewed = read_reviewed(review, project, written)
        applied = apply_verdicts(written, reviewed, review.disagreement).rows
        sets[seed] = golden_query_set(golden.entry, pd.DataFrame(applied))
    return sets


def with_seed_sets(
    upstream: ProjectUpstream, sets: dict[int, QuerySet]
) -> tuple[ProjectUpstream, dict[int, list[str]]]:
    """The upstream with the seeds' pooled golden set in place of the project's, and each seed's
    qids."""
    union, qids = pooled(sets)
    return replace(upstream, query_sets={**upstream.query_sets, union.name: union}), qids


def pooled(sets: dict[int, QuerySet]) -> tuple[QuerySet, dict[int, list[str]]]:
    """The seeds' questions as one golden set (a question two draws share, once), and each seed's
    qids in it."""
    first = next(iter(sets.values()))
    table = pd.concat([questions.table for questions in sets.values()], ignore_index=True)
    union = golden_query_set(first.entry, table.drop_duplicates("qid").reset_index(drop=True))
    return union, {seed: list(questions.qids) for seed, questions in sets.items()}
