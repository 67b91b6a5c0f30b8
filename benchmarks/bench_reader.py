"""The judge's reader (judge/reader.py), the previous release's way against the shipped one, on
the same pairs in one process, taking turns pair by pair (never at once: two model jobs at once
run 5-10x slower).

Baseline: the previous release's reader, which had llama.cpp compute the logits of every token
it evaluated (`logits_all`). Shipped: logits only for the rows the reading uses (the question's
tokens and the last one). Pairs: the audit's seeded judge sample of the golden set
(audit.judge_sample, audit.seed of params.yaml). Printed per reader: pairs, tokens evaluated,
seconds a pair, tokens/s, the ratio to the baseline's seconds, and the largest difference of its
readings from the baseline's.

    PYTHONPATH=src python benchmarks/bench_reader.py
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from goldenset.audit.acceptance import judge_sample
from goldenset.core.params import AuditParams, read_params_file
from goldenset.generation.providers.local_model import default_model_path
from goldenset.judge import reader as shipped

ROOT = Path(__file__).resolve().parents[1]


class PreviousReader(shipped.Reader):
    """The shipped reader with the previous release's evaluation: every token's logits."""

    def __init__(self) -> None:
        import llama_cpp

        super().__init__()
        self._llm = llama_cpp.Llama(
            model_path=str(default_model_path()),
            n_ctx=shipped.CONTEXT_TOKENS,
            logits_all=True,
            verbose=False,
        )

    def _logits(self, tokens: list[int], rows: list[int], shared: int) -> np.ndarray:
        llm: Any = self._llm  # it kept every token shared with the call before
        kept = 0
        for old, new in zip(llm._input_ids[: llm.n_tokens], tokens[:-1], strict=False):
            if old != new:
                break
            kept += 1
        llm.n_tokens = kept
        llm.eval(tokens[kept:])
        return np.asarray(llm.scores[rows], dtype=np.float64)


def pairs(sample: int | None) -> list[tuple[str, str, str]]:
    golden = pd.read_json(ROOT / "data" / "goldenset.jsonl", lines=True)
    audit = AuditParams.model_validate((read_params_file(ROOT / "params.yaml") or {})["audit"])
    rows = golden.iloc[judge_sample(golden, audit)][: sample or None]
    forms = rows["form"].fillna("question") if "form" in rows else ["question"] * len(rows)
    return list(zip(rows["evidence"], rows["question"], forms, strict=True))


def timed(readers: dict[str, shipped.Reader], work: list[tuple[str, str, str]]) -> dict:
    """Each reader's readings of work[1:] and its seconds, the readers taking turns pair by pair
    so that the machine's drift falls on both."""
    for reader in readers.values():
        reader.read(*work[0])  # the instruction's keys and values, as in a run
    readings: dict[str, list] = {name: [] for name in readers}
    seconds = dict.fromkeys(readers, 0.0)
    for pair in work[1:]:
        for name, reader in readers.items():
            start = time.perf_counter()
            readings[name].append(reader.read(*pair))
            seconds[name] += time.perf_counter() - start
    return {name: (np.array(readings[name]), seconds[name]) for name in readers}


def evaluated_tokens(reader: shipped.Reader, work: list[tuple[str, str, str]]) -> int:
    """Tokens evaluated per pair: everything after the instruction, which is kept."""
    return sum(
        len(reader._tokens("Sentence: " + s)[: shipped.SENTENCE_TOKENS])
        + len(reader._tokens(shipped.QUERY_AFTER[f] + q.strip() + shipped.ASK, special=True))
        for s, q, f in work[1:]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=None, help="the first N of the sample")
    work = pairs(parser.parse_args().pairs)  # the first is read before the clock starts
    readers = {"previous (all logits)": PreviousReader(), "shipped": shipped.Reader()}
    tokens = evaluated_tokens(readers["shipped"], work)
    results = timed(readers, work)
    base_readings, base_seconds = results["previous (all logits)"]
    timed_pairs = len(work) - 1
    print(f"{timed_pairs} pairs, {tokens} tokens evaluated ({tokens / timed_pairs:.0f} a pair)")
    for name, (readings, seconds) in results.items():
        moved = np.abs(readings - base_readings).max()
        print(
            f"{name:22} {seconds / timed_pairs:.3f} s/pair  {tokens / seconds:6.1f} tokens/s  "
            f"{base_seconds / seconds:.2f}x  max |diff| {moved:.2e}"
        )


if __name__ == "__main__":
    main()
