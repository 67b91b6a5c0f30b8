"""Best-of-n: how many candidates to sample per query, and which to keep, on the same passages.

One run of this checkout's writer (params.yaml `generate`, max_questions and candidates
overridden) on the shipped sample asks each passage's prompt `--candidates` times (the first
greedy, the rest sampled from the same evaluated prompt, so a candidate costs only its generated
tokens) and records every answer: its attempt, its time, whether it is valid, and its window echo.
From that one run it replays each n up to --candidates and each selection rule (the first valid
answer, the valid one nearest the query's echo aim, the least echoing valid one), and prints per
(n, rule): kept, requests, evaluated prompt tokens and seconds per request, kept per minute, and
the kept queries' echo quantiles beside the example queries' (the aim). The baseline it names is
n=1 with the first valid answer: today's writer, one answer per prompt.

    PYTHONPATH=src python benchmarks/bench_candidates.py [--questions 40] [--candidates 4] \
        [--out candidates.jsonl]

--out writes every valid candidate (document title, evidence, query, echo, aim) for labelling.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
RULES = ("first", "aim", "least_echo")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=None, help="answer cache (default: fresh)")
    parser.add_argument(
        "--set", action="append", default=[], help="a generate param, e.g. --set max_echo=0.9"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.chdir(ROOT)
    from goldenset.corpus.ingest import ingest
    from goldenset.corpus.queries import read_examples
    from goldenset.generation.params import GenerateParams
    from goldenset.generation.prompt import pick_examples
    from goldenset.generation.providers.registry import make_provider
    from goldenset.generation.runner import prepare

    generate = yaml.safe_load((ROOT / "params.yaml").read_text())["generate"]
    corpus = ingest(ROOT / "data" / "docs", max_file_mb=20).documents
    documents = [(d.doc_id, d.text) for d in corpus]
    titles = {d.doc_id: d.title or "" for d in corpus}
    with tempfile.TemporaryDirectory() as tmp:
        params = GenerateParams(
            **{
                **generate,
                **{k: yaml.safe_load(v) for k, v in (item.split("=", 1) for item in args.set)},
                "max_questions": args.questions,
                "candidates": args.candidates,
                "max_attempts": max(generate["max_attempts"], args.candidates),
                "cache_dir": str(args.cache or Path(tmp) / "cache"),
                "request_timeout": 3600,  # a loaded machine must not cut answers short
            }
        )
        aim_examples = read_examples(params.example_queries)
        shown = pick_examples([e.text for e in aim_examples], params.example_count, params.seed)
        setup = prepare(documents, params, titles)
        provider = make_provider(params)
        provider.load()  # the clock measures queries, not the model load
        session = setup.session(provider, None, shown, aim_examples)
        timed: dict[tuple[str, int], dict] = {}

        def ask(key: str, messages: list[dict[str, str]], attempt: int, steer=None):
            evaluated = getattr(provider, "evaluated_tokens", 0)
            started = time.perf_counter()
            completion = session.ask_now(key, messages, attempt, steer)
            timed[(key, attempt)] = {
                "seconds": time.perf_counter() - started,
                "evaluated": getattr(provider, "evaluated_tokens", 0) - evaluated,
                "output": completion.output_tokens if completion else 0,
            }
            return completion

        records = []
        for passage in setup.passages:
            for index, target in enumerate(passage.targets[: passage.n_questions]):
                before = len(timed)
                outcome = session.ask_question(passage, index, [], ask)
                spent = list(timed.values())[before:]
                records.append(
                    {
                        "doc_id": passage.doc_id,
                        "title": titles.get(passage.doc_id, ""),
                        "evidence": passage.text[target[0] : target[1]],
                        "aim": session.aim(passage, index),
                        "candidates": outcome.candidates,
                        "invalid": [code for code, _ in outcome.reasons],
                        "rejected": list(
                            zip(outcome.answers, [r for _, r in outcome.reasons], strict=False)
                        ),
                        "spent": spent,
                    }
                )
        provider.close()
    invalid = Counter(code for record in records for code in record["invalid"])
    print(f"invalid answers: {dict(invalid.most_common())}")
    examples = _example_echoes(session, aim_examples)
    report(records, args.candidates, examples, session.form.name)
    if args.out:
        with args.out.open("w", encoding="utf-8") as out:
            for number, record in enumerate(records):
                for query, share, attempt in record["candidates"]:
                    row = {
                        "item": number,
                        "query": query,
                        "echo": round(share, 3),
                        "attempt": attempt,
                    }
                    row |= {k: record[k] for k in ("doc_id", "title", "evidence", "aim")}
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
        with args.out.with_suffix(".rejected.jsonl").open("w", encoding="utf-8") as out:
            for number, record in enumerate(records):
                for answer, reason in record["rejected"]:
                    row = {"item": number, "answer": answer, "reason": reason}
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")


def _example_echoes(session, examples) -> np.ndarray:
    from goldenset.generation.aim import example_echoes

    return example_echoes(examples, session.sources)


def report(records: list[dict], most: int, examples: np.ndarray, form: str) -> None:
    quantiles = (0.1, 0.25, 0.5)
    print(f"form: {form}; example echoes p10/p25/p50: {np.quantile(examples, quantiles).round(3)}")
    for n in range(1, most + 1):
        for rule in RULES:
            kept, echoes, seconds, requests, evaluated = 0, [], 0.0, 0, 0
            for record in records:
                # an n-run stops after n answers once one is valid; without one in those, it goes
                # on as this run did (its corrections are approximated by this run's answers)
                early = [c for c in record["candidates"] if c.attempt < n]
                spent = record["spent"][:n] if early else record["spent"]
                seconds += sum(s["seconds"] for s in spent)
                requests += len(spent)
                evaluated += sum(s["evaluated"] for s in spent)
                within = early or record["candidates"][:1]
                if within:
                    kept += 1
                    echoes.append(_pick(within, record["aim"], rule).echo)
            print(
                json.dumps(
                    {
                        "n": n,
                        "rule": rule,
                        "asked": len(records),
                        "kept": kept,
                        "requests": requests,
                        "evaluated_tokens_per_request": round(evaluated / max(requests, 1), 1),
                        "seconds_per_request": round(seconds / max(requests, 1), 2),
                        "kept_per_min": round(60 * kept / max(seconds, 1e-9), 2),
                        "echo_p10_p25_p50": np.quantile(echoes, quantiles).round(3).tolist()
                        if echoes
                        else None,
                    }
                )
            )


def _pick(candidates, aim, rule):
    from goldenset.generation.session import pick

    if rule == "first" or (rule == "aim" and aim is None):
        return candidates[0]
    return pick(candidates, 0.0 if rule == "least_echo" else aim)


if __name__ == "__main__":
    main()
