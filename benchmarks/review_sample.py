"""A strict reviewer's sample of the golden set, and how well the automatic checks agree with it.

Draws `--size` random questions (seeded) from data/goldenset.jsonl and prints each with its
document's title and its evidence sentence, for a person to judge: is it answered by its
evidence, and is it specific enough to find its document? With `--labels FILE` (JSON: qid ->
{"answered": bool, "specific": bool}) it prints the share that pass both, and the agreement of
the automatic checks (the writer's rules, as the audit applies them) with those labels.

    python benchmarks/review_sample.py --size 60
    python benchmarks/review_sample.py --size 60 --labels benchmarks/review_labels.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import pandas as pd
import yaml

from goldenset.audit.checks import document_indexes
from goldenset.core.echo import (
    WindowFrequency,
    WindowIndex,
    answered_terms,
    distinctive_terms,
    unknown_names,
)
from goldenset.corpus.queries import read_goldenset
from goldenset.generation.passages import states_a_finding


def sample(rows: list[dict], size: int, seed: int) -> list[dict]:
    return random.Random(seed).sample(rows, min(size, len(rows)))


def automatic_verdict(
    row: dict, document: WindowIndex, rarity: WindowFrequency, max_share: float
) -> bool:
    """The writer's rules, as the audit applies them, plus its choice of evidence sentence."""
    question, evidence = row["question"], str(row.get("evidence", ""))
    answered = bool(answered_terms(question, evidence)) and not unknown_names(question, document)
    specific = bool(distinctive_terms(question, evidence, rarity, max_share))
    return answered and specific and states_a_finding(evidence)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--labels", type=Path)
    args = parser.parse_args()

    documents = pd.read_parquet("data/documents.parquet", columns=["doc_id", "title", "text"])
    titles = dict(zip(documents["doc_id"].astype(str), documents["title"], strict=True))
    indexes = document_indexes(documents)
    rarity = WindowFrequency(indexes.values())
    max_share = yaml.safe_load(Path("params.yaml").read_text())["generate"]["distinctive_share"]
    kept = sample(read_goldenset("data/goldenset.jsonl").to_dict("records"), args.size, args.seed)
    labels = json.loads(args.labels.read_text()) if args.labels else {}
    judged = []
    for row in kept:
        qid = str(row["qid"])
        auto = automatic_verdict(row, indexes[str(row["doc_id"])], rarity, max_share)
        print(f"{qid}  auto={'pass' if auto else 'fail'}")
        print(f"  Q: {row['question']}")
        print(f"  title: {titles.get(str(row['doc_id']), '')}")
        print(f"  evidence: {' '.join(str(row.get('evidence', '')).split())}\n")
        if qid in labels:
            person = labels[qid]["answered"] and labels[qid]["specific"]
            judged.append((auto, person))
    if judged:
        passed = sum(person for _, person in judged)
        agree = sum(auto == person for auto, person in judged)
        print(f"judged {len(judged)}: {passed} pass ({passed / len(judged):.0%}); the automatic")
        print(f"checks agree with the labels on {agree} ({agree / len(judged):.0%})")


if __name__ == "__main__":
    main()
