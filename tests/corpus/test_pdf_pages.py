"""What ingest keeps of a PDF's pages and of a Word file's title, on files made by real writers
(ReportLab, python-docx) and read by PDFium: a damaged page left out with one line, running
headers of a chapter, lone numbers that are not page numbers, a header shared by a folder's
files, Word's placeholder titles, and a folder of bad files only."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from docx import Document as WordDocument
from reportlab.lib.pagesizes import A5
from reportlab.pdfgen import canvas

from goldenset.corpus.documents import SkipReason
from goldenset.corpus.extraction import EXTRACTION_VERSION, FileText, file_sha256
from goldenset.corpus.ingest import ingest
from goldenset.corpus.layout import Line, assemble, running_lines
from goldenset.corpus.places import Places
from tests.stage_runs import run_stage
from tests.support.pdfs import merge_pdfs, write_image_pdf

LEADING = 14


def write_pages(path: Path, pages: list[list[str]], feet: list[str] | None = None) -> None:
    """A PDF whose pages hold these lines from the top, and each its foot line at the bottom."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf = canvas.Canvas(str(path), pagesize=A5, invariant=1)
    width, height = A5
    for number, lines in enumerate(pages):
        pdf.setFont("Helvetica", 10)
        for row, line in enumerate(lines):
            pdf.drawString(50, height - 50 - row * LEADING, line)
        if feet and feet[number]:
            pdf.drawCentredString(width / 2, 30, feet[number])
        pdf.showPage()
    pdf.save()


def spelled(number: int) -> str:
    """A number in letters ("bcd" for 123): lines that differ with their digits masked."""
    return "".join("abcdefghij"[int(digit)] for digit in str(number))


def body(page: int, lines: int = 4) -> list[str]:
    return [
        f"Line {spelled(page * 10 + row)} of the manual says what to do." for row in range(lines)
    ]


def damage_page(path: Path, page: int) -> None:
    """Make PDFium unable to load one page: its object no longer a dictionary (same length, so
    the cross-reference table still finds every other object)."""
    raw = path.read_bytes()
    kids = re.search(rb"/Kids \[([^\]]*)\]", raw).group(1).split(b" R")
    number = kids[page - 1].split()[0]
    start = raw.index(b"\n" + number + b" 0 obj\n<<") + 1
    at = raw.index(b"<<", start)
    path.write_bytes(raw[:at] + b"[ " + raw[at + 2 :])


# --- 1. a damaged page ---------------------------------------------------------------------


def test_a_damaged_page_is_one_line_and_the_other_pages_are_read(tmp_path):
    write_pages(tmp_path / "manual.pdf", [body(1), body(2), body(3)], ["1", "2", "3"])
    damage_page(tmp_path / "manual.pdf", 2)
    result = ingest(tmp_path, 20)
    (document,) = result.documents
    assert body(1)[0] in document.text and body(3)[-1] in document.text
    assert body(2)[0] not in document.text
    assert [page for _, page in document.places.pages] == [1, 3]
    assert result.lines() == [
        "warning: manual.pdf: PDFium cannot load p. 2 of its 3 pages (damaged), left out; "
        "the other pages are read"
    ]
    assert result.textless_pages == 0  # not a scan: OCR would not bring it back


def test_a_pdf_whose_every_page_is_damaged_is_skipped_as_corrupt(tmp_path):
    write_pages(tmp_path / "broken.pdf", [body(1)])
    damage_page(tmp_path / "broken.pdf", 1)
    write_pages(tmp_path / "fine.pdf", [body(2)])
    (skip,) = ingest(tmp_path, 20).skipped
    assert skip.reason == SkipReason.CORRUPT
    assert skip.line() == (
        "skipped broken.pdf: PDFium cannot load any of its 1 page (damaged): is the file complete?"
    )


# --- 2. running headers of a run of pages ----------------------------------------------------


def test_a_chapter_header_in_a_long_manual_is_running(tmp_path):
    # 40 pages, 4 chapters: each chapter's header is on a quarter of the pages, under a third
    chapters = ["Safety", "Installation", "Operation", "Maintenance"]
    pages = [
        [f"Chapter {page // 10 + 1}: {chapters[page // 10]}", *body(page)] for page in range(40)
    ]
    write_pages(tmp_path / "manual.pdf", pages, [str(page) for page in range(1, 41)])
    (document,) = ingest(tmp_path, 20).documents
    assert not any(chapter in document.text for chapter in chapters)
    assert all(line in document.text for page in range(40) for line in body(page))
    assert [page for _, page in document.places.pages] == list(range(1, 41))


def test_a_line_on_two_of_three_consecutive_pages_is_running_and_far_apart_is_not():
    pages = [
        [Line(text, 700 - LEADING * row) for row, text in enumerate(body(page))]
        for page in range(12)
    ]
    pages[3].insert(0, Line("Wiring diagrams", 800))
    pages[5].insert(0, Line("Wiring diagrams", 800))  # pages 4 and 6: most of the run 4-6
    pages[0].insert(0, Line("Revision notes", 800))
    pages[9].insert(0, Line("Revision notes", 800))  # pages 1 and 10: 2 of 12, far apart
    running = running_lines(pages)
    assert running[3] == running[5] == {0}
    assert running[0] == running[9] == set()


# --- 3. lone numbers -------------------------------------------------------------------------


def test_a_one_page_invoice_keeps_its_total(tmp_path):
    write_pages(tmp_path / "invoice.pdf", [["ACME invoice", "Six widgets at 7 EUR", "Total", "42"]])
    (document,) = ingest(tmp_path, 20).documents
    assert document.text.endswith("Total 42")


def test_a_lone_number_goes_only_where_numbers_step_by_one_across_pages():
    def page(lines: list[str], foot: str) -> list[Line]:
        return [*(Line(t, 700 - LEADING * r) for r, t in enumerate(lines)), Line(foot, 40)]

    # a book's pages 7-9, numbered at the foot: page numbers
    numbered = assemble([page(body(n), str(n)) for n in (7, 8, 9)])
    assert not re.search(r"\b[789]\b", numbered.text)
    # each page's last line a subtotal: numbers, but they do not step by one
    totals = assemble([page(body(n), total) for n, total in enumerate(["42", "17", "42"])])
    assert re.findall(r"\b\d+\b", totals.text) == ["42", "17", "42"]
    assert (
        assemble([page(body(1), "Page 3 of 4"), page(body(2), "Page 4 of 4")]).text.count("Page")
        == 0
    )


# --- 4. a header most files of a folder open with ---------------------------------------------


def guidance_folder(folder: Path) -> None:
    """GOV.UK guidance as PDFs: each page opens with the guide's header, two guides of one page."""
    folder.mkdir(parents=True)
    guides = {"Child benefit": 2, "Tax credits": 1, "Pension credit": 1, "Carers allowance": 3}
    for number, (title, count) in enumerate(guides.items()):
        header = f"GOV.UK guidance \u2014 {title}"
        pages = [[header, *body(number * 10 + page)] for page in range(count)]
        write_pages(folder / f"{title.lower().replace(' ', '-')}.pdf", pages)


def test_a_header_most_files_of_a_folder_open_with_goes_from_its_one_page_files(tmp_path):
    docs, cache = tmp_path / "docs", tmp_path / "cache"
    guidance_folder(docs / "guidance")
    # another folder: its one file opens with the same header, but no other file does
    write_pages(docs / "letters" / "renewals.pdf", [["GOV.UK guidance \u2014 Renewals", *body(99)]])
    # a folder whose files open with their title alone: the title is the text's own
    (docs / "notes").mkdir()
    for name in ("boilers", "radiators", "valves"):
        write_pages(docs / "notes" / f"{name}.pdf", [[name.title(), *body(len(name))]])
    first = ingest(docs, 20, cache=cache)
    texts = {document.doc_id: document for document in first.documents}
    for name in ("child-benefit", "tax-credits", "pension-credit", "carers-allowance"):
        document = texts[f"guidance/{name}.pdf"]
        assert "GOV.UK" not in document.text and document.text.startswith("Line ")
        assert document.places.pages[0] == (0, 1)
    assert texts["letters/renewals.pdf"].text.startswith("GOV.UK guidance \u2014 Renewals Line")
    assert texts["notes/valves.pdf"].text.startswith("Valves Line")
    # the cache keeps each file's own text; the folder's rule runs on top, on every run
    entry = next(cache.rglob(f"{file_sha256(docs / 'guidance' / 'tax-credits.pdf')}.json"))
    assert json.loads(entry.read_text())["text"].startswith("GOV.UK guidance")
    again = ingest(docs, 20, cache=cache)
    assert again.files_cached == len(first.documents) and again.documents == first.documents


def test_an_entry_of_an_older_extraction_version_is_not_read(tmp_path):
    docs, cache = tmp_path / "docs", tmp_path / "cache"
    guidance_folder(docs)
    digest = file_sha256(docs / "tax-credits.pdf")
    # an entry as version 2 wrote it, before a file's opening line was kept beside its text
    assert EXTRACTION_VERSION > 2
    old = cache / "v2" / digest[:2] / f"{digest}.json"
    old.parent.mkdir(parents=True)
    record = {"title": "", "text": "planted", "places": {}, "pages": 1, "textless": []}
    old.write_text(json.dumps(record))
    result = ingest(docs, 20, cache=cache)
    assert (result.files_extracted, result.files_cached) == (4, 0)
    assert "planted" not in {document.text for document in result.documents}


def test_a_page_that_held_only_the_opening_line_goes_from_the_places():
    opening = "GOV.UK guidance \u2014 Tax credits"
    text = FileText(
        "", f"{opening}\nTax credits help.", Places(pages=((0, 1), (len(opening) + 1, 2))), 2
    )
    kept = replace(text, opening=opening).without_opening()
    assert kept.text == "Tax credits help." and kept.places.pages == ((0, 2),)
    assert text.without_opening() == text  # a file whose opening line is not known


# --- 5. Word's placeholder titles ------------------------------------------------------------


@pytest.mark.parametrize(
    ("own", "title"),
    [
        ("Microsoft Word - draft7.doc", "Setup"),
        ("Document1", "Setup"),
        ("  ", "Setup"),
        ("Untitled", "Setup"),
        ("Field guide to the pump", "Field guide to the pump"),
    ],
)
def test_a_word_file_whose_title_is_a_placeholder_is_titled_by_its_first_heading(
    tmp_path, own, title
):
    word = WordDocument()
    word.add_paragraph("Revision 3, March")
    word.add_heading("Setup", level=1)
    word.add_paragraph("Unpack the unit.")
    word.core_properties.title = own
    word.save(str(tmp_path / "guide-v3.docx"))
    (document,) = ingest(tmp_path, 20).documents
    assert document.title == title


# --- 6, 7. a folder of bad files only; counts that agree in number ---------------------------


def test_a_folder_of_bad_files_only_prints_each_files_line_before_stopping(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    write_image_pdf(docs / "scan.pdf", pages=1)
    write_pages(docs / "whole.pdf", [body(1), body(2)])
    (docs / "truncated.pdf").write_bytes((docs / "whole.pdf").read_bytes()[:300])
    (docs / "renamed.docx").write_bytes((docs / "whole.pdf").read_bytes())
    (docs / "whole.pdf").unlink()
    locked = canvas.Canvas(str(docs / "locked.pdf"), encrypt="secret", invariant=1)
    locked.drawString(50, 500, "a locked line")
    locked.save()
    (tmp_path / "params.yaml").write_text("ingest:\n  path: docs\n", encoding="utf-8")
    stage = run_stage("ingest", tmp_path)
    assert stage.returncode == 1 and "Traceback" not in stage.stderr
    *lines, error = stage.stderr.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "skipped locked.pdf",
        "skipped renamed.docx",
        "skipped scan.pdf",
        "skipped truncated.pdf",
    ]
    assert "no text layer on its 1 page (a scan?)" in lines[2]
    assert error.startswith("error: ingest.path: no usable document in docs")
    assert "0 documents read, 0 chars; skipped 4 (" in error and "extracted" not in error


def test_counts_of_one_agree_in_number(tmp_path):
    write_pages(tmp_path / "a.pdf", [body(1), body(2)])
    write_image_pdf(tmp_path / "b.pdf", pages=1)
    (tmp_path / "notes.xyz").write_text("not a document")
    merge_pdfs(tmp_path, ["a.pdf", "b.pdf"], "mixed.pdf")
    result = ingest(tmp_path, 20)
    assert result.lines()[0].startswith(
        "note: mixed.pdf: 1 of its 3 pages has no text layer (p. 3), left out;"
    )
    summary = result.summary()
    assert summary.startswith("1 document read, ")
    assert "PDF and Word files: 1 extracted, 0 from the cache" in summary
    assert "; 1 page without text kept out; ignored: 1 file with other extensions" in summary
