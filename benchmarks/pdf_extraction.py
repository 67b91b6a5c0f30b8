"""Which library reads the PDFs: pages per second and text fidelity of each candidate, side by
side in one process, on PDFs made from known text (tests/support/pdfs.py: one and two columns, a
running header and a page-number footer, words hyphenated at line ends) and on a 500-page file.

Fidelity, per layout: the share of the text's sentences found in what the candidate gives (after
NFKC and collapsing whitespace, an exact substring), and whether the running header is left in.
The raw candidates give each page's text as the library returns it; `goldenset` is what ingest
keeps (PDFium's text through goldenset.corpus.layout). The ratio is pages/s against pypdf, the
pure-Python baseline. Candidates that are not installed are named with their install command.

    PYTHONPATH=src python benchmarks/pdf_extraction.py [--pages 500]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from goldenset.corpus.pdf import read_pdf  # noqa: E402
from tests.support.pdfs import HEADER_TEXT, write_text_pdf  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "datasets" / "scifact" / "corpus.jsonl.gz"
BASELINE = "pypdf"


def goldenset(path: Path) -> str:
    return read_pdf(path).text


def pypdfium2_raw(path: Path) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        return "\n".join(document[i].get_textpage().get_text_range() for i in range(len(document)))
    finally:
        document.close()


def pypdf(path: Path) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() or "" for page in PdfReader(str(path)).pages)


def pdfplumber(path: Path) -> str:
    import pdfplumber as plumber

    with plumber.open(str(path)) as pdf:
        return "\n".join(page.extract_text() or "" for page in pdf.pages)


def pdftext(path: Path) -> str:
    from pdftext.extraction import plain_text_output

    return plain_text_output(str(path), sort=False, hyphens=False)


CANDIDATES: dict[str, tuple[Callable[[Path], str], str]] = {
    "goldenset": (goldenset, "(PDFium + goldenset.corpus.layout; Apache-2.0 / BSD-3-Clause)"),
    "pypdfium2": (pypdfium2_raw, "pip install pypdfium2  (Apache-2.0 / BSD-3-Clause)"),
    "pypdf": (pypdf, "pip install pypdf  (BSD-3-Clause)"),
    "pdfplumber": (pdfplumber, "pip install pdfplumber  (MIT; pdfminer.six, MIT)"),
    "pdftext": (pdftext, "pip install pdftext  (Apache-2.0)"),
}


def known_text(abstracts: int) -> str:
    if not SCIFACT.exists():
        sys.exit(f"{SCIFACT} not found: the benchmark reads SciFact's abstracts as known text")
    with gzip.open(SCIFACT, "rt", encoding="utf-8") as file:
        rows = [json.loads(line) for line, _ in zip(file, range(abstracts), strict=False)]
    return "\n\n".join(row["text"] for row in rows)


def normalized(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def fidelity(extracted: str, laid) -> tuple[float, bool]:
    flat = normalized(extracted)
    found = sum(normalized(sentence) in flat for sentence, _ in laid.sentence_pages)
    return found / len(laid.sentence_pages), HEADER_TEXT in extracted


def pages_per_second(read: Callable[[Path], str], path: Path, pages: int) -> float:
    start = time.perf_counter()
    read(path)
    return pages / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=500, help="the long file's pages")
    args = parser.parse_args()
    available = {}
    for name, (read, install) in CANDIDATES.items():
        try:
            __import__("pypdfium2" if name == "goldenset" else name)
            available[name] = read
        except ImportError:
            print(f"{name}: not installed: {install}")
    with tempfile.TemporaryDirectory() as folder:
        text = known_text(30)
        layouts = {}
        for columns in (1, 2):
            path = Path(folder) / f"columns{columns}.pdf"
            layouts[f"{columns} column{'s' * (columns > 1)}"] = (
                path,
                write_text_pdf(path, text, columns=columns),
            )
        long_path = Path(folder) / "long.pdf"
        abstracts = 30
        long_laid = write_text_pdf(long_path, known_text(abstracts), columns=2)
        while long_laid.pages < args.pages:
            abstracts = int(abstracts * args.pages / long_laid.pages) + 1
            long_laid = write_text_pdf(long_path, known_text(abstracts), columns=2)
        rates = {}
        for name, read in available.items():
            row: dict[str, object] = {"candidate": name}
            for layout, (path, laid) in layouts.items():
                share, header = fidelity(read(path), laid)
                row[layout] = {"sentences_found": round(share, 4), "header_left": header}
            rates[name] = pages_per_second(read, long_path, long_laid.pages)
            row[f"pages_per_s ({long_laid.pages} pages)"] = round(rates[name], 1)
            print(json.dumps(row))
        if BASELINE in rates:
            ratios = {name: round(rate / rates[BASELINE], 2) for name, rate in rates.items()}
            print(json.dumps({f"pages_per_s / {BASELINE}": ratios}))


if __name__ == "__main__":
    main()
