"""The file conventions: one JSON Lines reader for every JSONL file the project reads, one reader
for the JSON caches, atomic writes with the mode a plain write would give."""

from __future__ import annotations

import json
import os
import stat

import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_json_cache, read_jsonl, write_atomically, write_json
from goldenset.corpus.beir import document_text


def test_read_jsonl_skips_blank_lines_and_a_byte_order_mark(tmp_path):
    path = tmp_path / "queries.jsonl"
    path.write_text('\ufeff{"_id": "q1"}\n\n  \n{"_id": "q2"}\n', encoding="utf-8")
    assert read_jsonl(path) == [{"_id": "q1"}, {"_id": "q2"}]
    assert read_jsonl(path.read_bytes()) == read_jsonl(path)


def test_read_jsonl_gives_the_line_number_to_parse_and_to_bad_line(tmp_path):
    path = tmp_path / "labelled.jsonl"
    path.write_text('{"text": "a"}\n\n{"text": "b"}\nnot json\n', encoding="utf-8")
    with pytest.raises(GoldensetError, match=r"^line 4 is bad$"):
        read_jsonl(path, lambda record, number: record["text"], lambda n: f"line {n} is bad")
    path.write_text('{"text": "a"}\n\n{"text": "b"}\n{"other": 1}\n', encoding="utf-8")
    with pytest.raises(GoldensetError, match=r"^line 4 is bad$"):
        read_jsonl(path, lambda record, number: record["text"], lambda n: f"line {n} is bad")
    with pytest.raises(KeyError):  # without bad_line, parse's own error
        read_jsonl(path, lambda record, number: record["text"])
    lines = read_jsonl(path.read_bytes()[:-13], lambda record, number: (number, record["text"]))
    assert lines == [(1, "a"), (3, "b")]


def test_read_jsonl_lets_parse_raise_its_own_goldenset_error(tmp_path):
    path = tmp_path / "labelled.jsonl"
    path.write_text(json.dumps({"evidence": []}) + "\n", encoding="utf-8")

    def parse(record, number):
        raise GoldensetError(f"line {number}: no evidence")

    with pytest.raises(GoldensetError, match="^line 1: no evidence$"):
        read_jsonl(path, parse, lambda n: "not this one")


def test_a_json_cache_without_a_file_is_empty_and_one_with_a_file_is_what_it_holds(tmp_path):
    path = tmp_path / "cache.json"
    assert read_json_cache(path, "the answers") == {}
    write_json(path, {"k": [1.0, 2.0]})
    assert read_json_cache(path, "the answers") == {"k": [1.0, 2.0]}


@pytest.mark.parametrize(
    "content",
    [b'{"k": 1', b"\xff\xfe{}", b"[1, 2]", b"null", b""],
    ids=["cut short", "not UTF-8", "a list", "null", "empty"],
)
def test_a_damaged_json_cache_is_one_line_naming_it_and_saying_to_delete_it(tmp_path, content):
    path = tmp_path / "cache.json"
    path.write_bytes(content)
    with pytest.raises(GoldensetError) as caught:
        read_json_cache(path, "the answers")
    assert str(caught.value) == (
        f"{path} is a damaged cache (not a JSON object): delete it, "
        "and the next run asks for the answers again"
    )
    assert path.read_bytes() == content  # left for the user to see, not reset


def test_write_atomically_gives_the_mode_a_plain_write_gives(tmp_path):
    plain, atomic = tmp_path / "plain.txt", tmp_path / "deep" / "atomic.txt"
    plain.write_text("x", encoding="utf-8")
    write_atomically(atomic, "x")
    assert atomic.read_text(encoding="utf-8") == "x"
    assert stat.S_IMODE(os.stat(atomic).st_mode) == stat.S_IMODE(os.stat(plain).st_mode)
    assert [p.name for p in atomic.parent.iterdir()] == ["atomic.txt"]  # no temporary left


@pytest.mark.parametrize(
    ("title", "text", "expected"),
    [
        ("Statins", "lower LDL.", "Statins lower LDL."),
        ("", " lower LDL. ", "lower LDL."),
        ("  ", "lower LDL.", "lower LDL."),
        ("Statins", "", "Statins"),
    ],
)
def test_document_text_is_title_space_text_stripped(title, text, expected):
    assert document_text(title, text) == expected
