"""Rebuild the shipped sample from the SciFact test collection beside the checkout.

Every abstract judged relevant to a test claim, plus distractors drawn with a fixed seed,
so the sample's real queries keep all their relevant documents. The claims and judgments go
beside the abstracts (BEIR layout), where the ingest stage finds them.

    python data/make_sample.py ../shared/datasets/scifact
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

SAMPLE_SIZE = 800
SEED = 13


def main(source: Path, target: Path = Path("data")) -> None:
    qrels_lines = (source / "qrels.tsv").read_text(encoding="utf-8").splitlines()
    judged = {line.split("\t")[1] for line in qrels_lines[1:] if line.strip()}
    with gzip.open(source / "corpus.jsonl.gz", "rt", encoding="utf-8") as corpus:
        docs = [json.loads(line) for line in corpus if line.strip()]
    distractors = sorted(doc["_id"] for doc in docs if doc["_id"] not in judged)
    chosen = judged | set(random.Random(SEED).sample(distractors, SAMPLE_SIZE - len(judged)))

    docs_dir = target / "docs"
    sample = docs_dir / "scifact-sample.jsonl.gz"
    # mtime=0 keeps the gzip bytes identical on every rebuild
    with gzip.GzipFile(sample, "wb", mtime=0) as out:
        for doc in docs:
            if doc["_id"] in chosen:
                line = {"_id": doc["_id"], "title": doc["title"], "text": doc["text"]}
                out.write((json.dumps(line) + "\n").encode())

    with (
        open(source / "queries.jsonl", encoding="utf-8") as queries,
        open(docs_dir / "queries.jsonl", "w", encoding="utf-8") as out,
    ):
        for line in queries:
            query = json.loads(line)
            # the BEIR metadata names the evidence documents: a retriever must see the text only
            out.write(json.dumps({"_id": query["_id"], "text": query["text"]}) + "\n")
    (docs_dir / "qrels.tsv").write_text("\n".join(qrels_lines) + "\n", encoding="utf-8")
    print(f"{len(chosen)} abstracts ({len(judged)} judged relevant), {len(qrels_lines) - 1} qrels")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
