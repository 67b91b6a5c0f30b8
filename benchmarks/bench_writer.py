"""The local question writer: the old path against the new one, in one process, same documents.

Old: the baseline commit's generation code (JSON question + copied evidence, one saved prefix
state that a retry's longer prefix replaces). New: this checkout's (the program marks one target
sentence, the model writes the question only, saved prompt states make a retry pay only for what
follows the passage, resamples come before a correction). Each runs its own params.yaml
`generate` section on the shipped sample's documents, with max_questions overridden, a fresh
answer cache, and the model loaded before the clock starts. Prints kept questions per minute,
yield (kept / requests), median echo (content-word overlap of each question with its document's
title and text) and the ratios.

    PYTHONPATH=src python benchmarks/bench_writer.py [--questions 24] [--baseline 559ea75]

Against the previous release's writer (questions, no title, one answer per prompt):
    PYTHONPATH=src python benchmarks/bench_writer.py --questions 60 --baseline 6e27c7a
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml
from baseline import ROOT, extract, use_source

BASELINE = "559ea75"  # the last commit with the JSON question + evidence writer


def _extract_baseline(rev: str, into: Path) -> tuple[Path, dict]:
    """The baseline's src/ folder and its params.yaml generate section."""
    extract(rev, into, "src", "params.yaml")
    return into / "src", yaml.safe_load((into / "params.yaml").read_text())["generate"]


def _documents() -> tuple[list[tuple[str, str]], dict[str, str]]:
    from goldenset.corpus.ingest import ingest

    result = ingest(ROOT / "data" / "docs", max_file_mb=20)
    documents = [(d.doc_id, d.text) for d in result.documents]
    return documents, {d.doc_id: d.title or "" for d in result.documents}


def run_path(label: str, src: Path, generate: dict, questions: int, cache: Path) -> dict:
    use_source(src)
    from goldenset.core.echo import overlap
    from goldenset.generation.params import GenerateParams
    from goldenset.generation.providers.registry import make_provider
    from goldenset.generation.runner import run_generation

    documents, titles = _documents()
    # no per-request timeout: on a loaded machine it would cut answers short and skew the yield
    overrides = {"max_questions": questions, "cache_dir": str(cache), "request_timeout": 3600}
    params = GenerateParams(**{**generate, **overrides})
    provider = make_provider(params)
    provider.load()  # the clock measures questions, not the model load
    extra = {"titles": titles} if "titles" in run_generation.__code__.co_varnames else {}
    if "example_queries" in run_generation.__code__.co_varnames:  # as the generate stage does
        from goldenset.generation.prompt import pick_examples

        examples = params.example_queries or []
        if "aim_examples" in run_generation.__code__.co_varnames:  # a file of them, aimed at
            from goldenset.corpus.queries import read_examples

            extra["aim_examples"] = read_examples(params.example_queries)
            examples = [example.text for example in extra["aim_examples"]]
        extra["example_queries"] = pick_examples(examples, params.example_count, params.seed)
    started = time.perf_counter()
    result = run_generation(documents, params, provider=provider, progress=False, **extra)
    seconds = time.perf_counter() - started
    provider.close()
    texts = dict(documents)
    echoes = [
        overlap(row["question"], f"{titles[row['doc_id']]} {texts[row['doc_id']]}")
        for row in result.rows
    ]
    stats = result.stats
    return {
        "path": label,
        "asked": stats.questions_planned,
        "kept": stats.questions_written,
        "requests": stats.requests,
        "yield": round(stats.questions_written / max(stats.requests, 1), 3),
        "seconds": round(seconds, 1),
        "kept_per_min": round(60 * stats.questions_written / seconds, 2),
        "output_tokens_per_request": round(stats.output_tokens / max(stats.requests, 1), 1),
        "input_tokens_per_request": round(stats.input_tokens / max(stats.requests, 1), 1),
        "median_echo": round(statistics.median(echoes), 3) if echoes else None,
        "invalid": dict(stats.invalid_answers),
        "sample_questions": [row["question"] for row in result.rows[:4]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=24)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--only", choices=["old", "new"], default=None)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    current = yaml.safe_load((ROOT / "params.yaml").read_text())["generate"]
    print(f"load: {os.getloadavg()}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        old_src, old_generate = _extract_baseline(args.baseline, Path(tmp) / "baseline")
        results = []
        if args.only in (None, "old"):
            cache = Path(tmp) / "old-cache"
            results.append(run_path("old", old_src, old_generate, args.questions, cache))
            print(json.dumps(results[-1], ensure_ascii=False), flush=True)
        if args.only in (None, "new"):
            cache = Path(tmp) / "new-cache"
            results.append(run_path("new", ROOT / "src", current, args.questions, cache))
            print(json.dumps(results[-1], ensure_ascii=False), flush=True)
    if len(results) == 2:
        old, new = results
        print(
            json.dumps(
                {
                    "kept_per_min_ratio": round(
                        new["kept_per_min"] / max(old["kept_per_min"], 1e-9), 2
                    ),
                    "yield_ratio": round(new["yield"] / max(old["yield"], 1e-9), 2),
                    "load_after": os.getloadavg(),
                }
            )
        )


if __name__ == "__main__":
    main()
