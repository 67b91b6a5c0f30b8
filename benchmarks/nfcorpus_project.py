"""A second collection with real queries: NFCorpus, cut to a size the bundled writer and a
calibrate of two models run through in under an hour on 2 cores.

NFCorpus' test queries are NutritionFacts.org page titles, most of them a few keywords, with
graded relevance (2: the page links the article, 1: indirectly) that is broad (a median of 16
relevant documents a query): a proxy for a team's queries, not a faithful one. Its licence is
research use: nothing of it is committed, and this script rebuilds the project's inputs from the
copy beside the checkout.

How it is cut:
- documents: `--documents` of the corpus, drawn with a fixed seed (every relevant document of
  every query would be nearly the whole corpus);
- qrels: only those of the drawn documents, grades kept; a query left with no relevant
  document is dropped;
- examples: `--examples` of the remaining queries held out (fixed seed) as the writer's style
  examples, each naming a relevant document (a grade-2 one where it has one). The ingest stage
  drops them from the reference, as data/make_examples.py's are dropped on the sample.

    python benchmarks/nfcorpus_project.py ../shared/datasets/nfcorpus /tmp/nfcorpus
    # then, in a copy of this repository: ingest.path: /tmp/nfcorpus/docs,
    # generate.example_queries: examples/queries.jsonl (copy /tmp/nfcorpus/examples/ in),
    # generate.form: auto; dvc repro; goldenset calibrate --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from collections import defaultdict
from pathlib import Path

SEED = 2026


def read_qrels(path: Path) -> list[tuple[str, str, int]]:
    """(query id, document id, grade) of a BEIR qrels.tsv, header skipped."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            qid, doc_id, grade = line.split("\t")
            rows.append((qid, doc_id, int(grade)))
    return rows


def cut(
    docs: list[dict], queries: list[dict], qrels: list[tuple[str, str, int]], size: int, held: int
) -> tuple[list[dict], list[dict], list[tuple[str, str, int]], list[dict]]:
    """(documents, reference queries, the qrels of every query kept, example queries) of the cut
    collection: the examples' qrels stay, and ingest drops them with the examples."""
    rng = random.Random(SEED)
    ids = sorted(doc["_id"] for doc in docs)
    drawn = set(rng.sample(ids, min(size, len(ids))))
    kept_qrels = [row for row in qrels if row[1] in drawn]
    relevant: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for qid, doc_id, grade in kept_qrels:
        if grade > 0:
            relevant[qid].append((grade, doc_id))
    answered = [query for query in queries if relevant.get(query["_id"])]
    examples = sorted(rng.sample(answered, min(held, len(answered))), key=lambda q: q["_id"])
    example_ids = {query["_id"] for query in examples}
    example_lines = [
        {"_id": q["_id"], "text": q["text"], "doc_id": max(relevant[q["_id"]])[1]} for q in examples
    ]
    reference = [q for q in answered if q["_id"] not in example_ids]
    answered_ids = {query["_id"] for query in answered}
    chosen = [doc for doc in docs if doc["_id"] in drawn]
    return chosen, reference, [row for row in kept_qrels if row[0] in answered_ids], example_lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="the BEIR NFCorpus folder (test split)")
    parser.add_argument("target", type=Path, help="writes docs/ and examples/ here")
    parser.add_argument("--documents", type=int, default=1200)
    parser.add_argument("--examples", type=int, default=50)
    args = parser.parse_args()
    with gzip.open(args.source / "corpus.jsonl.gz", "rt", encoding="utf-8") as corpus:
        docs = [json.loads(line) for line in corpus if line.strip()]
    queries = [
        json.loads(line)
        for line in (args.source / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    qrels = read_qrels(args.source / "qrels.tsv")
    chosen, reference, kept_qrels, examples = cut(
        docs, queries, qrels, args.documents, args.examples
    )
    folder = args.target / "docs"
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(folder / "nfcorpus-sample.jsonl.gz", "wb", mtime=0) as out:
        for doc in chosen:
            line = {"_id": doc["_id"], "title": doc["title"], "text": doc["text"]}
            out.write((json.dumps(line) + "\n").encode())
    # every query with a relevant drawn document: ingest drops the examples from the reference
    lines = [{"_id": q["_id"], "text": q["text"]} for q in [*reference, *examples]]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in lines))
    rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{g}" for q, d, g in kept_qrels]
    (folder / "qrels.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (args.target / "examples").mkdir(parents=True, exist_ok=True)
    (args.target / "examples" / "queries.jsonl").write_text(
        "".join(json.dumps(example) + "\n" for example in examples), encoding="utf-8"
    )
    reference_ids = {query["_id"] for query in reference}
    per_query: dict[str, int] = defaultdict(int)
    for qid, _, grade in kept_qrels:
        per_query[qid] += qid in reference_ids and grade > 0
    per_query = {qid: count for qid, count in per_query.items() if qid in reference_ids}
    counts = sorted(per_query.values())
    print(
        f"{len(chosen)} of {len(docs)} documents; {len(reference)} reference queries of "
        f"{len(queries)} (those with a relevant drawn document, less {len(examples)} examples), "
        f"{sum(per_query.values())} relevant (query, document) pairs, a median of "
        f"{counts[len(counts) // 2]} relevant documents a query"
    )


if __name__ == "__main__":
    main()
