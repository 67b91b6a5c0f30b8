"""Planted duplicates do not move a single number: the stages as DVC runs them (real MiniLM), on
a corpus, then on the same corpus with copies planted in it.

- whole documents: an exact copy (case and spacing changed) and a second version of a page
  (one word changed) are dropped at ingest and named; a real query judged on the copy is
  judged on its kept twin. Every metric of every query set equals the corpus without them.
- one chunk: a paragraph of one document copied into another document that ranks first on
  ties. Returning the copy is a hit, so the chunk-level sets score as without the copy.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.stage_runs import run_stage
from tests.support.documents import make_documents

pytestmark = pytest.mark.slow

# made-up prose: five documents of three paragraphs, three sentences each
PROSE = dict(make_documents(5, sentences=9, seed=7))
TOPICS = dict(zip(["apples", "bread", "cars", "dogs", "energy"], PROSE.values(), strict=True))


def paragraphs(topic: str) -> list[str]:
    sentences = re.split(r"(?<=\.)\s+", TOPICS[topic])
    return [" ".join(sentences[i : i + 3]) for i in range(0, 9, 3)]


def document(topic: str) -> str:
    return "\n\n".join(paragraphs(topic)) + "\n"


def golden_set() -> list[dict]:
    """One question per paragraph of three documents, evidence = the paragraph's span."""
    rows = []
    for topic in ("apples", "bread", "energy"):
        text = document(topic)
        for number, part in enumerate(paragraphs(topic)):
            start = text.index(part)
            first_words = " ".join(part.split()[1:4])
            rows.append(
                {
                    "qid": f"gs-{topic}-{number}",
                    "question": f"What follows {first_words}?",
                    "doc_id": f"{topic}.md",
                    "evidence_start": start,
                    "evidence_end": start + len(part),
                }
            )
    return rows


def make_corpus(root: Path, copies: bool, shared_chunk: bool) -> Path:
    docs = root / "docs"
    (docs / "zz-archive").mkdir(parents=True)
    for topic in TOPICS:
        (docs / f"{topic}.md").write_text(document(topic), encoding="utf-8")
    notes = "Assorted notes from the team meeting about lunch plans and parking spaces.\n"
    if shared_chunk:  # a.md sorts first: on a tie its copy ranks above the original
        notes += "\n" + paragraphs("apples")[1] + "\n"
    (docs / "a-notes.md").write_text(notes, encoding="utf-8")
    judged_apples = "apples.md"
    if copies:
        (docs / "zz-archive" / "apples-copy.md").write_text(
            document("apples").upper().replace(". ", ".\n  "), encoding="utf-8"
        )
        (docs / "zz-archive" / "bread-v2.md").write_text(
            document("bread").replace(" ", " also ", 1), encoding="utf-8"
        )
        judged_apples = "zz-archive/apples-copy.md"
    queries = {"q1": paragraphs("apples")[2][:40], "q2": paragraphs("energy")[0][10:50]}
    (docs / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    (docs / "qrels.tsv").write_text(
        f"query-id\tcorpus-id\tscore\nq1\t{judged_apples}\t1\nq2\tenergy.md\t1\n"
    )
    (root / "data").mkdir()
    (root / "data" / "goldenset.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in golden_set())
    )
    (root / "params.yaml").write_text(
        "ingest:\n  path: docs\n"
        "chunk:\n  strategy: paragraphs\n  max_size: 400\n"
        f"embed:\n  cache_dir: {root.parent / 'embedding-cache'}\n"
        "score:\n  ks: [1, 3, 5]\n  headline: [recall@5, mrr]\n"
    )
    return root


def scores_of(project: Path) -> tuple[dict, str]:
    log = ""
    for stage in ("ingest", "chunk", "embed", "score"):
        process = run_stage(stage, project)
        assert process.returncode == 0, f"{stage}: {process.stderr}"
        log += process.stderr
    return json.loads((project / "metrics" / "scores.json").read_text()), log


def test_planted_copies_leave_every_number_unchanged(tmp_path):
    plain, _ = scores_of(make_corpus(tmp_path / "plain", copies=False, shared_chunk=False))
    assert plain["synthetic"]["dense"]["n_queries"] == 9 and plain["real"]["dense"]["n_queries"]

    planted, log = scores_of(make_corpus(tmp_path / "planted", copies=True, shared_chunk=False))
    assert "dropped zz-archive/apples-copy.md: duplicate of apples.md" in log
    assert "dropped zz-archive/bread-v2.md: near-duplicate (0.9" in log
    duplicates = json.loads((tmp_path / "planted/data/duplicates.json").read_text())
    assert [(d["doc_id"], d["kept"]) for d in duplicates] == [
        ("zz-archive/apples-copy.md", "apples.md"),
        ("zz-archive/bread-v2.md", "bread.md"),
    ]
    assert planted == plain

    shared, _ = scores_of(make_corpus(tmp_path / "shared", copies=False, shared_chunk=True))
    # a-notes.md now holds a copy of a relevant paragraph: at document level it is another
    # document, at chunk level (the golden set) the same item
    assert shared["synthetic"] == plain["synthetic"]
