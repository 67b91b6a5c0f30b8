"""Read a folder of documents or a BEIR corpus into one row per document.

Order of the rows (so the output is byte-identical on every run): sources are visited in the
order of their path relative to `ingest.path`'s folder (plain string order, forward slashes),
and a BEIR corpus contributes its documents in line order. For a folder of files that is
simply doc_id order.

Text is kept as written, except that line endings become "\\n" and HTML is reduced to its text.
A SQuAD JSON file contributes one document per article (goldenset.corpus.labelled) and its
questions.
Hidden files and folders (".git", ".DS_Store"), paths matching `ingest.exclude`, and the
questions at the top of the folder (BEIR `queries.jsonl`, `qrels.tsv`, `qrels/`, and
`labelled.jsonl`) are not documents; files with other extensions, and `.json` files not in the
SQuAD layout, are counted as ignored.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

import pandas as pd
from bs4 import BeautifulSoup, Comment, Declaration, Doctype, NavigableString, ProcessingInstruction
from tqdm import tqdm

from goldenset.core.errors import GoldensetError
from goldenset.corpus.labelled import Question, read_squad_file
from goldenset.corpus.queries import is_query_file

DOCUMENT_SUFFIXES = (".md", ".txt", ".rst", ".html", ".htm")
CORPUS_SUFFIXES = (".jsonl", ".jsonl.gz")
SQUAD_SUFFIX = ".json"
SUPPORTED = ".md, .txt, .rst, .html files, BEIR corpus .jsonl/.jsonl.gz or SQuAD .json files"
DOCUMENT_COLUMNS = ["doc_id", "source", "title", "text", "sha256"]
BINARY_PROBE_BYTES = 8192
PROGRESS_MIN_FILES = 200

# Skip reasons, as counted in the summary
EMPTY = "empty"
BINARY = "binary"
NOT_UTF8 = "not UTF-8"
TOO_LARGE = "too large"
NO_TEXT = "no text"
BAD_LINE = "bad corpus line"
BAD_GZIP = "bad gzip"


@dataclass(frozen=True)
class Document:
    doc_id: str
    source: str
    title: str
    text: str


@dataclass(frozen=True)
class Skip:
    source: str
    reason: str  # one of the reason constants above
    detail: str  # the line shown to the user, after the source
    doc_id: str | None = None  # the id the document would have had, when it is known

    def line(self) -> str:
        return f"skipped {self.source}: {self.detail}"


@dataclass
class IngestResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    ignored: int = 0  # files with an unsupported extension, or .json not in the SQuAD layout
    squad_questions: list[Question] = field(default_factory=list)  # of the SQuAD articles read
    squad_unanswerable: int = 0  # SQuAD v2.0 questions marked is_impossible

    def summary(self) -> str:
        chars = sum(len(doc.text) for doc in self.documents)
        parts = [f"{len(self.documents):,} documents read, {chars:,} chars"]
        if self.skipped:
            counts = Counter(skip.reason for skip in self.skipped)
            reasons = ", ".join(f"{n:,} {reason}" for reason, n in sorted(counts.items()))
            parts.append(f"skipped {len(self.skipped):,} ({reasons})")
        if self.ignored:
            parts.append(f"ignored: {self.ignored:,} files with other extensions")
        return "; ".join(parts)


def ingest(
    path: str | Path,
    max_file_mb: float,
    progress: bool = False,
    exclude: Iterable[str] = (),
) -> IngestResult:
    """Read every supported document under `path` (a folder, a BEIR corpus or one document file).

    `exclude`: glob patterns (fnmatch, on the path relative to the folder) of files to leave out.

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
    bar = tqdm(
        wanted, unit="file", desc="ingest", disable=not progress or len(wanted) < PROGRESS_MIN_FILES
    )
    for file in bar:
        source = file.relative_to(root).as_posix()
        if _kind(file) == "corpus":
            _read_corpus(file, source, max_bytes, result)
        elif _kind(file) == "squad":
            _read_squad(file, source, max_bytes, result)
        else:
            _read_document_file(file, source, max_bytes, result)

    _check_unique(result.documents)
    if not result.documents:
        raise GoldensetError(
            f"ingest.path: no usable document in {path} (supported: {SUPPORTED}); "
            + result.summary()
        )
    return result


def documents_frame(documents: Iterable[Document]) -> pd.DataFrame:
    """The documents table: doc_id, source, title, text, sha256 (hex of the UTF-8 text)."""
    rows = [
        (d.doc_id, d.source, d.title, d.text, hashlib.sha256(d.text.encode("utf-8")).hexdigest())
        for d in documents
    ]
    return pd.DataFrame(rows, columns=DOCUMENT_COLUMNS).astype(str)


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


# --- files -------------------------------------------------------------------------------------


def _read_document_file(file: Path, source: str, max_bytes: int, result: IngestResult) -> None:
    size = file.stat().st_size
    if size > max_bytes:
        skip = Skip(source, TOO_LARGE, f"too large: {_over_limit(size, max_bytes)}", source)
        result.skipped.append(skip)
        return
    raw = file.read_bytes()
    if not raw:
        result.skipped.append(Skip(source, EMPTY, "empty file", source))
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
        result.skipped.append(Skip(source, NO_TEXT, "no text in it", source))
        return
    title = next((t for t in (title, file.stem) if t and is_title(t)), "")
    result.documents.append(Document(source, source, title, text))


def _read_squad(file: Path, source: str, max_bytes: int, result: IngestResult) -> None:
    """Each article of a SQuAD file as a document; its questions kept for the labelled set."""
    size = file.stat().st_size
    if size > max_bytes:
        result.skipped.append(Skip(source, TOO_LARGE, f"too large: {_over_limit(size, max_bytes)}"))
        return
    articles = read_squad_file(file, source)
    if articles is None:  # some other JSON (package.json, ...): not a document
        result.ignored += 1
        return
    for article in articles:
        if not article.text.strip():
            result.skipped.append(Skip(article.doc_id, NO_TEXT, "no text in it", article.doc_id))
            continue
        result.documents.append(Document(article.doc_id, source, article.title, article.text))
        result.squad_questions.extend(article.questions)
        result.squad_unanswerable += article.unanswerable


def _over_limit(size: int, max_bytes: int) -> str:
    return f"{size:,} bytes > ingest.max_file_mb ({max_bytes:,} bytes)"


def _decode(raw: bytes, source: str, result: IngestResult) -> str | None:
    """UTF-8 text with "\\n" line endings, or None after recording why it was skipped."""
    if b"\x00" in raw[:BINARY_PROBE_BYTES]:
        result.skipped.append(
            Skip(source, BINARY, "binary file (NUL bytes in the first 8 KiB)", source)
        )
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        result.skipped.append(
            Skip(
                source,
                NOT_UTF8,
                f"not UTF-8 (bad byte at offset {error.start}), convert it with iconv, "
                "e.g. iconv -f latin1 -t utf-8",
                source,
            )
        )
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


_MD_ATX = re.compile(r"[ ]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_MD_FENCE = re.compile(r"[ ]{0,3}(?:```|~~~)")
_SETEXT = re.compile(r"[ ]{0,3}(?:=+|-+)[ \t]*$")
_RST_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1+[ \t]*$")
# "PMID: 12345", "DOI: 10.1000/x", "Date: 2021-03-04": a record's metadata, not its title
_METADATA = re.compile(r"^\s*[A-Za-z][\w -]{0,20}:\s*[\w./-]*\d[\w./-]*\s*$")
_LETTERS = re.compile(r"[^\W\d_]{2,}")


def is_title(line: str) -> bool:
    """Whether a heading (or file name) can title a document: it has a word of letters and is
    not a metadata line. A number ("12") or "PMID: 12345" names nothing a reader would search."""
    return bool(_LETTERS.search(line)) and not _METADATA.match(line)


def markdown_title(text: str) -> str | None:
    """The text of the first heading (# Title, or Title underlined with === / ---) outside code."""
    lines = text.split("\n")
    in_fence = False
    for number, line in enumerate(lines):
        if _MD_FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        atx = _MD_ATX.match(line)
        if atx and is_title(atx.group(1).strip()):
            return atx.group(1).strip()
        underline = lines[number + 1] if number + 1 < len(lines) else ""
        if is_title(line.strip()) and _SETEXT.match(underline) and not _MD_ATX.match(line):
            return line.strip()
    return None


def rst_title(text: str) -> str | None:
    """The first section title: a line underlined (and maybe overlined) with punctuation."""
    lines = text.split("\n")
    for number in range(len(lines) - 1):
        title, underline = lines[number].strip(), lines[number + 1].rstrip()
        if (
            is_title(title)
            and not _RST_ADORNMENT.match(lines[number])
            and _RST_ADORNMENT.match(underline)
            and len(underline) >= len(title)
        ):
            return title
    return None


# --- HTML --------------------------------------------------------------------------------------

_DROPPED_TAGS = frozenset(
    """head title script style noscript template nav svg iframe object embed canvas
    button select""".split()  # noqa: SIM905
)
_PARAGRAPH_TAGS = frozenset(
    """p h1 h2 h3 h4 h5 h6 pre blockquote table ul ol dl section article aside main header
    footer figure figcaption address details summary fieldset hr div body html form""".split()  # noqa: SIM905
)
_LINE_TAGS = frozenset(("li", "tr", "dt", "dd", "caption", "legend", "option"))
_CELL_TAGS = frozenset(("td", "th"))
_SKIPPED_STRINGS = (Comment, Declaration, Doctype, ProcessingInstruction)
_SPACES = re.compile(r"\s+")
LINE, PARAGRAPH = 1, 2  # strength of a break between blocks


def html_title_and_text(html: str) -> tuple[str | None, str]:
    """Title (<title>, else the first <h1>) and readable text of an HTML page.

    Scripts, styles and navigation are dropped; paragraphs, headings, lists and tables become
    lines separated by blank lines; whitespace inside a block collapses except in <pre>.
    """
    soup = BeautifulSoup(html, "html.parser")
    found = (_element_text(soup.find(name)) for name in ("title", "h1"))
    title = next((text for text in found if is_title(text)), None)
    return title, _join_blocks(_html_tokens(soup))


def _element_text(element) -> str:
    return "" if element is None else _SPACES.sub(" ", element.get_text(" ")).strip()


def _html_tokens(soup: BeautifulSoup) -> Iterator[tuple[str, bool] | int]:
    """Walk the tree without recursion (pages nest deeply), yielding (text, in_pre) and breaks."""
    stack: list = [(soup, False)]
    while stack:
        item = stack.pop()
        if isinstance(item, int):
            yield item
            continue
        node, in_pre = item
        if isinstance(node, NavigableString):
            if not isinstance(node, _SKIPPED_STRINGS):
                yield (str(node), in_pre)
            continue
        name = (node.name or "").lower()
        if name in _DROPPED_TAGS:
            continue
        if name == "br":
            yield LINE
            continue
        brk = PARAGRAPH if name in _PARAGRAPH_TAGS else LINE if name in _LINE_TAGS else 0
        children = [(child, in_pre or name == "pre") for child in node.children]
        tail: list = [brk] if brk else []
        if name in _CELL_TAGS:
            tail.append((NavigableString(" "), False))  # cells of a row stay apart
        stack.extend(reversed([*([brk] if brk else []), *children, *tail]))


def _join_blocks(tokens: Iterable[tuple[str, bool] | int]) -> str:
    """Assemble text runs into blocks; join blocks by the strongest break seen between them."""
    blocks: list[tuple[int, str]] = []  # (break before the block, block text)
    current: list[str] = []
    pending = 0  # strongest break since the last block
    before = 0  # the break recorded when the current block started

    def flush() -> None:
        nonlocal pending
        lines = "".join(current).split("\n")
        current.clear()
        while lines and not lines[0].strip():
            lines.pop(0)
        block = "\n".join(lines).rstrip()
        if block:
            blocks.append((before, block))
        else:
            pending = max(pending, before)

    for token in tokens:
        if isinstance(token, int):
            if current:
                flush()
            pending = max(pending, token)
            continue
        text, in_pre = token
        if not in_pre:
            text = _SPACES.sub(" ", text)
            if not current or current[-1].endswith(" "):
                text = text.lstrip(" ")
        if not text:
            continue
        if not current:
            before, pending = pending, 0
        current.append(text)
    if current:
        flush()
    parts = []
    for number, (brk, block) in enumerate(blocks):
        if number:
            parts.append("\n\n" if brk >= PARAGRAPH else "\n")
        parts.append(block)
    return "".join(parts)


# --- BEIR corpora ------------------------------------------------------------------------------


def document_text(title: str, text: str) -> str:
    """A record's title and text as one text, as MTEB/BEIR embed a whole abstract: the title, a
    space and the text, stripped (the text alone when there is no title)."""
    return f"{title} {text}".strip()


def _read_corpus(file: Path, source: str, max_bytes: int, result: IngestResult) -> None:
    """Each line {"_id", "title", "text", ...}: doc_id = _id, text = `document_text`."""
    if file.stat().st_size == 0:
        result.skipped.append(Skip(source, EMPTY, "empty file"))
        return
    opener = gzip.open if file.name.lower().endswith(".gz") else open
    found = False
    try:
        with opener(file, "rb") as lines:
            for number, raw in enumerate(lines, start=1):
                if raw.strip():
                    found = True
                    _read_corpus_line(raw, f"{source}:{number}", max_bytes, result)
    except (OSError, EOFError, zlib.error) as error:
        result.skipped.append(Skip(source, BAD_GZIP, f"cannot read it as gzip ({error})"))
        return
    if not found:
        result.skipped.append(Skip(source, EMPTY, "empty corpus (no lines)"))


def _read_corpus_line(raw: bytes, source: str, max_bytes: int, result: IngestResult) -> None:
    # a corpus file may be big; the size limit applies to each of its documents
    if len(raw) > max_bytes:
        result.skipped.append(
            Skip(source, TOO_LARGE, f"document too large: {_over_limit(len(raw), max_bytes)}")
        )
        return
    try:
        record = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        result.skipped.append(Skip(source, NOT_UTF8, "not UTF-8, convert the corpus with iconv"))
        return
    except json.JSONDecodeError as error:
        result.skipped.append(Skip(source, BAD_LINE, f"not valid JSON ({error.msg})"))
        return
    if not isinstance(record, dict) or not isinstance(record.get("_id"), (str, int)):
        result.skipped.append(Skip(source, BAD_LINE, 'no "_id" (a string) in this line'))
        return
    doc_id = str(record["_id"])
    title, body = record.get("title") or "", record.get("text") or ""
    if not isinstance(title, str) or not isinstance(body, str):
        skip = Skip(source, BAD_LINE, '"title" and "text" must be strings', doc_id)
        result.skipped.append(skip)
        return
    text = document_text(title, body)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text:
        result.skipped.append(Skip(source, NO_TEXT, "no title or text", doc_id))
        return
    result.documents.append(Document(doc_id, source, title.strip(), text))
