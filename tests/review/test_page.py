"""The review page in headless Chromium: verdicts from the keyboard reach the file, undo, two
tabs, a malformed file, the evidence marked on the right characters, labels re-entered."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from goldenset.corpus.ingest import ingest
from tests.conftest import ROOT
from tests.review.conftest import (
    current_qid,
    open_page,
    served,
    verdicts_in,
    wait_for,
    write_project,
)

pytestmark = pytest.mark.slow
KEYS = {"pass": "p", "a": "a", "b": "b", "both": "x", "nonsense": "n"}
# a document whose evidence follows characters JavaScript counts as two (emoji) or that are
# composed: an offset applied in the browser would shift the mark
TEXT = "Ünïcödé 🧬🧪 header — naïve. La protéine p53 répare l’ADN après 💥 irradiation. Fin 🎉."
EVIDENCE = "La protéine p53 répare l’ADN après 💥 irradiation."


def toy_questions(n: int) -> tuple[list[dict], list[dict]]:
    start = TEXT.index(EVIDENCE)
    questions = [
        {
            "qid": f"gs-{i:03d}",
            "question": f"Que répare p53 ({i})?",
            "doc_id": f"d{i % 3}",
            "evidence_start": start,
            "evidence_end": start + len(EVIDENCE),
            "evidence": EVIDENCE,
            "form": "question",
        }
        for i in range(n)
    ]
    documents = [{"doc_id": f"d{i}", "title": f"Doc {i} ✓", "text": TEXT} for i in range(3)]
    return questions, documents


@pytest.fixture
def project(tmp_path) -> Path:
    return write_project(tmp_path / "project", *toy_questions(12))


def test_one_key_a_verdict_reaches_the_file(browser, project):
    with served(project) as url:
        page = open_page(browser, url)
        pressed = {}
        for kind in ["pass", "a", "b", "both", "nonsense"]:
            pressed[current_qid(page)] = kind
            page.keyboard.press(KEYS[kind])
        wait_for(lambda: len(verdicts_in(project)) == 5)
        found = verdicts_in(project)
        assert {qid: row["failed"] or "pass" for qid, row in found.items()} == pressed
        row = next(iter(found.values()))
        assert (row["labeller"], row["drawn"], row["doc_id"]) == ("tester", "random", row["doc_id"])
        # drawn from the answer to the last verdict sent, whatever order the answers came in
        estimate = "random sample: 5 checked: 1 pass, 20% [4%, 62%]"
        page.wait_for_function(
            f"() => document.getElementById('estimate').textContent === {estimate!r}"
        )
        assert page.errors == []


def test_a_note_goes_with_the_verdict_and_keys_typed_in_it_are_not_verdicts(browser, project):
    with served(project) as url:
        page = open_page(browser, url)
        qid = current_qid(page)
        page.keyboard.press("/")
        page.keyboard.type("asks about a premise")  # holds a, p, b, s, u: none is a verdict
        page.keyboard.press("Enter")
        assert verdicts_in(project) == {}
        page.keyboard.press("a")
        wait_for(lambda: qid in verdicts_in(project))
        assert verdicts_in(project)[qid]["reason"] == "asks about a premise"


def pass_then_fail(page, project) -> tuple[str, str]:
    """The first question on screen passed, the next failed (b), both in the file."""
    first = current_qid(page)
    page.keyboard.press("p")
    second = current_qid(page, moved_from=first)
    page.keyboard.press("b")
    wait_for(lambda: len(verdicts_in(project)) == 2)
    return first, second


def test_undo_takes_the_last_verdict_back_and_returns_to_it(browser, project):
    with served(project) as url:
        page = open_page(browser, url)
        first, second = pass_then_fail(page, project)
        page.keyboard.press("u")
        wait_for(lambda: set(verdicts_in(project)) == {first})
        page.wait_for_selector(f".row.current[data-qid='{second}']")
        page.keyboard.press("u")
        wait_for(lambda: verdicts_in(project) == {})
        page.wait_for_selector(f".row.current[data-qid='{first}']")
        current_qid(page)
        page.keyboard.press("s")  # skip: no verdict
        current_qid(page, moved_from=first)
        assert verdicts_in(project) == {}


def test_after_a_reload_a_verdict_changes_where_it_is_given_and_undo_goes_through_the_file(
    browser, project
):
    with served(project) as url:
        page = open_page(browser, url)
        first, second = pass_then_fail(page, project)
        page.close()
        page = open_page(browser, url)  # a reload: the page's memory is gone, the file is not
        page.locator(f".row[data-qid='{first}']").click()
        assert current_qid(page) == first
        page.keyboard.press("a")  # a changed verdict: the position stays
        wait_for(lambda: verdicts_in(project)[first]["failed"] == "a")
        assert current_qid(page) == first
        page.keyboard.press("u")  # undo: the verdict before the change
        wait_for(lambda: verdicts_in(project)[first]["verdict"] == "pass")
        page.close()
        page = open_page(browser, url)
        page.keyboard.press("u")  # a verdict given before this load: undone, and shown
        wait_for(lambda: set(verdicts_in(project)) == {first})
        page.wait_for_selector(f".row.current[data-qid='{second}']")
        page.locator(f".row[data-qid='{second}'] .mark:not(.pass):not(.fail)").wait_for()


def test_a_second_reviewer_sees_the_first_ones_verdicts_and_their_agreement_unless_blind(
    browser, project
):
    with served(project, labeller="ann") as url:
        page = open_page(browser, url)
        judged = []
        for key in "ppb":
            judged.append(current_qid(page))
            page.keyboard.press(key)
        wait_for(lambda: len(verdicts_in(project, "ann")) == 3)
    with served(project, labeller="bob", blind=True) as url:
        page = open_page(browser, url)
        assert current_qid(page) == judged[0]  # ann's verdicts are not bob's
        assert "ann" not in page.locator("#meta").inner_text()
        for key in "pbb":
            page.keyboard.press(key)
        wait_for(lambda: len(verdicts_in(project, "bob")) == 3)
        assert page.locator("#agreement").inner_text() == ""
    assert verdicts_in(project, "ann")[judged[1]]["verdict"] == "pass"  # both stand
    with served(project, labeller="bob") as url:
        page = open_page(browser, url)
        agreement = (
            "ann and bob agree on 2 of the 3 questions both judged (67%), Cohen's kappa 0.40"
        )
        wait_for(lambda: page.locator("#agreement").inner_text() == agreement)
        page.locator(f".row[data-qid='{judged[1]}']").click()
        current_qid(page)
        assert "ann: pass" in page.locator("#meta").inner_text()


def test_the_page_says_when_the_golden_set_changed_under_it(browser, project):
    with served(project) as url:
        page = open_page(browser, url)
        golden = project / "data/goldenset.jsonl"
        golden.write_text(golden.read_text().splitlines(keepends=True)[0])
        page.evaluate("window.dispatchEvent(new Event('focus'))")
        page.locator("#problems.shown").wait_for()
        assert "reload the page" in page.locator("#problems").inner_text()
        page.reload()  # the server has read the new set
        page.wait_for_selector("body[data-ready=true]")
        assert page.locator(".row").count() == 1
        assert not page.locator("#problems.shown").count()


def test_two_tabs_add_to_each_others_verdicts(browser, project):
    with served(project) as url:
        one, two = open_page(browser, url), open_page(browser, url)
        two.keyboard.press("j")  # the second tab works on the next question
        first, second = current_qid(one), current_qid(two)
        one.keyboard.press("p")
        two.keyboard.press("a")
        wait_for(lambda: len(verdicts_in(project)) == 2)
        one.keyboard.press("j")  # tab one moves past the question tab two judged
        one.keyboard.press("b")
        wait_for(lambda: len(verdicts_in(project)) == 3)
        found = verdicts_in(project)
        assert found[first]["verdict"] == "pass" and found[second]["failed"] == "a"
        # each answer carries the file's verdicts: tab one now marks tab two's
        one.locator(f".row[data-qid='{second}'] .mark.fail").wait_for()


def test_a_malformed_file_is_named_by_line_and_kept(browser, project):
    path = project / "review/verdicts.jsonl"
    path.parent.mkdir()
    path.write_text('{"qid": "gs-900", "verdict": "pass", "failed": null}\n{"qid": oops}\n')
    with served(project) as url:
        page = open_page(browser, url)
        assert page.locator("#problems").inner_text() == f"{path}:2: not JSON (Expecting value)"
        qid = current_qid(page)
        page.keyboard.press("n")
        wait_for(lambda: qid in verdicts_in(project))
        assert path.read_text().splitlines()[:2] == [
            '{"qid": "gs-900", "verdict": "pass", "failed": null}',
            '{"qid": oops}',
        ]


def test_the_evidence_is_marked_on_its_own_characters(browser, project):
    with served(project) as url:
        page = open_page(browser, url)
        assert page.locator("#review-view mark").inner_text() == EVIDENCE
        document = page.locator("#review-view").inner_text()
        assert document == TEXT  # the whole short document, nothing cut
        assert page.locator("#tab-misses").is_disabled()  # no results yet: no misses view


@cache
def sample_documents() -> dict[str, dict]:
    found = ingest(ROOT / "data/docs", max_file_mb=100).documents
    return {
        doc.doc_id: {"doc_id": doc.doc_id, "title": doc.title, "text": doc.text} for doc in found
    }


def test_labels_reentered_through_the_page_reproduce_themselves(browser, tmp_path):
    """The page changes no judgement: 30 labelled questions of the shipped set, each verdict
    typed as its label says, land in the file as the labels are."""
    labels = [json.loads(line) for line in (ROOT / "labels/steered_set.jsonl").open()][:30]
    documents = sample_documents()
    questions = []
    for label in labels:
        text = documents[label["doc_id"]]["text"]
        start = text.index(label["evidence"])
        questions.append(
            {
                **{name: label[name] for name in ("qid", "question", "doc_id", "evidence", "form")},
                "evidence_start": start,
                "evidence_end": start + len(label["evidence"]),
            }
        )
    shown = [documents[doc] for doc in {label["doc_id"] for label in labels}]
    project = write_project(tmp_path / "labelled", questions, shown)
    by_qid = {label["qid"]: label for label in labels}
    with served(project, sample=30) as url:
        page = open_page(browser, url)
        for _ in labels:
            qid = current_qid(page)
            assert page.locator("#review-view mark").inner_text() == by_qid[qid]["evidence"]
            page.keyboard.press(KEYS[by_qid[qid]["failed"] or "pass"])
        wait_for(lambda: len(verdicts_in(project)) == 30)
    entered = verdicts_in(project)
    for qid, label in by_qid.items():
        assert (entered[qid]["verdict"], entered[qid]["failed"]) == (
            label["verdict"],
            label["failed"],
        )


def test_a_verdict_follows_its_question_and_a_stale_one_is_listed_until_discarded(browser, project):
    """A writer change: a verdict under an old qid whose question reads the same marks the
    question written now; one whose question is no longer written is listed as stale, and the
    person can discard it (theirs only); the carried one and another person's lines stay."""
    from goldenset.review.verdicts import verdict_row

    questions, _ = toy_questions(12)
    same = {**questions[0], "qid": "gs-old", "question": "  Que répare   p53 (0)? "}
    gone = {**questions[1], "qid": "gs-gone", "question": "Une question d'avant?"}
    lines = [
        verdict_row(same, "b", "", "tester", "random"),
        verdict_row(gone, "a", "", "tester", "random"),
        verdict_row(gone, "pass", "", "someone else", "random"),
    ]
    path = project / "review/verdicts.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    with served(project) as url:
        page = open_page(browser, url)
        page.locator(".row[data-qid='gs-000'] .mark.fail").wait_for()
        assert page.locator("#stale-count").inner_text().startswith("1 of your verdicts are stale")
        assert page.locator("#stale-list li").all_inner_texts() == ["a: Une question d'avant?"]
        page.locator("#discard").click()
        page.locator("#stale").wait_for(state="hidden")
        assert page.errors == []
    kept = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(row["qid"], row["labeller"]) for row in kept] == [
        ("gs-old", "tester"),
        ("gs-gone", "someone else"),
    ]


def test_a_fix_is_typed_its_evidence_moved_its_warning_confirmed_and_esc_keeps_nothing(
    browser, project
):
    fixed = "Que répare la protéine p53 après une irradiation?"  # answered: no warning
    with served(project) as url:
        page = open_page(browser, url)
        first = current_qid(page)
        shown = page.locator("#question").inner_text()
        page.keyboard.press("e")
        page.wait_for_selector("body[data-fixing]")
        assert page.input_value("#fix-text") == shown  # prefilled
        page.fill("#fix-text", fixed)
        page.keyboard.press("Enter")
        wait_for(lambda: first in verdicts_in(project))
        second = current_qid(page, moved_from=first)  # a saved fix moves on
        page.keyboard.press("e")
        page.fill("#fix-text", "p53?")
        page.keyboard.press("Escape")  # cancelled: nothing recorded
        page.wait_for_selector("body:not([data-fixing])")
        page.keyboard.press("e")
        page.fill("#fix-text", "La fin?")  # too short: the writer would reject it
        page.keyboard.press("Alt+ArrowDown")  # the evidence moves to the next sentence
        page.select_option("#fix-failed", "both")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.getElementById('fix-warnings').textContent")
        assert second not in verdicts_in(project)  # warned, not yet written
        page.keyboard.press("Enter")  # saved anyway
        wait_for(lambda: second in verdicts_in(project))
        page.wait_for_function(  # the writer's share counts fixes as fails; the kept count not
            "() => document.getElementById('estimate').textContent === "
            "'random sample: 2 checked: 0 pass, 0% [0%, 66%] · kept 2, 2 of them fixed'"
        )
        assert page.errors == []
    verdicts = verdicts_in(project)
    assert verdicts[first]["fix"]["question"] == fixed
    assert verdicts[first]["fix"]["evidence"] == EVIDENCE  # not moved
    assert (verdicts[first]["verdict"], verdicts[first]["failed"]) == ("fail", "a")
    assert verdicts[first]["seconds"] > 0
    assert verdicts[second]["failed"] == "both"
    assert verdicts[second]["fix"]["evidence"] == "Fin 🎉."
    assert len(verdicts) == 2


def test_a_sentence_clicked_while_fixing_becomes_the_evidence(browser, project):
    with served(project) as url:
        page = open_page(browser, url)
        qid = current_qid(page)
        page.keyboard.press("e")
        page.click(".sentence >> text=naïve")
        assert page.locator(".sentence.evidence").inner_text() == "Ünïcödé 🧬🧪 header — naïve."
        page.fill("#fix-text", "Que dit l'en-tête du document naïf?")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.getElementById('fix-warnings').textContent")
        page.keyboard.press("Enter")
        wait_for(lambda: qid in verdicts_in(project))
        # the list marks the row once the server has answered: after the file is written
        mark = f".row[data-qid='{qid}'] .mark"
        page.wait_for_function("m => document.querySelector(m).textContent !== '·'", arg=mark)
        assert page.locator(mark).inner_text() == "✎ fixed"
        assert page.errors == []
    assert verdicts_in(project)[qid]["fix"]["evidence"] == "Ünïcödé 🧬🧪 header — naïve."
