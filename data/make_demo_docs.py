"""Cut the shipped sample to what `goldenset demo` writes from, shipped in the package so that
the command works from an installed wheel or git install: the sample's first 100 abstracts, the
real queries judged on them and those judgments, in the BEIR layout (lines kept as they are).

    python data/make_demo_docs.py   # writes src/goldenset/example/
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

DOCUMENTS = 100  # `goldenset demo --documents` at most


def cut(docs: Path, n_docs: int = DOCUMENTS) -> tuple[list[str], list[str], list[str]]:
    """The first `n_docs` lines of the sample's corpus, the lines of queries.jsonl judged on
    them, and qrels.tsv's header with the judgments on them."""
    with gzip.open(docs / "scifact-sample.jsonl.gz", "rt", encoding="utf-8") as sample:
        corpus = [line.rstrip("\n") for _, line in zip(range(n_docs), sample, strict=False)]
    ids = {json.loads(line)["_id"] for line in corpus}
    header, *rows = (docs / "qrels.tsv").read_text(encoding="utf-8").splitlines()
    judged = [row for row in rows if row.split("\t")[1] in ids]
    qids = {row.split("\t")[0] for row in judged}
    queries = [
        line
        for line in (docs / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line)["_id"] in qids
    ]
    return corpus, queries, [header, *judged]


def main(target: Path = Path("src/goldenset/example"), docs: Path = Path("data/docs")) -> None:
    corpus, queries, qrels = cut(docs)
    target.mkdir(parents=True, exist_ok=True)
    # mtime=0 keeps the gzip bytes identical on every rebuild
    with gzip.GzipFile(target / "corpus.jsonl.gz", "wb", mtime=0) as out:
        out.write("".join(line + "\n" for line in corpus).encode("utf-8"))
    (target / "queries.jsonl").write_text("\n".join(queries) + "\n", encoding="utf-8")
    (target / "qrels.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    print(f"{len(corpus)} abstracts, {len(queries)} queries, {len(qrels) - 1} qrels in {target}")


if __name__ == "__main__":
    main(*map(Path, sys.argv[1:2]))
