"""Ingest: folders of files and BEIR corpora become documents; bad files are skipped, counted."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.corpus.documents import documents_frame
from goldenset.corpus.html import html_title_and_text
from goldenset.corpus.ingest import ingest
from goldenset.corpus.titles import markdown_title, rst_title
from tests.stage_runs import assert_one_line_error, run_stage

PAGE = """<!doctype html>
<html><head><title>  The   Page </title><style>p { color: red }</style>
<script>var tracking = 1;</script></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<h1>Main   heading</h1>
<p>First <b>bold</b> paragraph,
   wrapped.<br>After a break.</p>
<!-- a comment -->
<ul><li>one</li><li>two &amp; three</li></ul>
<pre>
def f():
    return 1
</pre>
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
<div><div>Nested <span>div</span> text</div></div>
</body></html>
"""


def write_corpus(path: Path, lines: list[str]) -> None:
    with gzip.GzipFile(path, "wb", mtime=0) as out:
        out.write("".join(line + "\n" for line in lines).encode("utf-8"))


@pytest.fixture
def docs_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "nested" / "deeper").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / "guide.md").write_text(
        "Intro line\n\n# The Guide\n\nSome text.\r\nMore text.\r\n", encoding="utf-8"
    )
    (folder / "notes.txt").write_text("\ufeffPlain notes, with a BOM.\n", encoding="utf-8")
    (folder / "manual.rst").write_text("=======\nManual\n=======\n\nBody.\n", encoding="utf-8")
    (folder / "page.html").write_text(PAGE, encoding="utf-8")
    (folder / "nested" / "deeper" / "inner.md").write_text("No heading here.\n", encoding="utf-8")
    (folder / "empty.md").write_bytes(b"")
    (folder / "blank.txt").write_text("  \n\n\t\n", encoding="utf-8")
    (folder / "scripts-only.html").write_text("<script>x()</script>", encoding="utf-8")
    (folder / "blob.txt").write_bytes(b"PK\x03\x04\x00\x00binary")
    (folder / "latin.txt").write_bytes("café au lait".encode("latin-1"))
    (folder / "big.txt").write_text("word " * 400, encoding="utf-8")  # 2,000 bytes
    (folder / "image.png").write_bytes(b"\x89PNG")
    (folder / "README").write_text("no extension", encoding="utf-8")
    (folder / ".git" / "HEAD.md").write_text("# hidden", encoding="utf-8")
    write_corpus(
        folder / "nested" / "corpus.jsonl.gz",
        [
            json.dumps({"_id": "d1", "title": "Title One", "text": "Body one.", "metadata": {}}),
            "{not json",
            json.dumps({"title": "no id", "text": "lost"}),
            "",
            json.dumps({"_id": "d2", "title": "", "text": "Body two."}),
            json.dumps({"_id": "d3", "title": "Only a title"}),
            json.dumps({"_id": "d4", "title": " ", "text": "  "}),
        ],
    )
    return folder


def test_folder_ingest_reads_every_usable_document(docs_folder):
    result = ingest(docs_folder, max_file_mb=0.001)  # 1,048 bytes: big.txt is over
    ids = [doc.doc_id for doc in result.documents]
    assert ids == [
        "guide.md",
        "manual.rst",
        "d1",
        "d2",
        "d3",
        "nested/deeper/inner.md",
        "notes.txt",
        "page.html",
    ]
    by_id = {doc.doc_id: doc for doc in result.documents}
    assert by_id["guide.md"].title == "The Guide"
    assert by_id["guide.md"].text == "Intro line\n\n# The Guide\n\nSome text.\nMore text.\n"
    assert by_id["manual.rst"].title == "Manual"
    assert by_id["notes.txt"].title == "notes"
    assert by_id["notes.txt"].text == "Plain notes, with a BOM.\n"
    assert by_id["nested/deeper/inner.md"].title == "inner"
    assert by_id["page.html"].title == "The Page"
    assert by_id["d1"].text == "Title One Body one."
    assert by_id["d1"].title == "Title One"
    assert by_id["d1"].source == "nested/corpus.jsonl.gz:1"
    assert by_id["d2"].text == "Body two."
    assert by_id["d3"].text == "Only a title"
    assert by_id["guide.md"].source == "guide.md"


def test_folder_ingest_skips_bad_files_with_one_clear_line_each(docs_folder):
    result = ingest(docs_folder, max_file_mb=0.001)
    lines = {skip.source: skip.line() for skip in result.skipped}
    assert set(lines) == {
        "big.txt",
        "blank.txt",
        "blob.txt",
        "empty.md",
        "latin.txt",
        "scripts-only.html",
        "nested/corpus.jsonl.gz:2",
        "nested/corpus.jsonl.gz:3",
        "nested/corpus.jsonl.gz:7",
    }
    assert "binary" in lines["blob.txt"]
    assert "not UTF-8" in lines["latin.txt"] and "iconv" in lines["latin.txt"]
    assert "ingest.max_file_mb" in lines["big.txt"]
    assert "empty" in lines["empty.md"]
    assert "not valid JSON" in lines["nested/corpus.jsonl.gz:2"]
    assert '"_id"' in lines["nested/corpus.jsonl.gz:3"]
    assert all("\n" not in line for line in lines.values())
    # .png and README are ignored and counted; the hidden .git folder is not looked at
    assert result.ignored == 2
    summary = result.summary()
    assert "8 documents read" in summary
    assert "skipped 9" in summary and "1 binary" in summary and "1 not UTF-8" in summary
    assert "ignored: 2 files with other extensions" in summary


def test_a_bigger_size_limit_reads_the_big_file(docs_folder):
    result = ingest(docs_folder, max_file_mb=1)
    assert "big.txt" in {doc.doc_id for doc in result.documents}


def test_html_is_reduced_to_text_with_its_block_structure():
    title, text = html_title_and_text(PAGE)
    assert title == "The Page"
    assert text == (
        "Main heading\n\n"
        "First bold paragraph, wrapped.\nAfter a break.\n\n"
        "one\ntwo & three\n\n"
        "def f():\n    return 1\n\n"
        "k v\na 1\n\n"
        "Nested div text"
    )


def test_html_title_falls_back_to_h1_then_nothing():
    assert html_title_and_text("<h1>Heading <i>one</i></h1><p>x</p>")[0] == "Heading one"
    assert html_title_and_text("<p>just a paragraph</p>") == (None, "just a paragraph")


def test_html_nested_ten_thousand_deep_does_not_overflow():
    html = "<div>" * 10_000 + "deep" + "</div>" * 10_000
    assert html_title_and_text(html)[1] == "deep"


def test_markdown_and_rst_titles():
    assert markdown_title("```\n# comment in code\n```\nSetext Title\n====\n# Later") == (
        "Setext Title"
    )
    assert markdown_title("text\n## Closed heading ##\n") == "Closed heading"
    assert markdown_title("#hashtag only\n") is None
    assert rst_title("Intro\n\nSection\n-------\n") == "Section"
    assert rst_title("Too short\n---\n") is None


def test_single_corpus_file_keeps_line_order_and_line_sources(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps({"_id": i, "title": "", "text": f"text {i}"}) for i in ["b", "a", "c"]
        ),
        encoding="utf-8",
    )
    result = ingest(corpus, max_file_mb=1)
    assert [(d.doc_id, d.source) for d in result.documents] == [
        ("b", "corpus.jsonl:1"),
        ("a", "corpus.jsonl:2"),
        ("c", "corpus.jsonl:3"),
    ]


def test_duplicate_doc_ids_name_both_sources(tmp_path):
    write_corpus(tmp_path / "a.jsonl.gz", [json.dumps({"_id": "7", "text": "x"})])
    write_corpus(tmp_path / "b.jsonl.gz", ["", json.dumps({"_id": "7", "text": "y"})])
    with pytest.raises(GoldensetError) as error:
        ingest(tmp_path, max_file_mb=1)
    assert "'7'" in str(error.value)
    assert "a.jsonl.gz:1" in str(error.value) and "b.jsonl.gz:2" in str(error.value)


def test_a_folder_with_nothing_usable_names_the_folder_and_the_formats(tmp_path):
    folder = tmp_path / "nothing"
    folder.mkdir()
    (folder / "empty.md").write_bytes(b"")
    (folder / "report.pdf").write_bytes(b"%PDF")
    with pytest.raises(GoldensetError) as error:
        ingest(folder, max_file_mb=1)
    message = str(error.value)
    assert str(folder) in message
    assert ".md, .txt, .rst, .html" in message and ".jsonl" in message
    assert "ingest.path" in message and "\n" not in message


def test_missing_path_names_the_param(tmp_path):
    with pytest.raises(GoldensetError, match=r"ingest\.path: .*nowhere does not exist"):
        ingest(tmp_path / "nowhere", max_file_mb=1)


def test_a_corrupt_gzip_corpus_is_skipped(tmp_path):
    (tmp_path / "broken.jsonl.gz").write_bytes(b"\x1f\x8b not really gzip")
    (tmp_path / "ok.txt").write_text("fine", encoding="utf-8")
    result = ingest(tmp_path, max_file_mb=1)
    assert [doc.doc_id for doc in result.documents] == ["ok.txt"]
    assert result.skipped[0].source == "broken.jsonl.gz" and "gzip" in result.skipped[0].line()


def test_documents_frame_columns_and_hashes(docs_folder):
    frame = documents_frame(ingest(docs_folder, max_file_mb=1).documents)
    assert list(frame.columns) == ["doc_id", "source", "title", "text", "sha256", "places"]
    assert set(frame["places"]) == {"{}"}  # no page or heading in Markdown
    for row in frame.itertuples():
        assert row.sha256 == hashlib.sha256(row.text.encode("utf-8")).hexdigest()


def test_scifact_corpus_ingests_every_abstract(scifact_dir):
    result = ingest(scifact_dir / "corpus.jsonl.gz", max_file_mb=20)
    assert len(result.documents) == 5183
    assert not result.skipped
    first = result.documents[0]
    assert first.doc_id == "4983" and first.source == "corpus.jsonl.gz:1"
    assert first.text.startswith(first.title + " Alterations of the architecture")


# --- the stage scripts, as DVC runs them ----------------------------------------------------


def test_stages_write_identical_tables_on_every_run(docs_folder):
    workdir = docs_folder.parent
    (workdir / "params.yaml").write_text(
        "ingest:\n  path: docs\n  max_file_mb: 0.001\n"
        "chunk:\n  strategy: sentences\n  max_size: 40\n  overlap: 10\n",
        encoding="utf-8",
    )
    first = run_stage("ingest", workdir)
    assert first.returncode == 0, first.stderr
    assert "skipped latin.txt: not UTF-8" in first.stderr
    assert "8 documents read" in first.stderr
    documents = workdir / "data" / "documents.parquet"
    before = documents.read_bytes()
    assert run_stage("ingest", workdir).returncode == 0
    assert documents.read_bytes() == before

    chunked = run_stage("chunk", workdir)
    assert chunked.returncode == 0, chunked.stderr
    assert "chunks (strategy sentences, max_size 40, overlap 10)" in chunked.stderr
    docs = pd.read_parquet(documents).set_index("doc_id")
    chunks = pd.read_parquet(workdir / "data" / "chunks.parquet")
    assert set(chunks["doc_id"]) == set(docs.index)
    for row in chunks.itertuples():
        assert docs.loc[row.doc_id, "text"][row.start : row.end] == row.text
        assert row.end - row.start <= 40


@pytest.mark.slow
def test_chunk_stage_with_the_embedding_models_tokenizer(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("one two three four five six seven", encoding="utf-8")
    (tmp_path / "params.yaml").write_text(
        "ingest:\n  path: docs\nchunk:\n  strategy: tokens\n  max_size: 3\n  overlap: 1\n",
        encoding="utf-8",
    )
    assert run_stage("ingest", tmp_path).returncode == 0
    chunked = run_stage("chunk", tmp_path)
    assert chunked.returncode == 0, chunked.stderr
    chunks = pd.read_parquet(tmp_path / "data" / "chunks.parquet")
    assert chunks["text"].tolist() == ["one two three", "three four five", "five six seven"]


def test_ingest_stage_errors_are_one_line(tmp_path):
    (tmp_path / "params.yaml").write_text("ingest:\n  path: no/such/folder\n", encoding="utf-8")
    assert_one_line_error(run_stage("ingest", tmp_path), "ingest.path", "no/such/folder")

    (tmp_path / "empty").mkdir()
    (tmp_path / "params.yaml").write_text("ingest:\n  path: empty\n", encoding="utf-8")
    assert_one_line_error(run_stage("ingest", tmp_path), "no usable document in empty", ".rst")


def test_chunk_stage_errors_are_one_line(tmp_path):
    (tmp_path / "params.yaml").write_text("chunk:\n  strategy: sentences\n", encoding="utf-8")
    assert_one_line_error(run_stage("chunk", tmp_path), "data/documents.parquet", "ingest")

    (tmp_path / "params.yaml").write_text(
        "chunk:\n  max_size: 10\n  overlap: 10\n", encoding="utf-8"
    )
    assert_one_line_error(run_stage("chunk", tmp_path), "chunk.overlap")


# --- real queries and duplicates, through the stage -----------------------------------------

QRELS_HEADER = "query-id\tcorpus-id\tscore"


def write_queries(folder: Path, queries: dict[str, str], qrels: list[str]) -> None:
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()),
        encoding="utf-8",
    )
    (folder / "qrels.tsv").write_text("\n".join([QRELS_HEADER, *qrels]) + "\n", encoding="utf-8")


def ingest_project(tmp_path: Path, params: str = "") -> Path:
    (tmp_path / "params.yaml").write_text(f"ingest:\n  path: docs\n{params}", encoding="utf-8")
    (tmp_path / "docs").mkdir(exist_ok=True)
    return tmp_path


def read_outputs(project: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list]:
    data = project / "data"
    return (
        pd.read_parquet(data / "documents.parquet"),
        pd.read_parquet(data / "queries.parquet"),
        pd.read_parquet(data / "qrels.parquet"),
        json.loads((data / "duplicates.json").read_text(encoding="utf-8")),
    )


@pytest.mark.parametrize("how", ["no files", "real_queries false", "real_queries null"])
def test_without_real_queries_ingest_writes_empty_tables_and_says_so(tmp_path, how):
    params = {"no files": "", "real_queries false": "  real_queries: false\n"}.get(
        how, "  real_queries: null\n"
    )
    project = ingest_project(tmp_path, params)
    (project / "docs" / "a.md").write_text("# A\n\nSome text about apples.\n", encoding="utf-8")
    if how != "no files":
        write_queries(project / "docs", {"q1": "apples?"}, ["q1\ta.md\t1"])
    process = run_stage("ingest", project)
    assert process.returncode == 0, process.stderr
    assert "no real queries: scoring the golden set only" in process.stderr.splitlines()
    documents, queries, qrels, duplicates = read_outputs(project)
    assert documents["doc_id"].tolist() == ["a.md"]  # queries.jsonl is never a document
    assert queries.empty and list(queries.columns) == ["qid", "text"]
    assert qrels.empty and list(qrels.columns) == ["qid", "doc_id", "grade", "absent"]
    assert duplicates == []


def test_real_queries_beside_the_documents_in_the_beir_layout(tmp_path):
    project = ingest_project(tmp_path, "  exclude: [SOURCE.md]\n")
    docs = project / "docs"
    write_corpus(
        docs / "corpus.jsonl.gz",
        [
            json.dumps({"_id": "d1", "title": "One", "text": "About apples and pears."}),
            json.dumps({"_id": "d2", "title": "", "text": ""}),  # empty: skipped
            json.dumps({"_id": "d3", "title": "Three", "text": "About plums and cherries."}),
        ],
    )
    (docs / "SOURCE.md").write_text("# Where it came from\n", encoding="utf-8")
    (docs / "qrels").mkdir()
    (docs / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": q}) for q in ["q1"]) + "\n", encoding="utf-8"
    )
    (docs / "qrels" / "test.tsv").write_text(
        f"{QRELS_HEADER}\nq1\td1\t1\nq1\td2\t2\n", encoding="utf-8"
    )
    process = run_stage("ingest", project)
    assert process.returncode == 0, process.stderr
    assert "real queries: 1 queries, 2 judgments" in process.stderr
    documents, queries, qrels, _ = read_outputs(project)
    assert documents["doc_id"].tolist() == ["d1", "d3"]  # SOURCE.md excluded
    assert queries.to_dict("records") == [{"qid": "q1", "text": "q1"}]
    assert qrels.to_dict("records") == [
        {"qid": "q1", "doc_id": "d1", "grade": 1.0, "absent": ""},
        {"qid": "q1", "doc_id": "d2", "grade": 2.0, "absent": "no text"},
    ]


def test_real_queries_shown_to_the_writer_as_examples_leave_the_reference(tmp_path):
    project = ingest_project(tmp_path, "generate:\n  example_queries: [Apples grow on trees.]\n")
    (project / "docs" / "a.md").write_text("Apples grow on trees; pears too.", encoding="utf-8")
    (project / "docs" / "b.md").write_text("Plums ripen in August.", encoding="utf-8")
    queries = {"q1": "Apples grow on trees.", "q2": "Plums ripen late."}
    write_queries(project / "docs", queries, ["q1\ta.md\t1", "q2\tb.md\t1"])
    process = run_stage("ingest", project)
    assert process.returncode == 0, process.stderr
    assert "real queries: 1 left out of the reference, shown to the writer" in process.stderr
    _, kept, qrels, _ = read_outputs(project)
    assert kept["qid"].tolist() == ["q2"] and qrels["qid"].tolist() == ["q2"]


def test_qrels_naming_a_document_the_corpus_never_had_is_one_line(tmp_path):
    project = ingest_project(tmp_path)
    (project / "docs" / "a.txt").write_text("apples", encoding="utf-8")
    write_queries(project / "docs", {"q1": "apples?"}, ["q1\ta.txt\t1", "q1\tmissing-doc\t1"])
    assert_one_line_error(run_stage("ingest", project), "'missing-doc'", "ingest.path", "qrels")


def test_only_queries_without_qrels_is_one_line(tmp_path):
    project = ingest_project(tmp_path)
    (project / "docs" / "a.txt").write_text("apples", encoding="utf-8")
    (project / "docs" / "queries.jsonl").write_text('{"_id": "q", "text": "t"}\n')
    assert_one_line_error(run_stage("ingest", project), "qrels.tsv", "ingest.real_queries")


PAGE_V1 = " ".join(
    f"Sentence {i} of the installation guide explains step {i} in plain words." for i in range(40)
)


def test_duplicates_are_dropped_named_and_their_judgments_move_to_the_kept_twin(tmp_path):
    project = ingest_project(tmp_path)
    docs = project / "docs"
    (docs / "guide.md").write_text(PAGE_V1, encoding="utf-8")
    # same text after normalisation: case, spacing, line endings
    (docs / "mirror" / "guide.txt").parent.mkdir()
    (docs / "mirror" / "guide.txt").write_text(PAGE_V1.upper().replace(" ", "  \r\n"))
    # the same page in a second version: one sentence changed
    (docs / "v2.md").write_text(PAGE_V1.replace("step 7 in", "step seven in"), encoding="utf-8")
    (docs / "other.md").write_text("A different page about the cafeteria menu.", encoding="utf-8")
    write_queries(docs, {"q1": "step 7?", "q2": "menu?"}, ["q1\tv2.md\t1", "q2\tother.md\t1"])
    process = run_stage("ingest", project)
    assert process.returncode == 0, process.stderr
    lines = process.stderr.splitlines()
    assert "dropped mirror/guide.txt: duplicate of guide.md" in lines
    near = [line for line in lines if line.startswith("dropped v2.md: near-duplicate (")]
    assert len(near) == 1 and near[0].endswith(") of guide.md")
    assert "dropped 2 duplicates (data/duplicates.json)" in process.stderr
    documents, _, qrels, duplicates = read_outputs(project)
    assert documents["doc_id"].tolist() == ["guide.md", "other.md"]
    assert [(d["doc_id"], d["kept"], d["kind"]) for d in duplicates] == [
        ("mirror/guide.txt", "guide.md", "exact"),
        ("v2.md", "guide.md", "near"),
    ]
    assert 0.8 <= duplicates[1]["similarity"] < 1
    assert qrels[["qid", "doc_id"]].values.tolist() == [["q1", "guide.md"], ["q2", "other.md"]]

    # near-duplicates off: only the exact copy goes
    (project / "params.yaml").write_text("ingest:\n  path: docs\n  near_duplicates: null\n")
    assert run_stage("ingest", project).returncode == 0
    documents, _, qrels, duplicates = read_outputs(project)
    assert documents["doc_id"].tolist() == ["guide.md", "other.md", "v2.md"]
    assert [d["doc_id"] for d in duplicates] == ["mirror/guide.txt"]
    assert qrels["doc_id"].tolist() == ["v2.md", "other.md"]


def test_titles_come_from_headings_never_from_metadata_or_numbers(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    paper = "PMID: 12345678\n---\n\n# Aspirin and colorectal cancer\n\nAspirin lowered risk.\n"
    (docs / "paper.md").write_text(paper)
    (docs / "12.txt").write_text("PMID: 12345678\nAspirin lowered the risk of colorectal cancer.\n")
    (docs / "guide.rst").write_text("12\n==\n\nInstalling\n==========\n\nRun the installer.\n")
    (docs / "page.html").write_text("<title>2021</title><h1>Release notes</h1><p>Fixed.</p>")
    result = ingest(docs, max_file_mb=1, exclude=[])
    titles = {d.doc_id: d.title for d in result.documents}
    assert titles == {
        "paper.md": "Aspirin and colorectal cancer",
        "12.txt": "",  # a number names nothing, and a .txt file has no heading to use
        "guide.rst": "Installing",
        "page.html": "Release notes",
    }
    assert markdown_title("DOI: 10.1000/182\n===\n") is None
