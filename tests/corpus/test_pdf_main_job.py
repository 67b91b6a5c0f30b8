"""The main job on PDFs: the demo's 100 abstracts (the shipped sample's first) written as PDFs (as
`goldenset demo docs --pdf` writes them) and as Markdown files, the real queries' judgments
mapped onto the files' ids,
each run through the real `dvc repro` with the same question writer (the loopback
stand-in, answering through the real OpenAI SDK). Every question's evidence is a sentence of its
abstract, on the page it names, and every score of the PDF run lies in the Markdown run's
interval."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pypdfium2 as pdfium
import pytest

from goldenset.demo import DEMO_DOCUMENTS, read_demo, write_documents
from goldenset.demo.pdf import typeable
from goldenset.llm_stand_in import LoopbackLLM
from tests.support.dvc_project import PROJECT_FILES, copy_project, edit_params, run

pytestmark = pytest.mark.slow


def the_demo() -> tuple[list[dict], list[str], list[list[str]]]:
    """The demo's documents, its real queries and their judgments: a hundred abstracts are as
    many PDFs as the sample's 800 to a reader of pages, at an eighth of the time."""
    return read_demo(DEMO_DOCUMENTS)


def collapsed(text: str) -> str:
    """The text's words, one space apart, and without a hyphen before a space: "lysine e- amino"
    in an abstract may end a line at "e-", and the reader then rejoins a split word ("eamino")."""
    return " ".join(text.split()).replace("- ", "")


def main_job(folder: Path, pdf: bool, base_url: str) -> Path:
    project = copy_project(folder, PROJECT_FILES)
    write_documents(project / "data/docs", *the_demo(), pdf=pdf)
    edit_params(
        project,
        ingest={"path": "data/docs"},
        generate={
            "provider": "openai",
            "model": "loopback-model",
            "form": "question",  # set outright: the test is of PDFs, and its bounds of questions
            "openai": {"base_url": base_url},
        },
        audit={"judge_sample": 0},
    )
    run(["dvc", "repro"], project, {"PYTHONPATH": str(project / "src")})
    return project


def pages_text(path: Path) -> list[str]:
    """Each page's text as PDFium gives it, read apart from goldenset's reader."""
    document = pdfium.PdfDocument(str(path))
    try:
        return [collapsed(page.get_textpage().get_text_range()) for page in document]
    finally:
        document.close()


def starts_on(page: str, evidence: str) -> bool:
    """Whether the evidence starts on the page: its first three words are on it, or the page ends
    with its first words (before the page's number), the rest running on to the next."""
    words = evidence.split()
    if " ".join(words[:3]) in page:
        return True
    body = re.sub(r"\s*\d+$", "", page)
    return any(body.endswith(" ".join(words[:n])) for n in (1, 2))


def test_the_sample_as_pdfs_gives_evidence_from_its_abstracts_and_the_markdown_runs_scores(
    tmp_path,
):
    with LoopbackLLM(api_key=None) as server:
        markdown = main_job(tmp_path / "markdown", False, server.openai_url)
        pdfs = main_job(tmp_path / "pdfs", True, server.openai_url)

    docs, _, _ = the_demo()
    # the abstract's text as the PDF spells it (the title, which is no sentence, apart)
    abstracts = {f"{d['_id']}.pdf": collapsed(typeable(d["text"])) for d in docs}
    rows = [json.loads(line) for line in (pdfs / "data/goldenset.jsonl").read_text().splitlines()]
    assert len(rows) >= 60
    for row in rows:
        evidence = collapsed(row["evidence"])
        assert evidence in abstracts[row["doc_id"]], row
        # a sentence: it ends as one, and what precedes it in the abstract ends one (or is none)
        before = abstracts[row["doc_id"]].partition(evidence)[0]
        assert re.search(r"[.!?)\"]$", evidence) and (not before or before[-2] in '.!?)"'), row
        on_page = pages_text(pdfs / "data/docs" / row["doc_id"])[row["page"] - 1]
        assert starts_on(on_page, evidence), row

    # the real queries are the same queries on the same texts: in the Markdown run's interval.
    # The golden sets are two samples (sentences are drawn by hashes of the document's id, and
    # "x.md" is not "x.pdf"): their difference has sqrt(2) times the spread of one, so a PDF
    # score lies within sqrt(2) times the Markdown interval's half-width of its score.
    intervals = json.loads((markdown / "metrics/intervals.json").read_text())
    expected = json.loads((markdown / "metrics/scores.json").read_text())
    scores = json.loads((pdfs / "metrics/scores.json").read_text())
    compared = 0
    for query_set, retrievers in intervals.items():
        widen = math.sqrt(2) if query_set == "synthetic" else 1.0
        for retriever, measures in retrievers.items():
            for measure, bounds in measures.items():
                centre = expected[query_set][retriever][measure]
                low = centre - widen * (centre - bounds["low"]) - 1e-9
                high = centre + widen * (bounds["high"] - centre) + 1e-9
                value = scores[query_set][retriever][measure]
                assert low <= value <= high, (query_set, retriever, measure, value, low, high)
                compared += 1
    assert compared >= 20
