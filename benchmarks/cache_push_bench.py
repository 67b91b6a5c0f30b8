"""LLM answer cache on a DVC remote: one file per answer (the baseline) against packed segments.

Writes `--answers` answers through AnswerCache, tracks cache/llm with `dvc add`, and times
`dvc push` to a loopback S3 server (moto in server mode, reached by DVC's real S3 plugin) and
`dvc pull` into a fresh git clone, for both layouts, in one process. Needs the s3 and test extras.

    PYTHONPATH=src python benchmarks/cache_push_bench.py [--answers 20000]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from goldenset.generation.cache import AnswerCache  # noqa: E402
from goldenset.generation.interface import Completion  # noqa: E402
from tests.support.dvc_project import commit, run  # noqa: E402
from tests.support.s3_server import LoopbackS3  # noqa: E402


def fill(cache: AnswerCache, answers: int) -> None:
    for i in range(answers):
        key = hashlib.sha256(f"answer {i}".encode()).hexdigest()
        text = (
            f'{{"question": "What does study {i} report about the effect of treatment {i % 97} '
            f'on outcome {i % 13}?", "evidence": "Sentence {i} of the passage, copied as the '
            f'evidence that answers the question, about as long as a real one is."}}'
        )
        cache.put(key, Completion(text, 420, 60, truncated=False), provider="p", model="m")


def measure(s3: LoopbackS3, scratch: Path, layout: str, answers: int) -> dict[str, float]:
    project = scratch / layout / "project"
    project.mkdir(parents=True)
    run(["git", "init", "-q"], project)
    run(["git", "config", "user.email", "bench@example.invalid"], project)
    run(["git", "config", "user.name", "bench"], project)
    run(["dvc", "init", "-q"], project)
    run(["dvc", "config", "core.analytics", "false"], project)
    cache = AnswerCache(project / "cache" / "llm")
    fill(cache, answers)
    if layout == "packed":
        cache.pack()
    files = sum(1 for p in (project / "cache" / "llm").rglob("*") if p.is_file())
    started = time.perf_counter()
    run(["dvc", "add", "cache/llm"], project)
    add_s = time.perf_counter() - started
    s3.add_remote(project, "shared", layout, run)
    commit(project, layout)
    started = time.perf_counter()
    run(["dvc", "push"], project, s3.env)
    push_s = time.perf_counter() - started

    clone = scratch / layout / "clone"
    run(["git", "clone", "-q", str(project), str(clone)], scratch)
    started = time.perf_counter()
    run(["dvc", "pull"], clone, s3.env)
    pull_s = time.perf_counter() - started
    assert len(AnswerCache(clone / "cache" / "llm")) == answers
    return {"files": files, "objects": s3.object_count(f"{layout}/"), "add_s": add_s,
            "push_s": push_s, "pull_s": pull_s}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch, LoopbackS3(Path(scratch)) as s3:
        results = {}
        for layout in ("files", "packed"):
            figures = results[layout] = measure(s3, Path(scratch), layout, args.answers)
            print(  # before the (slow) clean-up of 20,000 files
                f"{layout:>6}: {figures['files']:>6} files, {figures['objects']:>6} objects, "
                f"dvc add {figures['add_s']:6.1f} s, push {figures['push_s']:6.1f} s, "
                f"pull {figures['pull_s']:6.1f} s",
                flush=True,
            )
        files, packed = results["files"], results["packed"]
        print(
            f"packed against one file per answer ({args.answers} answers): push "
            f"{files['push_s'] / packed['push_s']:.1f}x faster, pull "
            f"{files['pull_s'] / packed['pull_s']:.1f}x faster",
            flush=True,
        )


if __name__ == "__main__":
    main()
