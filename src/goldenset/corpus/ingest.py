"""Read a folder of documents or a BEIR corpus into one row per document.

Order of the rows (so the output is byte-identical on every run): sources are visited in the
order of their path relative to `ingest.path`'s folder (plain string order, forward slashes),
and a BEIR corpus contributes its documents in line order. For a folder of files that is
simply doc_id order.

Text is kept as written, except that line endings become "\\n" and HTML is reduced to its text.
PDF and Word files give their text through goldenset.corpus.extraction (cached by content hash),
with the page or heading path of each part kept beside it (goldenset.corpus.places).
A SQuAD JSON file contributes one document per article (goldenset.corpus.labelled) and its
questions.
Hidden files and folders (".git", ".DS_Store"), paths matching `ingest.exclude`, and the
questions at the top of the folder (BEIR `queries.jsonl`, `qrels.tsv`, `qrels/`, and
`labelled.jsonl`) are not documents; files with other extensions, and `.json` files not in the
SQuAD layout, are counted as ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from fnmatch import fnmatchcase
from pathlib import Path

from tqdm import tqdm

from goldenset.core.errors import GoldensetError
from goldenset.corpus.beir import read_corpus
from goldenset.corpus.documents import (
    Document,
    IngestResult,
    Skip,
    SkipReason,
    Unreadable,
    over_limit,
)
from goldenset.corpus.extraction import (
    PDF_SUFFIXES,
    WORD_SUFFIXES,
    FileText,
    cached_text,
    drop_shared_openings,
    extract,
    file_sha256,
)
from goldenset.corpus.html import html_title_and_text
from goldenset.corpus.labelled import read_squad_file
from goldenset.corpus.pdf import page_count
from goldenset.corpus.queries import is_query_file
from goldenset.corpus.titles import is_placeholder, is_title, markdown_title, rst_title

DOCUMENT_SUFFIXES = (".md", ".txt", ".rst", ".html", ".htm")
EXTRACTED_SUFFIXES = PDF_SUFFIXES + WORD_SUFFIXES
CORPUS_SUFFIXES = (".jsonl", ".jsonl.gz")
SQUAD_SUFFIX = ".json"
SUPPORTED = (
    ".md, .txt, .rst, .html, .pdf, .docx files, BEIR corpus .jsonl/.jsonl.gz or SQuAD .json files"
)
BINARY_PROBE_BYTES = 8192
PROGRESS_MIN_FILES = 200
PROGRESS_MIN_PAGES = 100

log = logging.getLogger("goldenset")


def ingest(
    path: str | Path,
    max_file_mb: float,
    progress: bool = False,
    exclude: Iterable[str] = (),
    *,
    max_pdf_mb: float = 200.0,
    cache: Path | None = None,
) -> IngestResult:
    """Read every supported document under `path` (a folder, a BEIR corpus or one document file).

    `exclude`: glob patterns (fnmatch, on the path relative to the folder) of files to leave out.
    PDF and Word files up to `max_pdf_mb` are read page by page; `cache` keeps their text.

    Raises GoldensetError when the path is missing, when two documents share a doc_id, or when
    nothing usable was found.
    """
    path = Path(path)
    if not path.exists():
        raise GoldensetError(
            f"ingest.path: {path} does not exist (expected a folder of {SUPPORTED})"
        )
    if path.is_dir():
        patterns = list(exclude)
        root, files = (
            path,
            [
                file
                for file in _files_under(path)
                if not is_query_file(rel := file.relative_to(path).as_posix())
                and not any(fnmatchcase(rel, pattern) for pattern in patterns)
            ],
        )
    elif _kind(path) is None:
        raise GoldensetError(
            f"ingest.path: {path} is not a supported format (expected {SUPPORTED})"
        )
    else:
        root, files = path.parent, [path]

    result = IngestResult()
    max_bytes = int(max_file_mb * 1024 * 1024)
    wanted = [f for f in files if _kind(f) is not None]
    result.ignored = len(files) - len(wanted)
    extracted = _extract_all(
        [f for f in wanted if _kind(f) == "extracted"], root, max_pdf_mb, cache, progress, result
    )
    bar = tqdm(
        wanted, unit="file", desc="ingest", disable=not progress or len(wanted) < PROGRESS_MIN_FILES
    )
    for file in bar:
        source = file.relative_to(root).as_posix()
        if file in extracted:
            _add_extracted(source, extracted[file], result)
        elif _kind(file) == "corpus":
            read_corpus(file, source, max_bytes, result)
        elif _kind(file) == "squad":
            _read_squad(file, source, max_bytes, result)
        else:
            _read_document_file(file, source, max_bytes, result)

    _check_unique(result.documents)
    if not result.documents:
        # the error ends the stage before it prints them: each file's line says what to do
        for line in result.lines():
            log.info(line)
        raise GoldensetError(
            f"ingest.path: no usable document in {path} (supported: {SUPPORTED}); "
            + result.summary()
        )
    return result


def _files_under(folder: Path) -> list[Path]:
    """Every file below the folder in path order; hidden files and folders (".git") left out."""
    files = [
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    ]
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def _kind(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(CORPUS_SUFFIXES):
        return "corpus"
    if name.endswith(DOCUMENT_SUFFIXES):
        return "document"
    if name.endswith(SQUAD_SUFFIX):
        return "squad"
    if name.endswith(EXTRACTED_SUFFIXES):
        return "extracted"
    return None


def _check_unique(documents: list[Document]) -> None:
    first_source: dict[str, str] = {}
    for doc in documents:
        if doc.doc_id in first_source:
            raise GoldensetError(
                f"ingest.path: duplicate doc_id {doc.doc_id!r} in {first_source[doc.doc_id]} "
                f"and {doc.source}; every document needs its own id"
            )
        first_source[doc.doc_id] = doc.source


def _read_document_file(file: Path, source: str, max_bytes: int, result: IngestResult) -> None:
    size = file.stat().st_size
    if size > max_bytes:
        skip = Skip(
            source, SkipReason.TOO_LARGE, f"too large: {over_limit(size, max_bytes)}", source
        )
        result.skipped.append(skip)
        return
    raw = file.read_bytes()
    if not raw:
        result.skipped.append(Skip(source, SkipReason.EMPTY, "empty file", source))
        return
    text = _decode(raw, source, result)
    if text is None:
        return
    suffix = file.suffix.lower()
    if suffix in (".html", ".htm"):
        title, text = html_title_and_text(text)
    elif suffix == ".md":
        title = markdown_title(text)
    elif suffix == ".rst":
        title = rst_title(text)
    else:
        title = None
    if not text.strip():
        result.skipped.append(Skip(source, SkipReason.NO_TEXT, "no text in it", source))
        return
    title = next((t for t in (title, file.stem) if t and is_title(t)), "")
    result.documents.append(Document(source, source, title, text))


def _extract_all(
    files: list[Path],
    root: Path,
    max_pdf_mb: float,
    cache: Path | None,
    progress: bool,
    result: IngestResult,
) -> dict[Path, FileText | Skip]:
    """Each PDF and Word file's text, or why it gave none; the files not in the cache read with
    one progress bar counting their pages (`result` counts both, when they gave text). A header
    most PDFs of a folder open with goes from all of them (drop_shared_openings)."""
    max_bytes = int(max_pdf_mb * 1024 * 1024)
    extracted: dict[Path, FileText | Skip] = {}
    digests: dict[Path, str] = {}
    for file in files:
        source = file.relative_to(root).as_posix()
        size = file.stat().st_size
        if size > max_bytes:
            detail = f"{size:,} bytes > ingest.max_pdf_mb ({max_bytes:,} bytes)"
            extracted[file] = Skip(source, SkipReason.TOO_LARGE, f"too large: {detail}", source)
        elif size == 0:
            extracted[file] = Skip(source, SkipReason.EMPTY, "empty file", source)
        else:
            digests[file] = file_sha256(file)
    before = {file: cached_text(cache, digest) for file, digest in digests.items()}
    pages = sum(page_count(f) for f, got in before.items() if got is None and _is_pdf(f))
    quiet = not progress or pages < PROGRESS_MIN_PAGES
    with tqdm(total=pages, unit="page", desc="ingest: PDF pages", disable=quiet) as bar:
        for file, digest in digests.items():
            got = before[file] or extract(file, digest, cache, lambda: bar.update(1))
            source = file.relative_to(root).as_posix()
            extracted[file] = (
                Skip(source, got.reason, got.detail, source) if isinstance(got, Unreadable) else got
            )
    gave_text = [file for file in digests if isinstance(extracted[file], FileText)]
    result.files_cached = sum(before[file] is not None for file in gave_text)
    result.files_extracted = len(gave_text) - result.files_cached
    return drop_shared_openings(extracted)


def _is_pdf(path: Path) -> bool:
    return path.suffix.lower() in PDF_SUFFIXES


def _add_extracted(source: str, extracted: FileText | Skip, result: IngestResult) -> None:
    if isinstance(extracted, Skip):
        result.skipped.append(extracted)
        return
    result.notes.extend(extracted.notes(source))
    result.textless_pages += len(extracted.textless)
    # a writer's placeholder title: the file's name says more
    own = "" if is_placeholder(extracted.title) else extracted.title
    title = next((t for t in (own, Path(source).stem) if t and is_title(t)), "")
    result.documents.append(Document(source, source, title, extracted.text, extracted.places))


def _read_squad(file: Path, source: str, max_bytes: int, result: IngestResult) -> None:
    """Each article of a SQuAD file as a document; its questions kept for the labelled set."""
    size = file.stat().st_size
    if size > max_bytes:
        result.skipped.append(
            Skip(source, SkipReason.TOO_LARGE, f"too large: {over_limit(size, max_bytes)}")
        )
        return
    articles = read_squad_file(file, source)
    if articles is None:  # some other JSON (package.json, ...): not a document
        result.ignored += 1
        return
    for article in articles:
        if not article.text.strip():
            result.skipped.append(
                Skip(article.doc_id, SkipReason.NO_TEXT, "no text in it", article.doc_id)
            )
            continue
        result.documents.append(Document(article.doc_id, source, article.title, article.text))
        result.squad_questions.extend(article.parsed)
        result.squad_unanswerable += article.unanswerable


def _decode(raw: bytes, source: str, result: IngestResult) -> str | None:
    """UTF-8 text with "\\n" line endings, or None after recording why it was skipped."""
    if b"\x00" in raw[:BINARY_PROBE_BYTES]:
        result.skipped.append(
            Skip(source, SkipReason.BINARY, "binary file (NUL bytes in the first 8 KiB)", source)
        )
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        result.skipped.append(
            Skip(
                source,
                SkipReason.NOT_UTF8,
                f"not UTF-8 (bad byte at offset {error.start}), convert it with iconv, "
                "e.g. iconv -f latin1 -t utf-8",
                source,
            )
        )
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")
