"""The grid `goldenset calibrate` runs, set up before its first run: the chunkings and models of
the calibrate params, each applied over the project's params (grid), and their labels; the score
params whose headline holds the views' metrics; the retrievers each model's run turns on; and what
every (chunking, model) run reads (RunInputs: the project's documents and query sets, read once,
and each run's chunks)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ValidationError

from goldenset.calibrate.agreement import View
from goldenset.calibrate.groups import variant_chunkings
from goldenset.calibrate.params import CalibrateCommand, CalibrateParams, VariantParams
from goldenset.calibrate.seeds import seed_sets, seeds_to_score, with_seed_sets
from goldenset.chunking.base import STRATEGIES
from goldenset.chunking.configured import chunk_corpus
from goldenset.chunking.params import ChunkParams
from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.core.params import EmbedParams
from goldenset.corpus.querysets import QUERY_SETS
from goldenset.retrieval.params import RetrieversSection
from goldenset.retrieval.retrievers import RETRIEVERS, fused_sections, model_free, stores
from goldenset.scoring.configuration import (
    ProjectUpstream,
    read_outside_of,
    read_project_upstream,
)
from goldenset.scoring.inputs import SCORED_CHUNK_COLUMNS
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.reviewed import scored_line
from goldenset.scoring.tokens import document_token_starts

# calibrate's own vectors, beside embed.cache_dir (a folder of the same parent)
CALIBRATE_CACHE = "calibrate"


@dataclass(frozen=True)
class RunInputs:
    """What every (chunking, model) run of a calibration reads, read and chunked once."""

    params: CalibrateCommand  # the external retriever's paths found from the project (anchored)
    score: ScoreParams  # its headline holding the views' metrics score accepts
    columns: list[str]  # the columns of the results kept: their keys and the views' metrics
    upstream: ProjectUpstream
    stage_cache: Path  # the embed stage's vectors, read only
    cache_dir: Path  # calibrate's own vectors, which every model fills
    chunkings: list[ChunkParams]
    models: list[EmbedParams]
    chunked: dict[tuple[int, int], pd.DataFrame]  # (chunking, model) -> chunks (chunk_grid)
    token_starts: dict[str, list[int]]
    seed_qids: dict[int, list[str]]  # generate.seed -> its golden questions (calibrate.seeds)
    # what the calibrated retrievers read from outside, read once: a callable with its cached
    # answers, a run file, each store asked (its own chunking, scored in the first run only)
    loaded: dict[str, object]

    @property
    def settings(self) -> CalibrateParams:
        assert self.params.calibrate is not None
        return self.params.calibrate

    @property
    def wanted(self) -> list[str]:
        """The retrievers the calibrate params score."""
        return self.settings.retrievers

    def variants_at(self, at_chunking: int, first_model: bool) -> dict[str, VariantParams]:
        """The variants scored at this chunking with this model: at the chunkings of the groups
        that name them (a variant no group names is not scored), and those reading no embedding
        with the first model only."""
        label = chunk_label(self.chunkings[at_chunking])
        groups = self.settings.groups
        return {
            name: variant
            for name, variant in self.settings.variants.items()
            if (first_model or variant.retriever not in model_free())
            and _scored_at(label, variant_chunkings(name, groups))
        }


def prepare_runs(
    project: Path, params: CalibrateCommand, progress: Callable[[str], None]
) -> tuple[RunInputs, list[str]]:
    """What every run reads (the project's documents and query sets, each run's chunks), and the
    view metrics that score.headline refuses; says how many failed questions are left out."""
    settings = params.calibrate
    assert settings is not None
    needed = [metric for view in views_of(settings) for metric in view.metrics()]
    score, refused = with_headline(params.score, needed)
    # calibrate compares the questions' values and reads no chance level: the random rankings
    # that estimate the context metrics' chance levels were a third of its scoring time
    score = score.model_copy(update={"chance_rankings": 0})
    columns = [
        *paths.RESULT_KEYS,
        *(metric for metric in dict.fromkeys(needed) if metric not in refused),
    ]
    # calibrate reads the embed stage's vectors and writes its own beside them: the stage's
    # cache is its output, and filling it would mark the pipeline changed (dvc status)
    stage_cache = (project / params.embed.cache_dir).resolve()
    cache_dir = stage_cache.parent / CALIBRATE_CACHE
    check_upstream(project)
    upstream = read_project_upstream(project)
    if upstream.counts:  # as score, the golden set as people left it
        progress(scored_line(upstream.counts))
    seeds = seeds_to_score(settings.seeds, params.generate.seed)
    sets = seed_sets(
        project, upstream, params.review, params.generate.seed, seeds, cache_dir, progress
    )
    upstream, seed_qids = with_seed_sets(upstream, sets)
    params = anchored(params, project)
    chunkings, models = grid(params)
    models = [model.model_copy(update={"cache_dir": str(cache_dir)}) for model in models]
    chunked = chunk_grid(upstream.documents, chunkings, models)
    token_starts = document_token_starts(score.tokenizer, upstream.documents)
    runs = RunInputs(
        params,
        score,
        columns,
        upstream,
        stage_cache,
        cache_dir,
        chunkings,
        models,
        chunked,
        token_starts,
        seed_qids,
        read_outside_of(
            upstream,
            token_starts,
            score,
            enabled_retrievers(params.retrievers, settings.retrievers, True),
        ),
    )
    return runs, refused


def chunk_grid(
    documents: pd.DataFrame, chunkings: list[ChunkParams], models: list[EmbedParams]
) -> dict[tuple[int, int], pd.DataFrame]:
    """(chunking, model) -> the chunks: once per chunking, but once per model for a strategy
    that counts by the model's tokenizer."""
    chunked = {}
    for at, chunking in enumerate(chunkings):
        for number, model in enumerate(models):
            if number == 0 or STRATEGIES[chunking.strategy].needs_tokenizer:
                chunks = chunk_corpus(documents, chunking, model)[SCORED_CHUNK_COLUMNS]
            chunked[at, number] = chunks
    return chunked


def upstream_files() -> list[Path]:
    """The ingest and generate outputs every configuration reads: documents and query sets."""
    return [paths.DOCUMENTS, *(path for entry in QUERY_SETS.values() for path in entry.files)]


def check_upstream(project: Path) -> None:
    """Refuses a project that lacks one of the upstream files."""
    for path in upstream_files():
        if not (project / path).exists():
            raise GoldensetError(
                f"calibrate: {path.as_posix()} not found: run `dvc repro` (or `dvc pull`) first"
            )


def chunk_label(chunk: ChunkParams) -> str:
    """A chunking's name in calibrate's lines and figures: `sentences 250 overlap 50`."""
    if chunk.strategy == "none":
        return "whole documents"
    label = f"{chunk.strategy} {chunk.max_size}"
    return label + (f" overlap {chunk.overlap}" if chunk.overlap else "")


def model_label(embed: EmbedParams) -> str:
    """A model's name in calibrate's lines and groups: `all-MiniLM-L6-v2 max_seq_length 16`."""
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
    settings: RetrieversSection, wanted: list[str], with_model_free: bool, with_stores: bool = True
) -> RetrieversSection:
    """The project's retriever settings with only the wanted ones on (and those hybrid fuses);
    model_free False leaves bm25 and external off unless hybrid needs them, with_stores False
    the stores (a store ranks its own chunks: one run scores it)."""
    fused = {
        other for name, fuse in fused_sections(settings).items() if name in wanted for other in fuse
    }
    on = set(reported(wanted, with_model_free, with_stores)) | fused
    raw = settings.model_dump()
    for name in RETRIEVERS:
        raw[name]["enabled"] = name in on
    return type(settings).model_validate(raw)


def without_retriever(settings: RetrieversSection, name: str) -> RetrieversSection:
    """The settings with one retriever turned off."""
    raw = settings.model_dump()
    raw[name]["enabled"] = False
    return type(settings).model_validate(raw)


def _scored_at(chunking: str, chunkings: list[str] | None) -> bool:
    return chunkings is None or chunking in chunkings


def variant_retrievers(settings: RetrieversSection, variant: VariantParams) -> RetrieversSection:
    """The project's retriever settings with only the variant's retriever on, its settings
    changed (and those it fuses on)."""
    raw = settings.model_dump()
    for name in RETRIEVERS:
        raw[name]["enabled"] = False
    raw[variant.retriever].update(variant.settings, enabled=True)
    for other in raw[variant.retriever].get("fuse", []):
        raw[other]["enabled"] = True
    return type(settings).model_validate(raw)


def reported(wanted: list[str], with_model_free: bool, with_stores: bool = True) -> list[str]:
    """The wanted retrievers scored in this run: those reading no embedding only with the first
    model, the stores only in the first run."""
    return [
        name
        for name in wanted
        if (with_model_free or name not in model_free()) and (with_stores or name not in stores())
    ]


def grid(params: CalibrateCommand) -> tuple[list[ChunkParams], list[EmbedParams]]:
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
    """The views of the calibrate params, in their order."""
    return [View(name, view.golden, view.reference) for name, view in settings.views.items()]


def anchored(params: CalibrateCommand, project: Path) -> CalibrateCommand:
    """params whose external retriever folder and run file are absolute, found from the project
    (not from the folder `goldenset calibrate` runs in): ../search, from `goldenset init
    --retriever`, is the folder beside the project."""
    external = params.retrievers.external
    update = {"folder": str((project / external.folder).resolve())}
    if external.run_file is not None:
        update["run_file"] = str((project / external.run_file).resolve())
    retrievers = params.retrievers.model_copy(
        update={"external": external.model_copy(update=update)}
    )
    return params.model_copy(update={"retrievers": retrievers})
