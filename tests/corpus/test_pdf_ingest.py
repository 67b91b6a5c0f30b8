"""PDF and Word files through ingest: real files made by ReportLab and python-docx from known
text, read by PDFium; fidelity (every sentence found, on its page, no running header left), bad
files one line each, and the extraction cache."""

from __future__ import annotations

import gzip
import json
import unicodedata
from pathlib import Path

import pytest
from pypdf import PdfWriter

from goldenset.core.errors import GoldensetError
from goldenset.corpus.documents import SkipReason
from goldenset.corpus.extraction import EXTRACTION_VERSION
from goldenset.corpus.ingest import ingest
from goldenset.corpus.layout import Line, assemble, running_lines
from goldenset.corpus.places import Places, chunk_places, place_label, with_places
from tests.support.pdfs import merge_pdfs, write_docx, write_image_pdf, write_text_pdf

SCIFACT = Path(__file__).parents[3] / "shared" / "datasets" / "scifact" / "corpus.jsonl.gz"


def known_text(documents: int = 12) -> str:
    """Real abstracts when the shared collections are beside the checkout, else made-up text."""
    if SCIFACT.exists():
        with gzip.open(SCIFACT, "rt", encoding="utf-8") as file:
            rows = [json.loads(line) for line, _ in zip(file, range(documents), strict=False)]
        return "\n\n".join(row["text"] for row in rows)
    sentences = [
        f"Sentence number {i} describes the calibration of instrument {i * 7} in detail. "
        f"Its tolerance is {i}.{i % 10} millimetres, well within the specification."
        for i in range(200)
    ]
    return "\n\n".join(" ".join(sentences[i : i + 8]) for i in range(0, 200, 8))


def normalized(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def placed_share(document_text: str, places: Places, laid) -> float:
    """The share of the laid-out sentences found in the text (NFKC, whitespace collapsed) and
    starting on the page they were laid on."""
    flat, positions = [], []  # the collapsed text and each of its characters' raw offset
    for offset, char in enumerate(unicodedata.normalize("NFKC", document_text)):
        if char.isspace():
            if flat and flat[-1] != " ":
                flat.append(" ")
                positions.append(offset)
            continue
        flat.append(char)
        positions.append(offset)
    collapsed = "".join(flat)
    found = 0
    for sentence, page in laid.sentence_pages:
        at = collapsed.find(normalized(sentence))
        found += at >= 0 and places.page_at(positions[at]) == page
    return found / len(laid.sentence_pages)


@pytest.mark.parametrize("columns", [1, 2])
def test_every_sentence_is_found_on_its_page_and_no_running_line_remains(tmp_path, columns):
    laid = write_text_pdf(tmp_path / "manual.pdf", known_text(), columns=columns)
    result = ingest(tmp_path, 20)
    (document,) = result.documents
    assert laid.pages >= 3
    assert placed_share(document.text, document.places, laid) == 1.0
    assert "Acme" not in document.text and "Page " not in document.text
    assert [page for _, page in document.places.pages] == list(range(1, laid.pages + 1))
    assert document.title == "manual"  # not the writer's placeholder, "untitled"


def test_hyphenated_words_are_rejoined_and_a_table_kept(tmp_path):
    text = known_text(3)
    write_text_pdf(tmp_path / "t.pdf", text, table=[["Part", "Torque"], ["Bolt M8", "25 Nm"]])
    (document,) = ingest(tmp_path, 20).documents
    words = {w.strip(".,;:()") for w in text.split() if w.strip(".,;:()").isalpha()}
    assert all(word in document.text for word in words)
    assert "\ufffe" not in document.text and "Bolt M8 25 Nm" in document.text


def test_running_lines_are_masked_digits_at_the_edges_only():
    pages = [
        [Line("Report 2024", 800), Line(f"The {word} pump", 700), Line(str(n), 40)]
        for n, word in enumerate(["first", "second", "third", "fourth"], start=1)
    ]
    assert running_lines(pages) == [{0, 2}] * 4
    # a line that repeats in the middle of pages is body text: kept
    extracted = assemble([[Line("Intro", 800), *pages[0][1:]], *pages[1:]])
    assert extracted.text.splitlines()[0] == "Intro The first pump"


def test_a_sentence_across_a_page_break_is_one_sentence_on_its_first_page():
    extracted = assemble([[Line("The valve opens", 700)], [Line("at two bar.", 700)]])
    assert extracted.text == "The valve opens\nat two bar."
    places = Places(pages=extracted.pages)
    assert places.page_at(0) == 1 and places.pages_of(0, len(extracted.text)) == "1-2"


def test_word_headings_become_paths(tmp_path):
    write_docx(
        tmp_path / "guide.docx",
        [(1, "Setup", "Unpack the unit."), (2, "Cables", "Use the grey cable.\n\nTighten it.")],
    )
    (document,) = ingest(tmp_path, 20).documents
    assert document.title == "Setup"
    at = document.text.index("Tighten")
    assert document.places.heading_at(at) == "Setup > Cables"
    assert document.places.fields_at(at) == {"heading": "Setup > Cables"}
    assert place_label(document.places.fields_at(at)) == "§ Setup > Cables"


def bad_files(folder: Path) -> dict[str, str]:
    """One file of each bad kind, with the kind ingest must name."""
    write_image_pdf(folder / "scan.pdf", pages=3)
    write_text_pdf(folder / "locked.pdf", known_text(2), encrypt="secret")
    write_text_pdf(folder / "whole.pdf", known_text(2))
    complete = (folder / "whole.pdf").read_bytes()
    (folder / "whole.pdf").unlink()
    (folder / "truncated.pdf").write_bytes(complete[: len(complete) // 3])
    (folder / "empty.pdf").write_bytes(b"")
    PdfWriter().write(str(folder / "zero.pdf"))  # a valid PDF whose page tree is empty
    (folder / "renamed.docx").write_bytes(complete)
    return {
        "scan.pdf": SkipReason.SCANNED,
        "locked.pdf": SkipReason.ENCRYPTED,
        "truncated.pdf": SkipReason.CORRUPT,
        "empty.pdf": SkipReason.EMPTY,
        "zero.pdf": SkipReason.NO_PAGES,
        "renamed.docx": SkipReason.NOT_DOCX,
    }


def test_bad_files_get_one_line_each_and_the_rest_are_ingested(tmp_path):
    expected = bad_files(tmp_path)
    write_text_pdf(tmp_path / "good.pdf", known_text(2))
    result = ingest(tmp_path, 20)
    assert [d.doc_id for d in result.documents] == ["good.pdf"]
    assert {skip.source: skip.reason for skip in result.skipped} == expected
    for skip in result.skipped:
        assert "\n" not in skip.line() and skip.line().startswith(f"skipped {skip.source}: ")
    assert "ocrmypdf" in next(s.detail for s in result.skipped if s.source == "scan.pdf")
    assert "3 pages" in next(s.detail for s in result.skipped if s.source == "scan.pdf")
    summary = result.summary()
    assert "skipped 6" in summary and "1 encrypted" in summary and "1 no text layer" in summary


def test_a_folder_of_bad_files_only_says_no_usable_document(tmp_path):
    bad_files(tmp_path)
    from goldenset.core.errors import GoldensetError

    with pytest.raises(GoldensetError, match="no usable document"):
        ingest(tmp_path, 20)


def test_a_big_file_is_skipped_before_it_is_read(tmp_path):
    write_text_pdf(tmp_path / "big.pdf", known_text(4))
    write_text_pdf(tmp_path / "small.pdf", known_text(1))
    size = (tmp_path / "big.pdf").stat().st_size
    result = ingest(tmp_path, 20, max_pdf_mb=(size - 1) / 1024 / 1024)
    assert [s.reason for s in result.skipped] == [SkipReason.TOO_LARGE]
    assert "ingest.max_pdf_mb" in result.skipped[0].line()


def test_a_scanned_page_in_a_text_pdf_is_left_out_with_a_note(tmp_path):
    write_text_pdf(tmp_path / "a.pdf", known_text(2))
    write_image_pdf(tmp_path / "b.pdf", pages=1)
    merge_pdfs(tmp_path, ["a.pdf", "b.pdf"], "mixed.pdf")
    result = ingest(tmp_path, 20)
    (document,) = result.documents
    assert result.textless_pages == 1
    pages = len(document.places.pages) + 1
    assert (
        f"note: mixed.pdf: 1 of its {pages} pages has no text layer (p. {pages})" in result.notes[0]
    )
    assert "ocrmypdf" in result.notes[0]
    assert "; 1 page without text kept out" in result.summary()


def test_the_cache_pays_each_file_once_and_a_changed_file_again(tmp_path):
    folder, cache = tmp_path / "docs", tmp_path / "cache"
    folder.mkdir()
    write_text_pdf(folder / "a.pdf", known_text(2))
    write_image_pdf(folder / "scan.pdf")
    first = ingest(folder, 20, cache=cache)
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == 2 and all(f"v{EXTRACTION_VERSION}" in str(e) for e in entries)
    # a cached entry is what ingest reads: planting text in it shows it was not read again
    entry = next(e for e in entries if "skip" not in e.read_text())
    record = json.loads(entry.read_text())
    entry.write_text(json.dumps({**record, "text": "planted text from the cache"}))
    again = ingest(folder, 20, cache=cache)
    assert again.documents[0].text == "planted text from the cache"
    assert [s.reason for s in again.skipped] == [s.reason for s in first.skipped]
    # counted where they gave text: the scan is counted as skipped, not as extracted
    assert (first.files_extracted, first.files_cached) == (1, 0)
    assert (again.files_extracted, again.files_cached) == (0, 1)
    assert "PDF and Word files: 0 extracted, 1 from the cache" in again.summary()
    # a damaged entry is the caches' one line, saying to delete it; deleted, it is read again
    damages = {"{not json": "not a JSON object", "[]": "not a JSON object"}
    damages['{"text": 1}'] = "not an extracted text"
    for damage, why in damages.items():
        entry.write_text(damage)
        with pytest.raises(GoldensetError) as raised:
            ingest(folder, 20, cache=cache)
        assert str(raised.value) == (
            f"{entry} is a damaged cache ({why}): delete it, and the next run asks for the "
            "text of that file again"
        )
    entry.unlink()
    assert ingest(folder, 20, cache=cache).documents[0].text == first.documents[0].text
    # a changed file is a new hash, a new entry
    write_text_pdf(folder / "a.pdf", known_text(3))
    changed = ingest(folder, 20, cache=cache)
    assert len(sorted(cache.rglob("*.json"))) == 3
    assert (changed.files_extracted, changed.files_cached) == (1, 0)


def test_places_reach_rows_and_chunks():
    places = {"m.pdf": Places(pages=((0, 1), (100, 2), (250, 4)))}
    rows = [
        {"qid": "q1", "doc_id": "m.pdf", "evidence_start": 120},
        {"qid": "q2", "doc_id": "notes.md", "evidence_start": 5},
    ]
    assert with_places(rows, places) == [{**rows[0], "page": 2}, rows[1]]
    labels = chunk_places(places, ["m.pdf", "m.pdf", "notes.md"], [0, 90, 0], [50, 260, 9])
    assert labels == ["p. 1", "p. 1-4", ""]
    assert Places.from_json(places["m.pdf"].to_json()) == places["m.pdf"]
    assert place_label({"page": float("nan"), "heading": float("nan")}) == ""
    # a table where every question is about a PDF holds its pages as numpy integers
    import pandas as pd

    assert place_label(pd.DataFrame({"page": [3, 4]}).iloc[0]) == "p. 3"


def test_a_worst_miss_names_the_page_of_its_evidence():
    import numpy as np
    import pandas as pd
    from scipy.sparse import csr_array

    from goldenset.core.ranked import TopK
    from goldenset.evaluation.qrels import Qrels
    from goldenset.scoring.reports import worst_misses

    questions = pd.DataFrame(
        [
            {
                "qid": "q1",
                "question": "Torque?",
                "doc_id": "m.pdf",
                "evidence": "25 Nm",
                "page": 12,
            },
            {"qid": "q2", "question": "Cable?", "doc_id": "n.md", "evidence": "grey"},
        ]
    )
    judged = Qrels("synthetic", ["q1", "q2"], csr_array(np.eye(2)), ["m.pdf#0", "n.md#0"])
    ranked = {"bm25": TopK(np.array([[1, 0], [0, 1]]), np.ones((2, 2), dtype=np.float32))}
    report = worst_misses(questions, judged, ranked, ["25 Nm", "grey"], 5, 1, 80)
    assert "document `m.pdf`, p. 12" in report
    assert "document `n.md`\n" in report


def test_an_unmarked_line_end_hyphen_rejoins_the_word_unless_the_document_writes_it():
    page = [Line("a systema-", 700), Line("tic study of self-", 687), Line("test rigs", 674)]
    other = [Line("Each self-test rig is calibrated.", 700)]
    text = assemble([page, other]).text
    assert text.startswith("a systematic study of self-test rigs")
    assert assemble([page]).text == "a systematic study of selftest rigs"


def test_a_word_split_across_a_page_break_is_whole_on_its_first_page():
    extracted = assemble([[Line("the imm-", 700)], [Line("unoregulatory change", 700)]])
    assert extracted.text == "the immunoregulatory change"
    assert Places(pages=extracted.pages).page_at(extracted.text.index("immuno")) == 1


def test_a_hyphen_after_a_capital_or_before_and_is_no_split_word():
    # PDFium marks every line-end hyphen it joins; "SUD-" and "pre- and post-" are not split words
    marked = assemble([[Line("the SUD\ufffeand SUD+ groups, pre\ufffeand post-test", 700)]])
    assert marked.text == "the SUD- and SUD+ groups, pre- and post-test"
    unmarked = [Line("the SUD-", 700), Line("and SUD+ groups", 687)]
    assert assemble([unmarked]).text == "the SUD- and SUD+ groups"
    assert assemble([[Line("a ther\ufffeapy", 700)]]).text == "a therapy"


def test_a_line_repeated_only_at_another_edge_is_not_running():
    # a two-page document whose title's last line is also its last line
    first = [Line("Virus attachment", 800, size=12), Line("and uncoating.", 785, size=12)]
    first += [Line(f"Body line {n}.", 700 - 12 * n, size=9) for n in range(8)]
    first.append(Line("1", 30, size=9))
    last = [Line(f"Of the virus {n}", 800 - 12 * n, size=9) for n in range(3)]
    last += [Line("and uncoating.", 764, size=9), Line("2", 30, size=9)]
    extracted = assemble([first, last])
    assert extracted.text.endswith("Of the virus 2 and uncoating.")
    assert extracted.title == "Virus attachment and uncoating."


def test_a_first_page_without_a_larger_font_names_no_title():
    page = [Line(f"Body line {n}.", 700 - 12 * n, size=9) for n in range(8)]
    assert assemble([page]).title == ""
    assert assemble([[Line("Big", 800, size=20), Line("small", 700, size=9)]]).title == ""


def test_the_demo_as_pdfs_reads_back_as_its_abstracts_with_titles(tmp_path):
    from goldenset.demo import read_demo, write_demo
    from goldenset.demo.pdf import typeable

    lines = write_demo(tmp_path / "docs", 5, pdf=True)
    assert lines[0].startswith("goldenset demo: wrote 5 SciFact abstracts as PDFs (")
    result = ingest(tmp_path / "docs", 20, cache=tmp_path / "cache")
    docs = {doc.doc_id: doc for doc in result.documents}
    for abstract in read_demo(5)[0]:
        document = docs[f"{abstract['_id']}.pdf"]
        assert document.title == normalized(typeable(abstract["title"]))
        assert normalized(typeable(abstract["text"])) in normalized(document.text)
    assert typeable("β-cells ≤ 5 μm, CO₂") == "beta-cells <= 5 µm, CO2"


def test_a_character_no_standard_font_shows_is_written_as_a_question_mark():
    from goldenset.demo.pdf import typeable

    assert typeable("∮ f dz = 0, 5 → 6") == "? f dz = 0, 5 ? 6"
