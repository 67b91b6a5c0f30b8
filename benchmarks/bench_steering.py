"""The decoder's echo penalty, as a curve: strength -> invalid share, echo, kept per minute.

Each strength runs this checkout's params.yaml `generate` section on the shipped sample's
documents (max_questions overridden, a fresh answer cache, the model loaded once before the
clock), one after the other in one process. Printed per strength, one JSON line:
- invalid share: invalid answers / all answers, and the reasons;
- kept, requests, seconds, kept per minute;
- per request: prompt tokens evaluated, tokens generated, seconds, the share of generated tokens a
  decoding rule chose over the model's own pick;
- the window echo of the kept queries (goldenset.core.echo.echo, as the audit measures it):
  median, p10, p25, against the real claims' (those not shown as examples);
- `queries`: the kept queries with their evidence, for a blind strict review.

    PYTHONPATH=src python benchmarks/bench_steering.py --questions 60 --strengths 0 1.5 3
    PYTHONPATH=src python benchmarks/bench_steering.py --strengths 3 --set subject_boost=1
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

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]


def reference_echoes(sources: dict, examples: set[str]) -> list[float]:
    """The real claims' window echoes against their relevant documents (the audit's measure),
    leaving out the claims the writer is shown as examples."""
    from goldenset.core.echo import echo

    docs = ROOT / "data" / "docs"
    texts = {}
    for line in (docs / "queries.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["text"] not in examples:
            texts[row["_id"]] = row["text"]
    echoes = []
    for line in (docs / "qrels.tsv").read_text().splitlines()[1:]:
        qid, doc_id, grade = line.split("\t")
        if int(grade) > 0 and qid in texts and doc_id in sources:
            echoes.append(echo(texts[qid], sources[doc_id]))
    return echoes


def quantiles(values: list[float]) -> dict:
    if not values:
        return {}
    return {
        "median": round(statistics.median(values), 3),
        "p10": round(float(np.quantile(values, 0.1)), 3),
        "p25": round(float(np.quantile(values, 0.25)), 3),
    }


def run(strength: float, generate: dict, questions: int, cache: Path, provider, setup) -> dict:
    from goldenset.core.echo import echo
    from goldenset.generation.params import GenerateParams
    from goldenset.generation.runner import run_generation

    params = GenerateParams(
        **{
            **generate,
            "max_questions": questions,
            "cache_dir": str(cache),
            "echo_penalty": strength,
            "request_timeout": 3600,  # a loaded machine must not cut answers short
        }
    )
    provider._params = params  # one loaded model for every strength: its identity follows
    started = time.perf_counter()
    result = run_generation(
        setup["documents"],
        params,
        provider=provider,
        progress=False,
        example_queries=setup["shown"],
        titles=setup["titles"],
        aim_examples=setup["aim_examples"],
    )
    seconds = time.perf_counter() - started
    stats, measured = result.stats, result.stats.measured
    answers = stats.requests + stats.cache_hits
    invalid = sum(stats.invalid_answers.values())
    echoes = [echo(row["question"], setup["sources"][row["doc_id"]]) for row in result.rows]
    return {
        "echo_penalty": strength,
        "asked": stats.questions_planned,
        "kept": stats.questions_written,
        "answers": answers,
        "invalid_share": round(invalid / max(answers, 1), 3),
        "invalid": dict(stats.invalid_answers.most_common()),
        "seconds": round(seconds, 1),
        "kept_per_min": round(60 * stats.questions_written / seconds, 2),
        "per_request": {
            "requests": measured.requests,
            "evaluated_tokens": round(measured.evaluated_tokens / max(measured.requests, 1), 1),
            "generated_tokens": round(measured.output_tokens / max(measured.requests, 1), 1),
            "seconds": round(measured.seconds / max(measured.requests, 1), 3),
            "steered_share": round(measured.steered_tokens / max(measured.output_tokens, 1), 3),
        },
        "echo": quantiles(echoes),
        "queries": [
            {
                "qid": row["qid"],
                "doc_id": row["doc_id"],
                "question": row["question"],
                "evidence": row["evidence"],
            }
            for row in result.rows
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--strengths", type=float, nargs="+", default=[0.0, 1.5, 3.0])
    parser.add_argument("--out", type=Path, help="also write every line to this JSONL file")
    parser.add_argument(
        "--set", action="append", default=[], help="a generate param for every run, KEY=VALUE"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from goldenset.corpus.ingest import ingest
    from goldenset.corpus.queries import read_examples
    from goldenset.generation.params import GenerateParams
    from goldenset.generation.prompt import pick_examples
    from goldenset.generation.providers.registry import make_provider
    from goldenset.generation.runner import prepare

    generate = yaml.safe_load((ROOT / "params.yaml").read_text())["generate"]
    generate["example_queries"] = str(ROOT / generate["example_queries"])
    generate.update({k: yaml.safe_load(v) for k, v in (i.split("=", 1) for i in args.set)})
    found = ingest(ROOT / "data" / "docs", max_file_mb=20).documents
    documents = [(d.doc_id, d.text) for d in found]
    params = GenerateParams(**generate)
    aim_examples = read_examples(params.example_queries)
    setup = {
        "documents": documents,
        "titles": {d.doc_id: d.title or "" for d in found},
        "aim_examples": aim_examples,
        "shown": pick_examples([e.text for e in aim_examples], params.example_count, params.seed),
        "sources": prepare(documents, params).sources,
    }
    shown_texts = {example.text for example in aim_examples}
    reference = quantiles(reference_echoes(setup["sources"], shown_texts))
    print(json.dumps({"reference_echo": reference, "load": os.getloadavg()}), flush=True)
    provider = make_provider(params)
    provider.load()  # the clock measures questions, not the model load
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, strength in enumerate(args.strengths):
            cache = Path(tmp) / f"cache-{number}"
            line = run(strength, generate, args.questions, cache, provider, setup)
            shown = {k: v for k, v in line.items() if k != "queries"}
            print(json.dumps(shown), flush=True)
            lines.append(line)
    provider.close()
    if args.out:
        args.out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    print(json.dumps({"load_after": os.getloadavg()}), file=sys.stderr)


if __name__ == "__main__":
    main()
