"""Hold some of the sample's real claims out of the reference, as the writer's style examples.

The writer is shown `generate.example_count` of them and its queries aim at their echoes
(`generate.aim_echo`), so they cannot also be the reference the golden set is judged against:
the ingest stage drops every query of `generate.example_queries` from the real queries. Fifty
give an echo distribution with a tail (fewer than 10 are noise, `generation/aim.py`); the other
250 stay the reference. Each line names the document that answers it, so its echo is measured
in that document, as a golden query's is.

    python data/make_examples.py   # writes examples/queries.jsonl
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HELD_OUT = 50
SEED = 2026


def main(docs: Path = Path("data/docs"), target: Path = Path("examples/queries.jsonl")) -> None:
    queries = [json.loads(line) for line in (docs / "queries.jsonl").read_text().splitlines()]
    answered: dict[str, str] = {}
    for line in (docs / "qrels.tsv").read_text().splitlines()[1:]:
        qid, doc_id, _ = line.split("\t")
        answered.setdefault(qid, doc_id)
    chosen = sorted(random.Random(SEED).sample(queries, HELD_OUT), key=lambda q: int(q["_id"]))
    lines = [
        json.dumps({"_id": q["_id"], "text": q["text"], "doc_id": answered[q["_id"]]})
        for q in chosen
    ]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
