"""Check a store's span judgments against an independent computation, and print them for a
person to check by eye.

For golden-set questions drawn at random, the store's ranked passages (data/results.parquet, its
chunk ids; data/export/stores/<store>/corpus.jsonl, where score placed each) are judged again
here from the evidence span alone, with none of goldenset's scoring code: a passage is relevant
when it covers at least min_overlap of the evidence or lies inside it, else (no passage of the
document qualifies) when it covers the largest share. The first relevant rank must be the one
score wrote; and each placed passage must be its document's text at its offsets.

    python benchmarks/check_store_spans.py langchain --questions 20

Run it in a project where score ran with that store enabled and listing its chunks.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

import pandas as pd


def overlap(start: int, end: int, evidence: tuple[int, int]) -> float:
    low, high = evidence
    return max(0, min(end, high) - max(start, low)) / max(high - low, 1)


def relevant_ids(chunks: list[dict], evidence: tuple[int, int], min_overlap: float) -> set[str]:
    """The chunks of the evidence's document that answer it, by the rule stated above."""
    shares = {row["_id"]: overlap(row["start"], row["end"], evidence) for row in chunks}
    inside = {
        row["_id"]
        for row in chunks
        if evidence[0] <= row["start"] and row["end"] <= evidence[1] and row["end"] > row["start"]
    }
    qualified = {chunk for chunk, share in shares.items() if share >= min_overlap} | inside
    if qualified:
        return qualified
    best = max(shares.values(), default=0.0)
    return {chunk for chunk, share in shares.items() if share == best and best > 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store")
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--min-overlap", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    corpus = [
        json.loads(line)
        for line in Path(f"data/export/stores/{args.store}/corpus.jsonl").read_text().splitlines()
    ]
    by_doc: dict[str, list[dict]] = defaultdict(list)
    for row in corpus:
        row.update(row.pop("metadata"))
        by_doc[row["doc_id"]].append(row)
    documents = pd.read_parquet("data/documents.parquet", columns=["doc_id", "text"])
    text_of = dict(zip(documents["doc_id"], documents["text"], strict=True))
    misplaced = [
        row["_id"]
        for row in corpus
        if text_of[row["doc_id"]][row["start"] : row["end"]] != row["text"]
    ]
    golden = [json.loads(line) for line in Path("data/goldenset.jsonl").read_text().splitlines()]
    results = pd.read_parquet("data/results.parquet")
    results = results[(results["retriever"] == args.store) & (results["query_set"] == "synthetic")]
    ranked = results.set_index("qid")
    drawn = random.Random(args.seed).sample(golden, min(args.questions, len(golden)))
    agree = 0
    print(
        f"{len(corpus)} chunks of {args.store}; placed text differs from the document: "
        f"{len(misplaced)}\n"
    )
    for number, question in enumerate(drawn, start=1):
        evidence = (question["evidence_start"], question["evidence_end"])
        relevant = relevant_ids(by_doc[question["doc_id"]], evidence, args.min_overlap)
        top = list(ranked.loc[question["qid"], "top_ids"])
        ours = next((rank for rank, chunk in enumerate(top, start=1) if chunk in relevant), None)
        theirs = ranked.loc[question["qid"], "first_relevant_rank"]
        theirs = None if pd.isna(theirs) else int(theirs)
        same = ours == theirs or (ours is None and theirs is not None and theirs > len(top))
        agree += same
        print(f"{number}. {question['qid']} {question['question']!r}")
        print(f"   evidence {evidence} in {question['doc_id']}: {question['evidence'][:160]!r}")
        print(
            f"   relevant here: {sorted(relevant)}; first relevant rank here {ours}, "
            f"score's {theirs}" + ("" if same else "  <-- DIFFERS")
        )
        if ours is not None:
            chunk = next(row for row in by_doc[question["doc_id"]] if row["_id"] == top[ours - 1])
            share = overlap(chunk["start"], chunk["end"], evidence)
            print(
                f"   passage {chunk['_id']} [{chunk['start']}, {chunk['end']}) covers {share:.0%} "
                f"of the evidence: {chunk['text'][:160]!r}"
            )
        print()
    print(f"first relevant rank: {agree} of {len(drawn)} questions agree with score's")


if __name__ == "__main__":
    main()
