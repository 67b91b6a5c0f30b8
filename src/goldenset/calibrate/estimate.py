"""What a calibrate run will compute, said before it starts: the runs and configurations of the
grid, the texts each model must still embed (in no cache), and about how long that takes at the
rate the last calibrate measured for the model (RATES_FILE, beside calibrate's vectors).
Embedding is most of a cold run (docs: Benchmarks), so the estimate counts embedding alone."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from goldenset.calibrate.grid import model_label
from goldenset.core.files import write_json
from goldenset.core.params import EmbedParams
from goldenset.embedding.cache import EmbeddingCache, cache_key
from goldenset.embedding.encoder import model_identity

RATES_FILE = "rates.json"  # in calibrate's cache folder: model -> seconds a text, last measured
MIN_MEASURED = 50  # texts a run must embed before its rate replaces the last one


def read_rates(folder: Path) -> dict[str, float]:
    try:
        return json.loads((folder / RATES_FILE).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def remember_rate(folder: Path, model: str, texts: int, seconds: float) -> None:
    """Keep a model's seconds a text from a run that embedded enough texts to measure it."""
    if texts < MIN_MEASURED:
        return
    rates = read_rates(folder)
    rates[model] = round(seconds / texts, 6)
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / RATES_FILE, dict(sorted(rates.items())))


def plan_line(
    chunkings: int,
    models: int,
    configurations: int,
    missing: Mapping[str, int],
    rates: Mapping[str, float],
) -> str:
    """One line: the grid, each model's texts to embed with its time, and the total."""
    parts, total, unknown = [], 0.0, []
    for model, count in missing.items():
        if count and model not in rates:
            unknown.append(model)
            parts.append(f"{model} {count:,} (no rate measured yet)")
            continue
        seconds = count * rates.get(model, 0.0)
        total += seconds
        parts.append(f"{model} {count:,}" + (f" (~{_duration(seconds)})" if count else ""))
    known = f"about {_duration(total)} of embedding" if total or not unknown else ""
    when = (
        f"{known}{' and ' if known and unknown else ''}"
        + (f"{len(unknown)} model(s) not timed yet" if unknown else "")
        + " (scoring adds seconds a run)"
    )
    return (
        f"calibrate: {chunkings} chunkings x {models} models: {chunkings * models} runs, "
        f"{configurations} configurations; texts to embed: {', '.join(parts)}; {when}"
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


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
            for questions in query_sets.values()
            for text in questions.texts
        }
        missing[model_label(model)] = sum(key not in cache for key in keys)
    return missing
