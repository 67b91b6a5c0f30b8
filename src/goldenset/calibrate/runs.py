"""`goldenset calibrate`: every configuration of the `calibrate` params run through the library
functions the chunk, embed and score stages call (goldenset.chunking.configured,
goldenset.embedding.sets, goldenset.scoring.configuration), in memory.

The project's ingest and generate outputs (documents, golden set, query sets) are read once, and
every run reads the project's embedding cache and fills calibrate's own beside it
(grid.CALIBRATE_CACHE, `cache/calibrate` by default: not a stage's output, so `dvc status` stays
as it was; `dvc add` it to share it through a remote), so a text already embedded by `dvc
repro` (or an earlier calibration) is never embedded again. Scoring gives the rows of
data/results.parquet, one per (query set, retriever, question) with the question's value of
each headline metric; those rows are what the views compare. Nothing is written but the cache,
and, with a work folder, the chunk, embed and score stages' files of each run in turn.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from goldenset.calibrate.agreement import View, available
from goldenset.calibrate.estimate import plan_line, read_rates, remember_rate, texts_to_embed
from goldenset.calibrate.figures import Calibrations, SeedRows, assess_seeds
from goldenset.calibrate.grid import (
    RunInputs,
    chunk_label,
    enabled_retrievers,
    grid,
    model_label,
    prepare_runs,
    reported,
    variant_retrievers,
    views_of,
    without_retriever,
)
from goldenset.calibrate.groups import MODEL_FREE, STORE_CHUNKING, Configuration, check_labels
from goldenset.calibrate.params import CalibrateCommand, CalibrateParams, VariantParams
from goldenset.chunking.params import ChunkParams
from goldenset.core import paths
from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_parquet
from goldenset.core.params import EmbedParams, load_stage_params
from goldenset.core.vectors import CHUNK_VECTORS, write_vectors
from goldenset.corpus.querysets import QUERY_SETS
from goldenset.embedding.sets import Embedded, embed_sets
from goldenset.retrieval.params import RetrieversSection
from goldenset.retrieval.retrievers import load_retrievers, model_free, stores
from goldenset.scoring.configuration import save_answers, score_inputs, write_score_outputs
from goldenset.scoring.inputs import ScoreInputs
from goldenset.scoring.one_chunking import VanishedRun
from goldenset.scoring.outputs import ScoreOutputs
from goldenset.scoring.params import ScoreParams

log = logging.getLogger("goldenset")


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


@dataclass(frozen=True)
class GridResults:
    results: pd.DataFrame  # per-question rows of every configuration, a `configuration` column
    configurations: list[Configuration]  # in grid order
    refused: list[str]  # the view metrics that score.headline refuses
    seed_qids: dict[int, list[str]]  # generate.seed -> its golden questions among the rows


def run_configurations(
    project: Path,
    params: CalibrateCommand,
    workdir: Path | None,
    progress: Callable[[str], None],
) -> GridResults:
    """Every configuration of the grid scored on the golden sets of the calibrated seeds (pooled)
    and the reference sets; the golden set's questions a person failed are left out, read as the
    score stage reads them."""
    runs, refused = prepare_runs(project, params, progress)
    progress(plan(runs))
    frames, configurations = [], []
    bar = tqdm(
        total=len(runs.chunkings) * len(runs.models),
        desc="calibrate",
        unit="run",
        file=sys.stderr,
        dynamic_ncols=True,
    )
    try:
        for (at_chunking, chunking), (number, embed) in product(
            enumerate(runs.chunkings), enumerate(runs.models)
        ):
            started = time.perf_counter()
            first_run = at_chunking == 0 and number == 0
            embedded, embedding, results = score_run(runs, at_chunking, number, first_run, workdir)
            scored = configuration_rows(runs, results, chunking, embed, number == 0, first_run)
            for configuration, rows in scored:
                frames.append(rows)
                configurations.append(configuration)
            bar.update(1)
            progress(run_line(chunking, embed, started, embedded, embedding))
    finally:  # a callable's answers are kept, a failure half-way included
        save_answers(runs.loaded)
        bar.close()
    return GridResults(
        pd.concat(frames, ignore_index=True), configurations, refused, runs.seed_qids
    )


def plan(runs: RunInputs) -> str:
    """The line said before the first run: the grid's runs and configurations, and each model's
    texts to embed with about how long they take."""
    configurations = sum(
        len(reported(runs.wanted, number == 0, at == number == 0))
        + len(runs.variants_at(at, number == 0))
        for at in range(len(runs.chunkings))
        for number in range(len(runs.models))
    )
    missing = texts_to_embed(runs.chunked, runs.upstream.query_sets, runs.models, runs.stage_cache)
    return plan_line(
        len(runs.chunkings), len(runs.models), configurations, missing, read_rates(runs.cache_dir)
    )


def score_run(
    runs: RunInputs, at_chunking: int, number: int, first_run: bool, workdir: Path | None
) -> tuple[Embedded, float, pd.DataFrame]:
    """One (chunking, model) run embedded and scored (``first_run``: the grid's first, which
    scores the stores), its stages' files written under workdir: what it embedded, the seconds
    embedding took, and its per-question results."""
    embed, chunks = runs.models[number], runs.chunked[at_chunking, number]
    retrievers = enabled_retrievers(runs.params.retrievers, runs.wanted, number == 0, first_run)
    started = time.perf_counter()
    query_sets, documents = runs.upstream.query_sets, runs.upstream.documents
    embedded = embed_sets(embed, chunks, query_sets, read_also=[runs.stage_cache])
    embedding = time.perf_counter() - started
    remember_rate(runs.cache_dir, model_label(embed), embedded.encoded, embedding)
    inputs = ScoreInputs(
        chunks,
        embedded.vectors[CHUNK_VECTORS],
        query_sets,
        {name: embedded.vectors[name] for name, questions in query_sets.items() if questions},
        runs.token_starts,
        {name: read for name, read in runs.loaded.items() if getattr(retrievers, name).enabled},
        documents[documents["doc_id"].isin(set(chunks["doc_id"]))],  # a store's passages
    )
    chunking = chunk_label(runs.chunkings[at_chunking])
    scored = score_skipping(inputs, runs.score, retrievers, chunking)
    if workdir is not None:  # what a kept --workdir shows: the stages' files
        write_run(workdir, inputs, scored)
    varied = [
        variant_rows(runs, inputs, label, variant, chunking)
        for label, variant in runs.variants_at(at_chunking, number == 0).items()
    ]
    return embedded, embedding, pd.concat([scored.results, *varied], ignore_index=True)


def score_skipping(
    inputs: ScoreInputs, score: ScoreParams, retrievers: RetrieversSection, chunking: str
) -> ScoreOutputs:
    """The run scored, a retriever whose run names none of a set's items at this chunking (a
    run file of another chunking's chunk ids) turned off, with one line each."""
    while True:
        try:
            return score_inputs(inputs, score, retrievers)
        except VanishedRun as error:
            if not getattr(retrievers, error.retriever).enabled:
                raise
            log.warning("calibrate: %s skipped at %s: %s", error.retriever, chunking, error)
            retrievers = without_retriever(retrievers, error.retriever)


def variant_rows(
    runs: RunInputs, inputs: ScoreInputs, label: str, variant: VariantParams, chunking: str
) -> pd.DataFrame:
    """A variant's per-question results over one run's chunks and vectors: its retriever scored
    with the variant's settings, its rows under the variant's label."""
    retrievers = variant_retrievers(runs.params.retrievers, variant)
    inputs = replace(inputs, loaded=load_retrievers(retrievers))
    results = score_skipping(inputs, runs.score, retrievers, chunking).results
    return results[results["retriever"] == variant.retriever].assign(retriever=label)


def configuration_rows(
    runs: RunInputs,
    results: pd.DataFrame,
    chunking: ChunkParams,
    embed: EmbedParams,
    first: bool,
    first_run: bool,
) -> list[tuple[Configuration, pd.DataFrame]]:
    """Each configuration one run scores (those reading no embedding with the first model only,
    a store in the first run only, over its own chunks), with its rows of the run's results:
    the kept columns, a `configuration` column added."""
    configured = []
    variants = runs.variants_at(runs.chunkings.index(chunking), first)
    for retriever in [*reported(runs.wanted, first, first_run), *variants]:
        reads = variants[retriever].retriever if retriever in variants else retriever
        label = MODEL_FREE if reads in model_free() else model_label(embed)
        chunked = STORE_CHUNKING if reads in stores() else chunk_label(chunking)
        configuration = Configuration(
            f"{retriever} | {chunked} | {label}", chunked, label, retriever
        )
        rows = results.loc[results["retriever"] == retriever, runs.columns]
        if rows.empty:  # skipped at this chunking (score_skipping said why)
            continue
        configured.append((configuration, rows.assign(configuration=configuration.name)))
    return configured


def run_line(
    chunking: ChunkParams, embed: EmbedParams, started: float, embedded: Embedded, embedding: float
) -> str:
    """The line said after a run: its seconds since started, and the texts it embedded in the
    embedding seconds."""
    return (
        f"calibrate: {chunk_label(chunking)} / {model_label(embed)} scored in "
        f"{time.perf_counter() - started:.1f} s ({embedded.encoded} texts embedded in "
        f"{embedding:.1f} s)"
    )


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


def calibrate(
    project: Path, workdir: Path | None = None, seeds: list[int] | None = None
) -> Calibrations:
    """Every figure of `goldenset calibrate` for a project, less the golden set's questions a
    person failed (goldenset.scoring.configuration.read_project_upstream, as score reads them);
    seeds: the generate.seed values judged (calibrate.seeds when None)."""
    project = project.resolve()
    params = load_stage_params(CalibrateCommand, project / "params.yaml")
    if params.calibrate is None:
        raise GoldensetError("params.yaml: calibrate: missing; add the calibrate section")
    if seeds:
        calibrate_params = params.calibrate.model_copy(update={"seeds": seeds})
        params = params.model_copy(update={"calibrate": calibrate_params})
    settings = params.calibrate
    chunkings, models = grid(params)
    check_labels(
        settings.groups, [chunk_label(c) for c in chunkings], [model_label(m) for m in models]
    )

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    logging.getLogger("goldenset").setLevel(logging.WARNING)
    scored = run_configurations(project, params, workdir, progress)
    views, skipped = usable_views(scored.results, settings, refused=scored.refused)
    for line in skipped:
        progress(line)
    started = time.perf_counter()
    golden = next(entry.name for entry in QUERY_SETS.values() if entry.golden)
    calibrations = assess_seeds(
        scored.results,
        scored.configurations,
        views,
        skipped,
        settings,
        SeedRows(golden, scored.seed_qids),
    )
    progress(f"calibrate: figures in {time.perf_counter() - started:.1f} s")
    return calibrations
