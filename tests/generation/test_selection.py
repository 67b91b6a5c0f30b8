"""Selection at the level of the set (judge/selection.py): over-asking, the judge's best kept,
spread over documents, and the judge's readings cached."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.judge.selection import (
    PROBABILITIES_FILE,
    asked_for,
    cached_pass_probabilities,
    keep_best,
)


def test_over_asking_fills_max_questions():
    assert asked_for(180, 1.0) == 180
    assert asked_for(180, 0.5) == 360
    assert asked_for(100, 0.75) == 134


def test_the_best_are_kept_in_their_order():
    scores = np.array([0.1, 0.9, 0.5, 0.7, 0.3, 0.8])
    assert keep_best(list("abcdef"), scores, 3, 0.5) == [1, 3, 5]


def test_a_document_keeps_at_most_its_share():
    # document a's questions are all better, but it keeps only half of its four
    doc_ids = ["a", "a", "a", "a", "b", "b", "c", "c"]
    scores = np.array([0.9, 0.95, 0.85, 0.8, 0.2, 0.3, 0.1, 0.4])
    assert keep_best(doc_ids, scores, 4, 0.5) == [0, 1, 5, 7]


def test_ties_go_to_the_earlier_row():
    assert keep_best(list("abcd"), np.array([0.5, 0.5, 0.5, 0.5]), 2, 0.5) == [0, 1]


def _rows(n):
    return [
        {"question": f"Does gene {i} matter?", "evidence": f"Gene {i} matters.", "doc_id": str(i)}
        for i in range(n)
    ]


def test_the_judge_reads_each_row_once(tmp_path):
    calls = []

    def judge(frame: pd.DataFrame) -> np.ndarray:
        calls.append(len(frame))
        return np.linspace(0.1, 0.9, len(frame))

    first = cached_pass_probabilities(_rows(4), tmp_path, "w1", judge)  # no file: empty
    again = cached_pass_probabilities(_rows(6), tmp_path, "w1", judge)
    assert calls == [4, 2]  # only the two new rows
    assert np.allclose(again[:4], first)
    assert (tmp_path / PROBABILITIES_FILE).is_file()
    cached_pass_probabilities(_rows(6), tmp_path, "w2", judge)  # refitted weights read anew
    assert calls == [4, 2, 6]


def test_a_damaged_cache_of_the_judges_readings_is_an_error_not_a_new_start(tmp_path):
    (tmp_path / PROBABILITIES_FILE).write_bytes(b"\xff not UTF-8")

    def judge(frame: pd.DataFrame) -> np.ndarray:
        raise AssertionError("the judge is not asked while the cache is damaged")

    with pytest.raises(GoldensetError) as caught:
        cached_pass_probabilities(_rows(2), tmp_path, "w1", judge)
    assert str(caught.value).startswith(f"{tmp_path / PROBABILITIES_FILE} is a damaged cache")
    assert "delete it, and the next run asks for the judge's readings again" in str(caught.value)
    assert (tmp_path / PROBABILITIES_FILE).read_bytes() == b"\xff not UTF-8"  # not overwritten


def test_generate_selects_with_the_shipped_judge_unless_a_refitted_one_is_named(
    tmp_path, monkeypatch
):
    """generate.judge: a copy of review/judge.json in examples/ (a folder generate depends on)."""
    import json
    from dataclasses import replace

    import pytest

    from goldenset.core.errors import GoldensetError
    from goldenset.judge.model import WEIGHTS, judge_json, load_judge
    from goldenset.judge.selection import weights_digest
    from goldenset.stages.generate import selecting_judge

    monkeypatch.chdir(tmp_path)
    assert selecting_judge(None) == WEIGHTS
    (tmp_path / "examples").mkdir()
    shipped = load_judge()
    moved = replace(shipped.models["pass"], intercept=shipped.models["pass"].intercept + 0.5)
    refitted = replace(shipped, models={**shipped.models, "pass": moved})
    (tmp_path / "examples/judge.json").write_text(judge_json(refitted))
    assert selecting_judge("examples/judge.json") == Path("examples/judge.json")
    assert weights_digest(Path("examples/judge.json")) != weights_digest()  # read again

    (tmp_path / "review").mkdir()
    (tmp_path / "review/judge.json").write_text(judge_json(refitted))
    with pytest.raises(GoldensetError, match="outside examples/"):
        selecting_judge("review/judge.json")
    (tmp_path / "examples/verdicts.jsonl").write_text(json.dumps({"verdict": "pass"}) + "\n")
    with pytest.raises(GoldensetError, match="is not a judge file"):
        selecting_judge("examples/verdicts.jsonl")
