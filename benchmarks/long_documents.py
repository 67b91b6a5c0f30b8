"""A long-document test collection with real relevance, built from SciFact.

SciFact abstracts are a few hundred words each, so every chunking of them looks alike. This
concatenates them into a handful of long Markdown documents (`--chars` characters each, 100–700
thousand by default 400,000: a `# ` heading per document, a `## title` heading and the abstract's
text per abstract) and writes the real claims as labelled questions whose evidence is their
relevant abstracts' text, now a span inside a long document:

    OUT_DIR/scifact-long-01.md ... scifact-long-NN.md
    OUT_DIR/labelled.jsonl   {"_id", "text", "evidence": [{"doc_id", "text", "start", "end"}]}

doc_id is the file's path under OUT_DIR (as ingest names a file), start/end are character
offsets into the file's text, and `text` is exactly file_text[start:end]. A claim judged
relevant to several abstracts gets one evidence entry per abstract (possibly in several
documents). Every abstract judged in qrels.tsv is included, spread evenly over the documents;
distractor abstracts fill each document up to `--chars`. Abstracts and claims are picked and
ordered with `--seed`, so the same inputs give byte-identical files.

`--squad FILE` also copies a SQuAD v1.1 JSON file (e.g. the Super Bowl 50 article of the shared
datasets) into OUT_DIR, where ingest reads it as a document with span-labelled questions.
`--claims N` keeps N claims (seeded), for a small collection in tests.

    python benchmarks/long_documents.py OUT_DIR [--scifact ../shared/datasets/scifact]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

DEFAULT_SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"
SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Abstract:
    doc_id: str
    title: str
    text: str


def read_scifact(folder: Path) -> tuple[dict[str, Abstract], list[dict], dict[str, list[str]]]:
    """Abstracts by id (title and text on one line each), claims, and claim -> relevant ids."""
    with gzip.open(folder / "corpus.jsonl.gz", "rt", encoding="utf-8") as corpus:
        records = [json.loads(line) for line in corpus if line.strip()]
    abstracts = {
        str(r["_id"]): Abstract(str(r["_id"]), _one_line(r["title"]), _one_line(r["text"]))
        for r in records
    }
    claims = [json.loads(line) for line in (folder / "queries.jsonl").open(encoding="utf-8")]
    relevant: dict[str, list[str]] = {}
    for line in (folder / "qrels.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        if line.strip():
            qid, doc_id, score = line.split("\t")
            if float(score) > 0 and doc_id in abstracts:
                relevant.setdefault(qid, []).append(doc_id)
    return abstracts, [c for c in claims if str(c["_id"]) in relevant], relevant


def _one_line(text: str) -> str:
    """No newline inside an abstract: its Markdown paragraph stays one block."""
    return " ".join(str(text).split())


def assign(
    abstracts: dict[str, Abstract],
    judged: list[str],
    documents: int,
    chars: int,
    rng: random.Random,
) -> list[list[Abstract]]:
    """Abstracts per document: the judged ones spread evenly, distractors up to `chars`."""
    judged = sorted(set(judged))
    rng.shuffle(judged)
    distractors = sorted(set(abstracts) - set(judged))
    rng.shuffle(distractors)
    groups: list[list[Abstract]] = []
    for number in range(documents):
        group = [abstracts[doc_id] for doc_id in judged[number::documents]]
        while _length(group) < chars and distractors:
            group.append(abstracts[distractors.pop()])
        rng.shuffle(group)
        groups.append(group)
    return groups


def _length(group: list[Abstract]) -> int:
    return sum(len(a.title) + len(a.text) + 8 for a in group)


def render(heading: str, group: list[Abstract]) -> tuple[str, dict[str, tuple[int, int]]]:
    """One Markdown document and where each abstract's text lies in it (start, end)."""
    parts, spans, position = [], {}, 0

    def add(piece: str) -> None:
        nonlocal position
        parts.append(piece)
        position += len(piece)

    add(f"# {heading}{SEPARATOR}")
    for abstract in group:
        add(f"## {abstract.title or abstract.doc_id}{SEPARATOR}")
        spans[abstract.doc_id] = (position, position + len(abstract.text))
        add(abstract.text + SEPARATOR)
    return "".join(parts), spans


def build(
    scifact: Path,
    out: Path,
    documents: int = 6,
    chars: int = 400_000,
    claims: int | None = None,
    seed: int = 13,
    squad: Path | None = None,
) -> dict[str, int]:
    """Write the collection into out; returns counts (documents, abstracts, claims, evidence)."""
    abstracts, kept, relevant = read_scifact(scifact)
    rng = random.Random(seed)
    if claims is not None:
        kept = sorted(rng.sample(kept, min(claims, len(kept))), key=lambda c: str(c["_id"]))
    judged = [doc_id for claim in kept for doc_id in relevant[str(claim["_id"])]]
    out.mkdir(parents=True, exist_ok=True)
    where: dict[str, tuple[str, int, int]] = {}
    texts: dict[str, str] = {}
    groups = assign(abstracts, judged, documents, chars, rng)
    for number, group in enumerate(groups, start=1):
        name = f"scifact-long-{number:02d}.md"
        text, spans = render(f"SciFact abstracts, part {number} of {len(groups)}", group)
        with open(out / name, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
        texts[name] = text
        where.update({doc_id: (name, *span) for doc_id, span in spans.items()})
    lines, evidence = [], 0
    for claim in kept:
        entries = []
        for doc_id in relevant[str(claim["_id"])]:
            name, start, end = where[doc_id]
            entries.append(
                {"doc_id": name, "text": texts[name][start:end], "start": start, "end": end}
            )
        evidence += len(entries)
        record = {"_id": str(claim["_id"]), "text": claim["text"], "evidence": entries}
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    with open(out / "labelled.jsonl", "w", encoding="utf-8", newline="\n") as file:
        file.writelines(lines)
    if squad is not None:
        shutil.copyfile(squad, out / squad.name)
    return {
        "documents": len(groups),
        "abstracts": sum(len(group) for group in groups),
        "claims": len(kept),
        "evidence": evidence,
        "chars": sum(len(text) for text in texts.values()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write the documents and labelled.jsonl")
    parser.add_argument("--scifact", type=Path, default=DEFAULT_SCIFACT, help="BEIR SciFact")
    parser.add_argument("--documents", type=int, default=6, help="long documents to write")
    parser.add_argument("--chars", type=int, default=400_000, help="characters per document")
    parser.add_argument("--claims", type=int, help="keep this many claims (default: all)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--squad", type=Path, help="a SQuAD v1.1 JSON file to copy in too")
    args = parser.parse_args()
    counts = build(
        args.scifact, args.out, args.documents, args.chars, args.claims, args.seed, args.squad
    )
    print(", ".join(f"{value:,} {name}" for name, value in counts.items()))


if __name__ == "__main__":
    main()
