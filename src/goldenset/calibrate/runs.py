"""`goldenset calibrate`: every configuration of the `calibrate` params run through the library
functions the chunk, embed and score stages call (goldenset.chunking.configured,
goldenset.embedding.sets, goldenset.scoring.configuration), in memory.

The project's ingest and generate outputs (documents, golden set, query sets) are read once, and
every run reads the project's embedding cache and fills calibrate's own beside it
(CALIBRATE_CACHE, `cache/calibrate` by default: not a stage's output, so `dvc status` stays as
it was; `dvc add` it to share it through a remote), so a text already embedded by `dvc repro`
(or an earlier calibration) is never embedded again. Scoring gives the rows of
data/results.parquet, one per (query set, retriever, question) with the question's value of
each headline metric; those rows are what the views compare. Nothing is written but the cache,
and, with a work folder, the chunk, embed and score stages' files of each run in turn.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from itertools import product
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ValidationError
from tqdm import tqdm

from goldenset.calibrate.agreement import View, available
from goldenset.calibrate.estimate import plan_line, read_rates, remember_rate
from goldenset.calibrate.figures import Calibration, assess
from goldenset.calibrate.groups import MODEL_FREE, Configuration, check_labels
from goldenset.calibrate.params import CalibrateCommand, CalibrateParams
from goldenset.chunking.base import STRATEGIES
from goldenset.chunking.configured import chunk_corpus
from goldenset.chunking.params import ChunkParams
from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_parquet
from goldenset.core.params import EmbedParams, load_stage_params
from goldenset.core.vectors import CHUNK_VECTORS, write_vectors
from goldenset.corpus.querysets import QUERY_SETS
from goldenset.embedding.cache import EmbeddingCache, cache_key
from goldenset.embedding.encoder import model_identity
from goldenset.embedding.sets import embed_sets
from goldenset.scoring.configuration import read_project_upstream, score_inputs, write_score_outputs
from goldenset.scoring.inputs import SCORED_CHUNK_COLUMNS, ScoreInputs
from goldenset.scoring.outputs import ScoreOutputs
from goldenset.scoring.params import ScoreParams
from goldenset.scoring.retriever_params import RetrieversSection
from goldenset.scoring.retrievers import RETRIEVERS, fused_sections, load_retrievers, model_free
from goldenset.scoring.tokens import document_token_starts

# calibrate's own vectors, beside embed.cache_dir (a folder of the same parent)
CALIBRATE_CACHE = "calibrate"


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
    for name in RETRIEVERS:
        raw[name]["enabled"] = name in on
    return type(settings).model_validate(raw)


def reported(wanted: list[str], with_model_free: bool) -> list[str]:
    """The wanted retrievers scored with this model: those reading no embedding only with the
    first."""
    return [name for name in wanted if with_model_free or name not in model_free()]


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


def upstream_files() -> list[Path]:
    """The ingest and generate outputs every configuration reads: documents and query sets."""
    return [paths.DOCUMENTS, *(path for entry in QUERY_SETS.values() for path in entry.files)]


def check_upstream(project: Path) -> None:
    for path in upstream_files():
        if not (project / path).exists():
            raise GoldensetError(
                f"calibrate: {path.as_posix()} not found: run `dvc repro` (or `dvc pull`) first"
            )


def write_run(workdir: Path, inputs: ScoreInputs, scored: ScoreOutputs) -> None:
    """What the chunk, embed and score stages would write for one run, under workdir."""
    write_parquet(inputs.chunks, workdir / paths.CHUNKS)
    write_vectors(
        workdir / paths.EMBEDDINGS,
        CHUNK_VECTORS,
        inputs.chunks["chunk_id"].tolist(),
        inputs.chunk_vectors,
    )
    for name, vectors in inputs.query_vectors.items():
        write_vectors(workdir / paths.EMBEDDINGS, name, inputs.query_sets[name].qids, vectors)
    write_score_outputs(scored, workdir)


def run_configurations(
    project: Path,
    params: CalibrateCommand,
    workdir: Path | None,
    progress: Callable[[str], None],
) -> tuple[pd.DataFrame, list[Configuration], list[str]]:
    """Per-question rows of every configuration (a `configuration` column added), the
    configurations in order, and the view metrics that score.headline refuses; the golden set's
    questions a person failed are left out, read as the score stage reads them."""
    settings = params.calibrate
    assert settings is not None
    needed = [metric for view in views_of(settings) for metric in view.metrics()]
    score, refused = with_headline(params.score, needed)
    columns = [
        *paths.RESULT_KEYS,
        *(metric for metric in dict.fromkeys(needed) if metric not in refused),
    ]
    # calibrate reads the embed stage's vectors and writes its own beside them: the stage's
    # cache is its output, and filling it would mark the pipeline changed (dvc status)
    stage_cache = (project / params.embed.cache_dir).resolve()
    cache_dir = str(stage_cache.parent / CALIBRATE_CACHE)
    check_upstream(project)
    upstream = read_project_upstream(params.review, project)
    documents, query_sets = upstream.documents, upstream.query_sets
    if upstream.reviewed.failed:
        progress(
            f"calibrate: {len(upstream.reviewed.failed)} questions a person failed left out, "
            "as score does"
        )
    params = anchored(params, project)
    frames, configurations = [], []
    chunkings, models = grid(params)
    models = [model.model_copy(update={"cache_dir": cache_dir}) for model in models]
    chunked = chunk_grid(documents, chunkings, models)
    token_starts = document_token_starts(score.tokenizer, documents)
    runs = len(chunkings) * len(models)
    configurations_planned = len(chunkings) * sum(
        len(reported(settings.retrievers, number == 0)) for number in range(len(models))
    )
    missing = texts_to_embed(chunked, query_sets, models, stage_cache)
    progress(
        plan_line(
            len(chunkings),
            len(models),
            configurations_planned,
            missing,
            read_rates(Path(cache_dir)),
        )
    )
    bar = tqdm(total=runs, desc="calibrate", unit="run", file=sys.stderr, dynamic_ncols=True)
    for (at_chunking, chunking), (number, embed) in product(
        enumerate(chunkings), enumerate(models)
    ):
        first = number == 0
        retrievers = enabled_retrievers(params.retrievers, settings.retrievers, first)
        started = time.perf_counter()
        chunks = chunked[at_chunking, number]
        embedded = embed_sets(embed, chunks, query_sets, read_also=[stage_cache])
        embedding = time.perf_counter() - started
        remember_rate(Path(cache_dir), model_label(embed), embedded.encoded, embedding)
        inputs = ScoreInputs(
            chunks,
            embedded.vectors[CHUNK_VECTORS],
            query_sets,
            {name: embedded.vectors[name] for name, found in query_sets.items() if found},
            token_starts,
            load_retrievers(retrievers),
            documents[documents["doc_id"].isin(set(chunks["doc_id"]))],  # a store's passages
        )
        scored = score_inputs(inputs, score, retrievers)
        if workdir is not None:  # what a kept --workdir shows: the stages' files
            write_run(workdir, inputs, scored)
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
        bar.update(1)
        progress(
            f"calibrate: {chunk_label(chunking)} / {model_label(embed)} scored in "
            f"{time.perf_counter() - started:.1f} s ({embedded.encoded} texts embedded in "
            f"{embedding:.1f} s)"
        )
    bar.close()
    return pd.concat(frames, ignore_index=True), configurations, refused


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


def texts_to_embed(
    chunked: dict[tuple[int, int], pd.DataFrame],
    query_sets: dict,
    models: list[EmbedParams],
    stage_cache: Path,
) -> dict[str, int]:
    """Model label -> the distinct texts of the grid that neither the embed stage's cache nor
    calibrate's holds for it."""
    missing = {}
    for number, model in enumerate(models):
        cache = EmbeddingCache(model.cache_dir, [stage_cache])
        identity = model_identity(model)
        keys = {
            cache_key(identity, model.passage_prefix, text)
            for (_, at), chunks in chunked.items()
            if at == number
            for text in chunks["text"]
        }
        keys |= {
            cache_key(identity, model.query_prefix, text)
            for found in query_sets.values()
            for text in found.texts
        }
        missing[model_label(model)] = sum(key not in cache for key in keys)
    return missing


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
    """Every figure of `goldenset calibrate` for a project, less the golden set's questions a
    person failed (goldenset.scoring.configuration.read_project_upstream, as score reads them)."""
    project = project.resolve()
    params = load_stage_params(CalibrateCommand, project / "params.yaml")
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
    results, configurations, refused = run_configurations(project, params, workdir, progress)
    views, skipped = usable_views(results, settings, refused)
    for line in skipped:
        progress(line)
    started = time.perf_counter()
    calibration = assess(results, configurations, views, skipped, settings)
    progress(f"calibrate: figures in {time.perf_counter() - started:.1f} s")
    return calibration
