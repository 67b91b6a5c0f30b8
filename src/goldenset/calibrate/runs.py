"""`goldenset calibrate`: every configuration of the `calibrate` params run through the chunk
and embed stages' own code and the score stage's library function (goldenset.scoring.run), in a
scratch copy of the project.

The scratch copy links the project's ingest and generate outputs (documents, golden set, query
sets), and every run reads and fills the project's embedding cache, so a text already embedded
by `dvc repro` (or an earlier calibration) is never embedded again. Scoring gives the rows of
data/results.parquet, one per (query set, retriever, question) with the question's value of
each headline metric; those rows are what the views compare.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pandas as pd
import yaml
from pydantic import BaseModel, ValidationError

from goldenset.calibrate.agreement import View, available
from goldenset.calibrate.figures import Calibration, assess
from goldenset.calibrate.groups import MODEL_FREE, Configuration, check_labels
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically
from goldenset.core.params import (
    CalibrateParams,
    ChunkParams,
    EmbedParams,
    Params,
    RetrieversSection,
    ScoreParams,
    load_params,
)
from goldenset.scoring.retrievers import REGISTRY, fused_sections, model_free
from goldenset.scoring.run import score_configuration, write_score_outputs

KEYS = ["query_set", "retriever", "qid"]
# stages whose outputs every configuration shares (documents, golden set, query sets)
UPSTREAM = ["ingest", "generate"]
RUN = ["chunk", "embed", "score"]
# run through their stage module; score through goldenset.scoring.run, its rows read in memory
STAGE_RUN = ["chunk", "embed"]


def chunk_label(chunk: ChunkParams) -> str:
    if chunk.strategy == "none":
        return "whole documents"
    label = f"{chunk.strategy} {chunk.max_size}"
    return label + (f" overlap {chunk.overlap}" if chunk.overlap else "")


def model_label(embed: EmbedParams) -> str:
    label = embed.model.rstrip("/").split("/")[-1]
    return label + (f" max_seq_length {embed.max_seq_length}" if embed.max_seq_length else "")


def override(base: BaseModel, entry: BaseModel) -> BaseModel:
    """base with the fields that entry spells out (a calibrate chunking or model), validated."""
    merged = {**base.model_dump(), **entry.model_dump(include=entry.model_fields_set)}
    return type(base).model_validate(merged)


def with_headline(score: ScoreParams, metrics: list[str]) -> tuple[ScoreParams, list[str]]:
    """score params whose headline (the per-question columns of results.parquet) also holds
    the metrics the views need, and the metrics score.headline refuses (their views are skipped)."""
    headline, refused = list(score.headline), []
    for metric in dict.fromkeys(metrics):
        if metric in headline:
            continue
        try:
            ScoreParams.model_validate({**score.model_dump(), "headline": [*headline, metric]})
        except ValidationError:
            refused.append(metric)
            continue
        headline.append(metric)
    return score.model_copy(update={"headline": headline}), refused


def enabled_retrievers(
    settings: RetrieversSection, wanted: list[str], with_model_free: bool
) -> RetrieversSection:
    """The project's retriever settings with only the wanted ones on (and those hybrid fuses);
    model_free False leaves bm25 and external off unless hybrid needs them."""
    fused = {
        other for name, fuse in fused_sections(settings).items() if name in wanted for other in fuse
    }
    on = set(reported(wanted, with_model_free)) | fused
    raw = settings.model_dump()
    for name in REGISTRY:
        raw[name]["enabled"] = name in on
    return type(settings).model_validate(raw)


def reported(wanted: list[str], with_model_free: bool) -> list[str]:
    """The wanted retrievers scored with this model: those reading no embedding only with the
    first."""
    return [name for name in wanted if with_model_free or name not in model_free()]


def grid(params: Params) -> tuple[list[ChunkParams], list[EmbedParams]]:
    """The chunkings and models of the calibrate params, each applied over the project's."""
    settings = params.calibrate
    assert settings is not None
    chunkings = [override(params.chunk, entry) for entry in settings.chunkings]
    models = [override(params.embed, entry) for entry in settings.models]
    for name, labels in [
        ("chunkings", [chunk_label(chunk) for chunk in chunkings]),
        ("models", [model_label(embed) for embed in models]),
    ]:
        twice = sorted({label for label in labels if labels.count(label) > 1})
        if twice:
            raise GoldensetError(f"calibrate.{name}: {', '.join(twice)} listed twice")
    return chunkings, models


def views_of(settings: CalibrateParams) -> list[View]:
    return [View(name, view.golden, view.reference) for name, view in settings.views.items()]


@contextmanager
def working_directory(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def load_stage(name: str) -> ModuleType:
    """The stage module goldenset.stages.<name>, so its main(params) runs in this process."""
    return importlib.import_module(f"goldenset.stages.{name}")


def inside(path: str) -> bool:
    return not Path(path).is_absolute() and ".." not in Path(path).parts


def anchored(params: Params, project: Path) -> Params:
    """params whose external retriever folder, when outside the project (../search, from
    `goldenset init --retriever`), is absolute: the stages run in a scratch folder."""
    external = params.retrievers.external
    if inside(external.folder):
        return params
    folder = str((project / external.folder).resolve())
    retrievers = params.retrievers.model_copy(
        update={"external": external.model_copy(update={"folder": folder})}
    )
    return params.model_copy(update={"retrievers": retrievers})


def link_upstream(project: Path, scratch: Path, external: str) -> None:
    """Link the ingest and generate outputs (and the external retriever's folder, when inside the
    project) of the project into scratch; one that the chunk, embed or score stage reads must
    exist."""
    stages = yaml.safe_load((project / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    read = {dep for name in RUN for dep in stages.get(name, {}).get("deps", [])}
    paths = [
        out if isinstance(out, str) else next(iter(out))
        for name in UPSTREAM
        for out in stages[name]["outs"]
    ]
    for path in [*paths, *([external] if inside(external) else [])]:
        source = project / path
        if not source.exists():
            if path in read and path in paths:
                raise GoldensetError(
                    f"calibrate: {path} not found: run `dvc repro` (or `dvc pull`) first"
                )
            continue
        target = scratch / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():  # a --workdir kept from an earlier calibration
            target.unlink()
        target.symlink_to(source.resolve(), target_is_directory=source.is_dir())


def run_configurations(
    project: Path, params: Params, scratch: Path, progress: Callable[[str], None]
) -> tuple[pd.DataFrame, list[Configuration], list[str]]:
    """Per-question rows of every configuration (a `configuration` column added), the
    configurations in order, and the view metrics that score.headline refuses."""
    settings = params.calibrate
    assert settings is not None
    needed = [metric for view in views_of(settings) for metric in view.metrics()]
    score, refused = with_headline(params.score, needed)
    columns = [*KEYS, *(metric for metric in dict.fromkeys(needed) if metric not in refused)]
    cache_dir = str((project / params.embed.cache_dir).resolve())
    stages = {name: load_stage(name) for name in STAGE_RUN}
    link_upstream(project, scratch, params.retrievers.external.folder)
    params = anchored(params, project)
    frames, configurations = [], []
    chunkings, models = grid(params)
    with working_directory(scratch):
        for chunking in chunkings:
            for number, model in enumerate(models):
                embed = model.model_copy(update={"cache_dir": cache_dir})
                first = number == 0
                run = params.model_copy(
                    update={
                        "chunk": chunking,
                        "embed": embed,
                        "score": score,
                        "retrievers": enabled_retrievers(
                            params.retrievers, settings.retrievers, first
                        ),
                    }
                )
                started = time.perf_counter()
                settings_text = yaml.safe_dump(run.model_dump(), sort_keys=False)
                write_atomically(Path("params.yaml"), settings_text)
                if first or chunking.strategy == "tokens":  # tokens chunks by the model's tokenizer
                    stages["chunk"].main(run)
                stages["embed"].main(run)
                scored = score_configuration(run)
                write_score_outputs(scored)  # what a kept --workdir shows: the stage's files
                results = scored.results
                for retriever in reported(settings.retrievers, first):
                    label = MODEL_FREE if retriever in model_free() else model_label(embed)
                    configuration = Configuration(
                        f"{retriever} | {chunk_label(chunking)} | {label}",
                        chunk_label(chunking),
                        label,
                        retriever,
                    )
                    rows = results.loc[results["retriever"] == retriever, columns]
                    frames.append(rows.assign(configuration=configuration.name))
                    configurations.append(configuration)
                progress(
                    f"calibrate: {chunk_label(chunking)} / {model_label(embed)} scored in "
                    f"{time.perf_counter() - started:.1f} s"
                )
    return pd.concat(frames, ignore_index=True), configurations, refused


def usable_views(
    results: pd.DataFrame, settings: CalibrateParams, refused: list[str]
) -> tuple[list[View], list[str]]:
    """The views whose metrics the results hold, and one line per view skipped for want of them."""
    usable, skipped = [], []
    for view in views_of(settings):
        missing = [name for name in (view.golden, view.reference) if not available(results, name)]
        if missing:
            why = ", ".join(f"{name} ({_absent(name, refused)})" for name in missing)
            skipped.append(f"view {view.name} skipped: {why}")
            continue
        usable.append(view)
    return usable, skipped


def _absent(qualified: str, refused: list[str]) -> str:
    if qualified.partition(".")[2] in refused:
        return "score.headline does not accept this metric"
    return "no values in the results"


def calibrate(project: Path, workdir: Path | None = None) -> Calibration:
    """Every figure of `goldenset calibrate` for a project."""
    project = project.resolve()
    params = load_params(project / "params.yaml")
    if params.calibrate is None:
        raise GoldensetError("params.yaml: calibrate: missing; add the calibrate section")
    settings = params.calibrate
    chunkings, models = grid(params)
    check_labels(
        settings.groups, [chunk_label(c) for c in chunkings], [model_label(m) for m in models]
    )

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    logging.getLogger("goldenset").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="goldenset-calibrate-") as temporary:
        scratch = workdir or Path(temporary)
        scratch.mkdir(parents=True, exist_ok=True)
        results, configurations, refused = run_configurations(project, params, scratch, progress)
    views, skipped = usable_views(results, settings, refused)
    for line in skipped:
        progress(line)
    started = time.perf_counter()
    calibration = assess(results, configurations, views, skipped, settings)
    progress(f"calibrate: figures in {time.perf_counter() - started:.1f} s")
    return calibration
