"""LLM answer cache at scale: the indexed segments against the first format (one gzip stream per
segment, every answer loaded into memory when the cache opens), in one process.

Writes `--answers` synthetic answers (~300 bytes each, question texts cut from the sample corpus)
as one segment in each format, then measures opening the cache (wall time and peak Python memory,
tracemalloc) and looking up `--lookups` keys; then `--runs` further runs of `--per-run` new answers
each (put, then pack, as the generate stage does) and the bytes of new files each run leaves for
DVC to push. The first format's code is read from the git history (FIRST_FORMAT_COMMIT).

    PYTHONPATH=src python benchmarks/answer_cache_bench.py [--answers 1000000]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
import types
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src")]

from goldenset.generation.cache import AnswerCache, key_prefix, segment_bytes  # noqa: E402
from goldenset.generation.interface import Completion  # noqa: E402

FIRST_FORMAT_COMMIT = "b930b28"  # the last commit whose cache.py wrote seg-*.jsonl.gz
SAMPLE = ROOT / "data" / "docs" / "scifact-sample.jsonl.gz"


def first_format() -> types.ModuleType:
    source = subprocess.run(
        ["git", "show", f"{FIRST_FORMAT_COMMIT}:src/goldenset/generation/cache.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("first_format_cache")
    exec(compile(source, "first_format_cache.py", "exec"), module.__dict__)  # noqa: S102
    return module


def question_texts() -> list[str]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as lines:
        text = " ".join(json.loads(line)["text"] for line in lines)
    words = text.split()
    return [" ".join(words[i : i + 16]) + "?" for i in range(0, len(words) - 16, 7)]


def answers(count: int, start: int, texts: list[str]) -> dict[str, dict]:
    records = {}
    for i in range(start, start + count):
        key = hashlib.sha256(f"answer {i}".encode()).hexdigest()
        records[key] = {
            "provider": "anthropic",
            "model": "claude-haiku-4-5",
            "text": texts[i % len(texts)],
            "input_tokens": 400 + i % 300,
            "output_tokens": 20 + i % 30,
            "truncated": False,
        }
    return records


def line(key: str, record: dict) -> bytes:
    return (json.dumps({"key": key, **record}, ensure_ascii=False, sort_keys=True) + "\n").encode()


def write_first_format(root: Path, records: dict[str, dict]) -> None:
    lines = b"".join(line(key, records[key]) for key in sorted(records))
    data = gzip.compress(lines, mtime=0)
    (root / f"seg-{hashlib.sha256(data).hexdigest()[:24]}.jsonl.gz").write_bytes(data)


def write_indexed(root: Path, records: dict[str, dict]) -> None:
    entries = sorted((key_prefix(key), key, line(key, r)) for key, r in records.items())
    data = segment_bytes(entries)
    (root / f"seg-{hashlib.sha256(data).hexdigest()[:24]}.pack").write_bytes(data)


def timed(action: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def peak_mb(action: Callable[[], object]) -> float:
    tracemalloc.start()
    kept = action()  # noqa: F841  (held while the peak is read)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def measure(cache_class: type, root: Path, keys: list[str], runs: int, per_run: int,
            start: int, texts: list[str]) -> dict[str, float]:  # fmt: skip
    figures: dict[str, float] = {}
    figures["disk_mb"] = sum(p.stat().st_size for p in root.iterdir()) / 1e6
    cache, figures["open_s"] = timed(lambda: cache_class(root))
    figures["open_peak_mb"] = peak_mb(lambda: cache_class(root))
    found, figures["lookup_s"] = timed(lambda: [cache.get(key) for key in keys])
    assert all(answer is not None for answer in found)
    pushes = []
    for run in range(runs):
        before = {p.name: p.stat().st_mtime_ns for p in root.iterdir()}
        new = answers(per_run, start + run * per_run, texts)
        for key, r in new.items():
            completion = Completion(r["text"], r["input_tokens"], r["output_tokens"], False)
            cache.put(key, completion, provider=r["provider"], model=r["model"])
        cache.pack()
        changed = [p for p in root.iterdir() if before.get(p.name) != p.stat().st_mtime_ns]
        pushes.append(sum(p.stat().st_size for p in changed if p.is_file()))
    figures["push_first_run_kb"] = pushes[0] / 1e3
    figures["push_mean_kb"] = sum(pushes) / len(pushes) / 1e3
    figures["push_max_kb"] = max(pushes) / 1e3
    figures["segments_after"] = len(list(root.glob("seg-*")))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--lookups", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=16)
    parser.add_argument("--per-run", type=int, default=1_000)
    args = parser.parse_args()
    texts = question_texts()
    records = answers(args.answers, 0, texts)
    mean_bytes = sum(len(line(k, r)) for k, r in list(records.items())[:10_000]) / 10_000
    print(f"{args.answers:,} answers of {mean_bytes:.0f} bytes each (JSON line)")
    keys = random.Random(0).sample(sorted(records), args.lookups)
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, write, cache_class in (
            ("first format", write_first_format, first_format().AnswerCache),
            ("indexed", write_indexed, AnswerCache),
        ):
            root = Path(scratch) / name.replace(" ", "_")
            root.mkdir()
            _, seconds = timed(lambda: write(root, records))  # noqa: B023
            print(f"{name}: segment written in {seconds:.1f} s", flush=True)
            results[name] = measure(
                cache_class, root, keys, args.runs, args.per_run, args.answers, texts
            )
            print(f"{name}: {json.dumps({k: round(v, 3) for k, v in results[name].items()})}")
    old, new = results["first format"], results["indexed"]
    print(f"\n{'':26}{'first format':>14}{'indexed':>12}{'ratio':>9}")
    for figure in old:
        ratio = old[figure] / new[figure] if new[figure] else float("inf")
        print(f"{figure:26}{old[figure]:>14,.2f}{new[figure]:>12,.2f}{ratio:>8.1f}x")


if __name__ == "__main__":
    main()
