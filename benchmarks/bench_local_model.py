"""Load time, memory and seconds per question of the local provider on the default model.

Usage: PYTHONPATH=src python benchmarks/bench_local_model.py [--scifact ../shared/datasets/scifact]
Prints one JSON object. Questions ask for JSON {"question", "evidence"} after three few-shot turns.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

from goldenset.generation.local import LocalProvider
from goldenset.params import GenerateParams

SYSTEM = (
    "You write search questions for testing a retrieval system. Given a passage, write one "
    "specific question that a user might ask and that the passage answers, without saying "
    '"the passage" or "this study". Reply with JSON only: {"question": "...", "evidence": "..."}, '
    "where evidence is the shortest sentence copied word for word from the passage that answers it."
)
FEW_SHOT = [
    (
        "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is 330 metres "
        "tall and was the tallest man-made structure until 1930.",
        {
            "question": "When was the Eiffel Tower completed?",
            "evidence": "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
        },
    ),
    (
        "Set retry_limit to 0 to disable retries. The default is 5 retries with exponential "
        "backoff starting at 200 ms.",
        {
            "question": "How do I turn off retries?",
            "evidence": "Set retry_limit to 0 to disable retries.",
        },
    ),
    (
        "Insulin is a hormone made by the beta cells of the pancreas. It lets cells take up "
        "glucose from the blood, and its absence causes type 1 diabetes.",
        {
            "question": "Which cells produce insulin?",
            "evidence": "Insulin is a hormone made by the beta cells of the pancreas.",
        },
    ),
]
SENTENCES = [
    "The Amazon river discharges about 209,000 cubic metres of water per second.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "Use the --dry-run flag to print the planned changes without applying them.",
]


def messages_for(passage: str) -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for example, answer in FEW_SHOT:
        turns.append({"role": "user", "content": f"Passage:\n{example}"})
        turns.append({"role": "assistant", "content": json.dumps(answer)})
    turns.append({"role": "user", "content": f"Passage:\n{passage}"})
    return turns


def abstracts(scifact: Path, count: int) -> list[str]:
    found = []
    with gzip.open(scifact / "corpus.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            text = json.loads(line)["text"]
            if 230 <= len(text.split()) <= 270:
                found.append(text)
            if len(found) == count:
                break
    return found


def memory_mb() -> dict[str, float]:
    status = Path("/proc/self/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if line.startswith(("VmRSS", "VmHWM")))
    return {key: int(value.split()[0]) / 1024 for key, value in fields.items()}


def timed_questions(provider: LocalProvider, passages: list[str]) -> list[dict]:
    rows = []
    for passage in passages:
        start = time.perf_counter()
        answer = provider.complete(SYSTEM, messages_for(passage), attempt=0)
        rows.append(
            {
                "seconds": round(time.perf_counter() - start, 2),
                "input_tokens": answer.input_tokens,
                "output_tokens": answer.output_tokens,
                "truncated": answer.truncated,
                "text": answer.text,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scifact", type=Path, default=Path("../shared/datasets/scifact"))
    parser.add_argument("--abstracts", type=int, default=3)
    args = parser.parse_args()

    provider = LocalProvider(GenerateParams())
    start = time.perf_counter()
    provider.load()
    load_seconds = time.perf_counter() - start
    after_load = memory_mb()

    start = time.perf_counter()
    warmup = provider.complete(SYSTEM, messages_for(SENTENCES[0]), attempt=0)
    first_call = time.perf_counter() - start  # includes evaluating the few-shot prefix once
    sentences = timed_questions(provider, SENTENCES)
    scifact = timed_questions(provider, abstracts(args.scifact, args.abstracts))
    report = {
        "load_seconds": round(load_seconds, 2),
        "memory_mb_after_load": after_load,
        "first_call_seconds_incl_prefix": round(first_call, 2),
        "first_prompt_tokens": warmup.input_tokens,
        "one_sentence": sentences,
        "scifact_abstract": scifact,
        "memory_mb_end": memory_mb(),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
