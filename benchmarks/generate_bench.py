"""generate: our loop against the article's sequential loop, in one process.

Both ask a loopback server that speaks the Anthropic Messages API, through the real `anthropic`
SDK, about the same passages; every answer takes `--latency` seconds (300 ms by default), as a
hosted model would. Target: at concurrency 16, at least 15x faster than the sequential loop,
with zero duplicate requests; a second run of ours makes zero requests (everything is cached).

    PYTHONPATH=src python benchmarks/generate_bench.py [--passages 500] [--latency 0.3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from goldenset.generation.params import GenerateParams  # noqa: E402
from goldenset.generation.passages import passages_for  # noqa: E402
from goldenset.generation.providers.anthropic import AnthropicProvider  # noqa: E402
from goldenset.generation.runner import run_generation  # noqa: E402
from goldenset.llm_stand_in import LoopbackLLM  # noqa: E402
from tests.support.documents import make_documents  # noqa: E402

KEY = "bench-key"
TARGET_SPEEDUP = 15.0
ARTICLE_PROMPT = "Write one question that this passage answers.\n<passage>\n{passage}\n</passage>"


def article_loop(base_url: str, passages: list[str]) -> list[str]:
    """The loop from the article: one request after another, no cache, no validation."""
    import anthropic

    client = anthropic.Anthropic(api_key=KEY, base_url=base_url)
    questions = []
    for passage in passages:
        response = client.messages.create(
            model="claude-haiku-4-5",
            max_tokens=400,
            messages=[{"role": "user", "content": ARTICLE_PROMPT.format(passage=passage)}],
        )
        questions.append(response.content[0].text)  # the question alone, as ours asks
    return questions


def duplicates(server: LoopbackLLM) -> int:
    return sum(count - 1 for count in server.by_prompt().values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    documents = make_documents(args.passages, sentences=6)
    with tempfile.TemporaryDirectory() as cache_dir:
        params = GenerateParams(
            provider="anthropic",
            max_questions=args.passages,
            concurrency=args.concurrency,
            max_usd=None,
            cache_dir=cache_dir,
        )
        chosen = passages_for(documents, params)
        assert len(chosen) == args.passages, f"only {len(chosen)} passages"

        with LoopbackLLM(latency=args.latency, api_key=KEY) as server:
            started = time.perf_counter()
            article_loop(server.url, [p.text for p in chosen])
            sequential_s = time.perf_counter() - started
            sequential_requests = server.requests

        with LoopbackLLM(latency=args.latency, api_key=KEY) as server:
            provider = AnthropicProvider(params, api_key=KEY, base_url=server.url)
            started = time.perf_counter()
            result = run_generation(documents, params, provider=provider, progress=False)
            ours_s = time.perf_counter() - started
            ours_requests, ours_duplicates = server.requests, duplicates(server)

            started = time.perf_counter()
            run_generation(documents, params, provider=provider, progress=False)
            rerun_s = time.perf_counter() - started
            rerun_requests = server.requests - ours_requests

    speedup = sequential_s / ours_s
    passed = speedup >= TARGET_SPEEDUP and ours_duplicates == 0 and rerun_requests == 0
    report = {
        "passages": args.passages,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "sequential_s": round(sequential_s, 2),
        "sequential_requests": sequential_requests,
        "ours_s": round(ours_s, 2),
        "ours_requests": ours_requests,
        "ours_duplicate_requests": ours_duplicates,
        "questions_written": len(result.rows),
        "speedup": round(speedup, 2),
        "rerun_s": round(rerun_s, 2),
        "rerun_requests": rerun_requests,
        "target": f">= {TARGET_SPEEDUP:g}x, 0 duplicates, 0 requests on rerun",
        "passed": passed,
    }
    print(json.dumps(report, indent=2))
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
