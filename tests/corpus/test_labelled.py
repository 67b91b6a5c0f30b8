"""Labelled questions: excerpts located in the ingested text, SQuAD files read as a labelled set."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.corpus.ingest import ingest
from goldenset.corpus.labelled import (
    Excerpt,
    Question,
    locate,
    locate_questions,
    normalise,
    read_labelled_file,
)
from tests.stage_runs import run_stage

TEXT = "Install the agent.\nThen restart it. Then restart it again, twice."


def located(document: str, excerpt: str, start=None, end=None) -> str | None:
    span = locate(document, normalise(document), excerpt, start, end)
    return None if span is None else document[span[0] : span[1]]


def test_offsets_pointing_at_the_text_are_kept_as_given():
    start = TEXT.index("restart it again")
    assert locate(TEXT, normalise(TEXT), "restart it", start, start + 10) == (start, start + 10)
    # an excerpt with no letter or digit can only be found by its offsets
    assert locate("yes -- no", normalise("yes -- no"), "--", 4, 6) == (4, 6)


def test_wrong_offsets_find_the_occurrence_nearest_them():
    first, second = TEXT.index("restart it."), TEXT.index("restart it again")
    # a few characters off (a BOM, CRLF line endings): the nearest occurrence
    assert locate(TEXT, normalise(TEXT), "restart it", second + 3, second + 13) == (
        second,
        second + 10,
    )
    assert locate(TEXT, normalise(TEXT), "restart it", first + 2, first + 12)[0] == first
    # no offsets: the first occurrence
    assert locate(TEXT, normalise(TEXT), "restart it")[0] == first
    # offsets past the end of the document are only a hint
    assert locate(TEXT, normalise(TEXT), "Restart it again", 999, 1015)[0] == second


def test_whitespace_case_and_punctuation_do_not_lose_an_excerpt():
    assert (
        located(TEXT, "install  the agent. then\n\n  RESTART") == "Install the agent.\nThen restart"
    )
    assert located(TEXT, "restart it — again") == "restart it again"
    assert located("Straße und Öl", "STRASSE UND ÖL") == "Straße und Öl"  # casefold grows ß
    # entities: decoded when the excerpt comes from HTML source, kept when the text has them
    assert located("Salt & pepper", "salt &amp; pepper") == "Salt & pepper"
    assert located("Salt &amp; pepper", "salt &amp; pepper") == "Salt &amp; pepper"


def test_an_excerpt_that_is_nowhere_is_none():
    assert located(TEXT, "uninstall the agent") is None
    assert located(TEXT, " ... ") is None  # nothing to look for


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


HTML = (
    "<html><head><title>Guide</title><script>var x = 1;</script></head><body>\n"
    "<nav>Home | Docs</nav>\n<h1>Guide</h1>\n"
    "<p>Set   the <b>timeout</b> to\n  <a href='/t'>30&nbsp;seconds</a> &amp; retry.</p>\n"
    "<ul><li>one</li><li>two</li></ul></body></html>"
)
MARKDOWN = (
    '# Setup\r\n\r\nSet the **timeout** to [30 seconds](https://example.com/t "t") and retry.\r\n'
    "\r\n| key | value |\r\n|---|---|\r\n| retries | 3 |\r\n"
)


def source_excerpt(source: str, text: str) -> Excerpt:
    start = source.index(text)
    return Excerpt("", text, start, start + len(text))


@pytest.fixture
def guides(tmp_path) -> dict[str, str]:
    write(tmp_path / "guide.html", HTML)
    write(tmp_path / "guide.md", MARKDOWN.encode("utf-8"))
    return {d.doc_id: d.text for d in ingest(tmp_path, 1).documents}


def test_an_html_excerpt_from_the_page_source_is_found_in_the_text_ingest_made(guides):
    text = guides["guide.html"]
    assert "Set the timeout to 30 seconds & retry." in text  # what ingest made of the page
    # offsets and text as marked in the source: tags, entities, spacing of the page
    excerpt = source_excerpt(HTML, "the <b>timeout</b> to\n  <a href='/t'>30&nbsp;seconds</a>")
    span = locate(text, normalise(text), excerpt.text, excerpt.start, excerpt.end)
    assert text[span[0] : span[1]] == "the timeout to 30 seconds"
    # or as a reader copied it from the rendered page
    assert located(text, "two") == "two" and located(text, "one two") == "one\ntwo"


def test_a_markdown_excerpt_survives_line_endings_and_rendered_markup(guides):
    text = guides["guide.md"]
    assert "\r" not in text  # ingest made the line endings "\n": source offsets moved
    excerpt = source_excerpt(MARKDOWN, "and retry.\r\n\r\n| key")
    span = locate(text, normalise(text), excerpt.text, excerpt.start, excerpt.end)
    assert text[span[0] : span[1]] == "and retry.\n\n| key"
    # copied from the rendered page: no emphasis, no link destination
    assert located(text, "Set the timeout to 30 seconds and retry") == (
        'Set the **timeout** to [30 seconds](https://example.com/t "t") and retry'
    )


def question(qid: str, *excerpts: Excerpt) -> Question:
    return Question(qid, f"question {qid}?", excerpts, f"labelled.jsonl:{qid}")


def test_a_question_whose_excerpt_is_nowhere_is_named_left_out_and_counted():
    documents = {"a.md": TEXT, "b.md": "Other text about the agent."}
    result = locate_questions(
        [
            question("q1", Excerpt("a.md", "restart it again"), Excerpt("b.md", "other text")),
            question("q2", Excerpt("a.md", "restart it"), Excerpt("b.md", "uninstall it")),
            question("q3", Excerpt("gone.md", "restart it")),
            question("q4", Excerpt("copy.md", "Install the agent")),  # a dropped duplicate
        ],
        documents,
        {"copy.md": "a.md"},
    )
    assert result.table["qid"].tolist() == ["q1", "q4"]
    assert result.evidence.to_dict("records") == [
        {"qid": "q1", "doc_id": "a.md", "start": 41, "end": 57},
        {"qid": "q1", "doc_id": "b.md", "start": 0, "end": 10},
        {"qid": "q4", "doc_id": "a.md", "start": 0, "end": 17},
    ]
    assert result.not_found == [
        'labelled: left out q2 (labelled.jsonl:q2): excerpt "uninstall it" not found in b.md',
        'labelled: left out q3 (labelled.jsonl:q3): excerpt "restart it" not found '
        "(no such ingested document) gone.md",
    ]
    assert result.left_out == 2
    assert "left out 2 questions with an excerpt not found" in result.summary("labelled.jsonl")


def test_two_questions_with_one_id_are_refused():
    twice = [question("q", Excerpt("a.md", "agent")), question("q", Excerpt("a.md", "agent"))]
    with pytest.raises(GoldensetError, match="'q' appears twice"):
        locate_questions(twice, {"a.md": TEXT}, {})


def test_labelled_jsonl_lines_and_their_errors(tmp_path):
    path = write(
        tmp_path / "labelled.jsonl",
        json.dumps({"_id": 7, "text": "Why?", "evidence": [{"doc_id": "a.md", "text": "x"}]})
        + "\n\n"
        + json.dumps(
            {"_id": "b", "text": "How?", "evidence": [{"doc_id": 3, "text": "y", "start": 4}]}
        )
        + "\n",
    )
    first, second = read_labelled_file(path)
    assert first == Question("7", "Why?", (Excerpt("a.md", "x"),), f"{path}:1")
    assert second.evidence == (Excerpt("3", "y"),)  # a start without an end is no offset
    bad_lines = ['{"_id": "q", "text": "t"}', '{"_id": "q", "text": "t", "evidence": []}', "{"]
    for bad in [*bad_lines, '{"_id": "q", "text": "t", "evidence": ["a.md"]}']:
        write(path, bad + "\n")
        with pytest.raises(GoldensetError, match=r"labelled.jsonl:1: "):
            read_labelled_file(path)


# --- SQuAD --------------------------------------------------------------------------------------

SQUAD_V1 = {
    "version": "1.1",
    "data": [
        {
            "title": "Solar_System",
            "paragraphs": [
                {
                    "context": "The Sun is a star. It holds most of the mass.",
                    "qas": [
                        {
                            "id": "s1",
                            "question": "What is the Sun?",
                            # three annotators, two the same span: two evidence rows
                            "answers": [
                                {"answer_start": 13, "text": "star"},
                                {"answer_start": 13, "text": "star"},
                                {"answer_start": 11, "text": "a star"},
                            ],
                        }
                    ],
                },
                {
                    "context": "Jupiter is the largest planet.",
                    "qas": [
                        {
                            "id": "s2",
                            "question": "Which planet is largest?",
                            "answers": [{"answer_start": 0, "text": "Jupiter"}],
                        }
                    ],
                },
            ],
        },
        {"title": "", "paragraphs": [{"context": "Untitled article text.", "qas": []}]},
    ],
}
SQUAD_V2 = {
    "version": "v2.0",
    "data": [
        {
            "title": "Moons",
            "paragraphs": [
                {
                    "context": "Titan orbits Saturn.",
                    "qas": [
                        {
                            "id": "m1",
                            "question": "What does Titan orbit?",
                            "answers": [{"answer_start": 13, "text": "Saturn"}],
                            "is_impossible": False,
                        },
                        {
                            "id": "m2",
                            "question": "What does Titan eat?",
                            "answers": [],
                            "plausible_answers": [{"answer_start": 0, "text": "Titan"}],
                            "is_impossible": True,
                        },
                    ],
                }
            ],
        }
    ],
}


def test_squad_v1_and_v2_files_are_documents_and_labelled_questions(tmp_path):
    write(tmp_path / "qa" / "v1.json", json.dumps(SQUAD_V1))
    write(tmp_path / "v2.json", json.dumps(SQUAD_V2))
    write(tmp_path / "package.json", json.dumps({"name": "not squad", "data": 3}))
    result = ingest(tmp_path, 1)
    documents = {d.doc_id: d for d in result.documents}
    assert list(documents) == ["qa/v1.json#Solar_System", "qa/v1.json#2", "v2.json#Moons"]
    solar = documents["qa/v1.json#Solar_System"]
    assert solar.title == "Solar System" and solar.source == "qa/v1.json"
    assert (
        solar.text
        == "The Sun is a star. It holds most of the mass.\n\nJupiter is the largest planet."
    )
    assert result.ignored == 1  # package.json
    assert result.squad_unanswerable == 1
    labelled = locate_questions(
        result.squad_questions, {d: doc.text for d, doc in documents.items()}, {}
    )
    assert labelled.table["qid"].tolist() == ["s1", "s2", "m1"]
    spans = [
        (row.qid, documents[row.doc_id].text[row.start : row.end])
        for row in labelled.evidence.itertuples()
    ]
    assert spans == [("s1", "star"), ("s1", "a star"), ("s2", "Jupiter"), ("m1", "Saturn")]
    assert labelled.not_found == []
    broken = json.loads(json.dumps(SQUAD_V2))
    del broken["data"][0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"]
    write(tmp_path / "v2.json", json.dumps(broken))
    with pytest.raises(GoldensetError, match=r"v2.json is laid out as SQuAD .*'answer_start'"):
        ingest(tmp_path, 1)


def test_the_super_bowl_50_article_locates_all_810_questions(squad_file):
    result = ingest(squad_file.parent, 20, exclude=["SOURCE.md"])
    (article,) = result.documents
    assert article.doc_id == "squad-dev-v1.1-super-bowl-50.json#Super_Bowl_50"
    assert len(article.text) == 33_735 + 53 * len("\n\n")  # 54 paragraphs
    labelled = locate_questions(result.squad_questions, {article.doc_id: article.text}, {})
    print(labelled.summary(squad_file.name))
    assert len(labelled.table) == 810 and labelled.left_out == 0
    assert result.squad_unanswerable == 0
    record = json.loads(squad_file.read_text(encoding="utf-8"))
    answers = {
        (qa["id"], answer["text"])
        for paragraph in record["data"][0]["paragraphs"]
        for qa in paragraph["qas"]
        for answer in qa["answers"]
    }
    found = {(row.qid, article.text[row.start : row.end]) for row in labelled.evidence.itertuples()}
    assert found == answers  # every answer of every question, at its own text


# --- through the ingest stage -------------------------------------------------------------------


def test_the_ingest_stage_writes_the_labelled_tables(tmp_path):
    docs = tmp_path / "docs"
    write(docs / "guide.md", MARKDOWN.encode("utf-8"))
    write(docs / "moons.json", json.dumps(SQUAD_V2))
    rows = [
        {"_id": "g1", "text": "How long is the timeout?", "evidence": [
            {"doc_id": "guide.md", "text": "timeout** to [30 seconds]", "start": 20, "end": 45}
        ]},
        {"_id": "g2", "text": "Where is the manual?", "evidence": [
            {"doc_id": "guide.md", "text": "see the manual"}
        ]},
    ]  # fmt: skip
    write(docs / "labelled.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    (tmp_path / "params.yaml").write_text("ingest:\n  path: docs\n", encoding="utf-8")
    process = run_stage("ingest", tmp_path)
    assert process.returncode == 0, process.stderr
    lines = process.stderr.splitlines()
    assert any("left out g2" in line and '"see the manual"' in line for line in lines)
    assert (
        "labelled: 2 questions, 2 evidence spans from labelled.jsonl and SQuAD files; left out "
        "1 questions with an excerpt not found; left out 1 unanswerable (SQuAD v2.0)" in lines
    )
    documents = pd.read_parquet(tmp_path / "data/documents.parquet").set_index("doc_id")
    assert documents.index.tolist() == ["guide.md", "moons.json#Moons"]  # not labelled.jsonl
    questions = pd.read_parquet(tmp_path / "data/labelled.parquet")
    evidence = pd.read_parquet(tmp_path / "data/labelled_evidence.parquet")
    assert questions.to_dict("records") == [
        {"qid": "g1", "text": "How long is the timeout?"},
        {"qid": "m1", "text": "What does Titan orbit?"},
    ]
    texts = [
        documents.loc[row.doc_id, "text"][row.start : row.end] for row in evidence.itertuples()
    ]
    assert texts == ["timeout** to [30 seconds]", "Saturn"]

    (tmp_path / "params.yaml").write_text("ingest:\n  path: docs\n  labelled: false\n")
    process = run_stage("ingest", tmp_path)
    assert "no labelled questions (ingest.labelled: false)" in process.stderr.splitlines()
    assert pd.read_parquet(tmp_path / "data/labelled.parquet").empty
    evidence = pd.read_parquet(tmp_path / "data/labelled_evidence.parquet")
    assert evidence.empty and list(evidence.columns) == ["qid", "doc_id", "start", "end"]


def test_a_malformed_labelled_file_is_one_line(tmp_path):
    write(tmp_path / "docs" / "a.md", "Some text.")
    write(tmp_path / "docs" / "labelled.jsonl", '{"_id": "q1", "text": "no evidence"}\n')
    (tmp_path / "params.yaml").write_text("ingest:\n  path: docs\n", encoding="utf-8")
    process = run_stage("ingest", tmp_path)
    assert process.returncode == 1 and "Traceback" not in process.stderr
    error = process.stderr.strip().splitlines()[-1]
    assert error.startswith("error: docs/labelled.jsonl:1: expected") and "ingest.labelled" in error
