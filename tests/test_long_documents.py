"""benchmarks/long_documents.py: SciFact abstracts as spans of long documents, claims as
labelled questions whose evidence offsets point at their relevant abstracts."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from goldenset.corpus.ingest import ingest
from tests.conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "long_documents.py"


def tiny_scifact(folder: Path) -> dict[str, list[str]]:
    """12 abstracts (one with a line break in its text), 4 claims judged on 5 of them."""
    folder.mkdir()
    abstracts = [
        {
            "_id": str(100 + n),
            "title": f"Study {n} of cells",
            "text": f"Abstract {n} says that protein P{n} binds receptor R{n}.\nIt was measured "
            f"{n + 2} times in mice and the effect was {'large' if n % 2 else 'small'}.",
        }
        for n in range(12)
    ]
    with gzip.open(folder / "corpus.jsonl.gz", "wt", encoding="utf-8") as corpus:
        corpus.writelines(json.dumps(a) + "\n" for a in abstracts)
    relevant = {"1": ["103"], "2": ["105", "110"], "3": ["101"], "4": ["107"], "5": []}
    claims = [{"_id": qid, "text": f"Claim {qid} about binding."} for qid in relevant]
    (folder / "queries.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims))
    rows = [f"{qid}\t{doc_id}\t1" for qid, ids in relevant.items() for doc_id in ids]
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(rows) + "\n")
    return relevant


def build(scifact: Path, out: Path, *args: str) -> None:
    process = subprocess.run(
        [sys.executable, str(SCRIPT), str(out), "--scifact", str(scifact), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert process.returncode == 0, process.stderr


def check_evidence(out: Path) -> list[dict]:
    """Every evidence span is its text in the document as ingest reads it; the labelled rows."""
    documents = ingest(out, 20, exclude=["labelled.jsonl", "*.json"]).documents
    text_of = {document.doc_id: document.text for document in documents}
    labelled = [json.loads(line) for line in (out / "labelled.jsonl").read_text().splitlines()]
    for question in labelled:
        for evidence in question["evidence"]:
            text = text_of[evidence["doc_id"]]
            assert text[evidence["start"] : evidence["end"]] == evidence["text"]
            # the whole abstract: a heading line before it, a blank line after it
            assert text[: evidence["start"]].endswith("\n\n")
            assert text[evidence["end"] :].startswith("\n\n")
    return labelled


def test_evidence_offsets_point_at_the_relevant_abstracts(tmp_path):
    relevant = tiny_scifact(tmp_path / "scifact")
    out = tmp_path / "long"
    build(tmp_path / "scifact", out, "--documents", "2", "--chars", "600")
    labelled = check_evidence(out)
    # the claims with judgments, each with one evidence entry per relevant abstract
    assert {q["_id"]: len(q["evidence"]) for q in labelled} == {"1": 1, "2": 2, "3": 1, "4": 1}
    with gzip.open(tmp_path / "scifact/corpus.jsonl.gz", "rt") as lines:
        corpus = {a["_id"]: a for a in map(json.loads, lines)}
    for question in labelled:
        found = [" ".join(corpus[i]["text"].split()) for i in relevant[question["_id"]]]
        assert [e["text"] for e in question["evidence"]] == found
    # 2 documents of about 600 characters or more, each abstract in exactly one of them
    files = sorted(p.name for p in out.glob("*.md"))
    assert files == ["scifact-long-01.md", "scifact-long-02.md"]
    joined = "".join((out / name).read_text() for name in files)
    for abstract in corpus.values():
        assert joined.count(" ".join(abstract["text"].split())) <= 1
    assert all(len((out / name).read_text()) >= 600 for name in files)
    # seeded: the same files byte for byte; another seed orders them otherwise
    again = tmp_path / "again"
    build(tmp_path / "scifact", again, "--documents", "2", "--chars", "600")
    for name in [*files, "labelled.jsonl"]:
        assert (out / name).read_bytes() == (again / name).read_bytes()
    other = tmp_path / "other"
    build(tmp_path / "scifact", other, "--documents", "2", "--chars", "600", "--seed", "1")
    assert (other / files[0]).read_bytes() != (out / files[0]).read_bytes()


def test_on_scifact_a_small_collection(scifact_dir, tmp_path):
    out = tmp_path / "long"
    build(scifact_dir, out, "--documents", "2", "--chars", "100000", "--claims", "20")
    labelled = check_evidence(out)
    assert len(labelled) == 20
    sizes = [len(path.read_text()) for path in out.glob("*.md")]
    assert len(sizes) == 2 and all(100_000 <= size < 110_000 for size in sizes)


@pytest.mark.parametrize("chars", [100_000, 700_000])
def test_sizes_the_docstring_names_are_reachable(chars, scifact_dir, tmp_path):
    build(scifact_dir, tmp_path, "--documents", "1", "--chars", str(chars), "--claims", "5")
    (size,) = [len(path.read_text()) for path in tmp_path.glob("*.md")]
    assert chars <= size < chars + 5_000
