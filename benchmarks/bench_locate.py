"""How long placing a store's passages in their documents takes (goldenset.retrieval.locate), the
work a foreign chunking adds to scoring, against the plain `str.find` that only places exact text.

The passages are those a splitter at 1,000/200 characters cuts from the SciFact corpus (5,183
abstracts), three ways: as the store returns them with offsets, stripped without offsets, and
with their whitespace rejoined (one space between words, as a sentence splitter rejoins
sentences), which only the tolerant match places.

PYTHONPATH=src python benchmarks/bench_locate.py [../shared/datasets/scifact/corpus.jsonl.gz]
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

from goldenset.retrieval.locate import Passage, place_passages

DEFAULT = Path(__file__).resolve().parents[2] / "shared/datasets/scifact/corpus.jsonl.gz"
SIZE, OVERLAP = 1000, 200


def documents(corpus: Path) -> dict[str, str]:
    with gzip.open(corpus, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    return {str(row["_id"]): row["text"] for row in rows if row.get("text")}


def windows(text: str) -> list[tuple[int, int]]:
    cuts, at = [], 0
    while at < len(text):
        cuts.append((at, min(at + SIZE, len(text))))
        at += SIZE - OVERLAP
    return cuts


def timed(label: str, action) -> float:
    started = time.perf_counter()
    value = action()
    seconds = time.perf_counter() - started
    print(f"{label:<44} {seconds:7.2f} s", end="")
    return seconds, value


def main(corpus: Path) -> None:
    texts = documents(corpus)
    cut = [(doc, start, end) for doc, text in texts.items() for start, end in windows(text)]
    print(f"{len(texts):,} documents, {len(cut):,} passages of {SIZE}/{OVERLAP} characters")
    ways = {
        "with offsets": [Passage(d, texts[d][s:e], s, e) for d, s, e in cut],
        "stripped, no offsets": [Passage(d, texts[d][s:e].strip()) for d, s, e in cut],
        "whitespace rejoined": [Passage(d, " ".join(texts[d][s:e].split())) for d, s, e in cut],
    }
    for name, passages in ways.items():
        seconds, placement = timed(f"locate, {name}", lambda p=passages: place_passages(texts, p))
        print(f"  {len(passages) / seconds:10,.0f} passages/s  {placement.lines()[0]}")
    passages = ways["stripped, no offsets"]
    baseline, found = timed(
        "baseline: str.find, stripped, no offsets",
        lambda: sum(texts[p.doc_id].find(p.text) >= 0 for p in passages),
    )
    print(f"  {len(passages) / baseline:10,.0f} passages/s  found {found:,}")
    ours, _ = timed("locate, stripped, no offsets (again)", lambda: place_passages(texts, passages))
    print(f"  ratio against str.find: {ours / baseline:.2f}x the time")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
