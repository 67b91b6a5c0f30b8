"""The prompt and the checks on LLM answers: pure functions, no server."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goldenset.generation.prompt import (
    FEW_SHOT,
    PROMPT_SHA,
    SYSTEM,
    build_messages,
)
from goldenset.generation.validation import (
    InvalidAnswer,
    check_question,
    locate_evidence,
    parse_answer_json,
    validate_answer,
)

PASSAGE = (
    "The staging cluster is rebuilt from scratch every Sunday night.\n"
    "Data written there during the week is lost, so long-running experiments belong on the\n"
    "research cluster instead.  Access to the research cluster is granted by the platform team."
)


def answer(question: str, evidence: str) -> str:
    return json.dumps({"question": question, "evidence": evidence})


def reason_of(text: str, passage: str = PASSAGE, **kwargs) -> str:
    with pytest.raises(InvalidAnswer) as caught:
        validate_answer(text, passage, **kwargs)
    return caught.value.code


def test_few_shot_examples_pass_our_own_checks():
    # the demonstrations must be answers we would accept, or they teach the wrong thing
    for passage, question, evidence in FEW_SHOT:
        checked = validate_answer(answer(question, evidence), passage)
        assert checked.question == question
        assert passage[checked.evidence_start : checked.evidence_end] == evidence


def test_messages_are_few_shot_turns_then_the_passage():
    messages = build_messages("A passage.")
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant"] * len(FEW_SHOT) + ["user"]
    assert messages[-1]["content"] == "<passage>\nA passage.\n</passage>"
    assert "JSON" in SYSTEM and "one" in SYSTEM.lower()


def test_retry_turns_tell_the_model_what_was_wrong():
    messages = build_messages("A passage.", asked=["Who?"], corrections=[("", "it was empty")])
    assert "Already asked" in messages[-3]["content"] and "- Who?" in messages[-3]["content"]
    assert messages[-2] == {"role": "assistant", "content": "(empty reply)"}
    assert messages[-1]["role"] == "user" and "it was empty" in messages[-1]["content"]


def test_prompt_sha_is_a_stable_short_hash():
    assert len(PROMPT_SHA) == 16 and int(PROMPT_SHA, 16) >= 0


def test_a_good_answer_gives_offsets_in_the_passage():
    evidence = "The staging cluster is rebuilt from scratch every Sunday night."
    checked = validate_answer(
        answer("When does the staging environment get wiped?", evidence), PASSAGE
    )
    assert checked.question == "When does the staging environment get wiped?"
    assert PASSAGE[checked.evidence_start : checked.evidence_end] == evidence


def test_evidence_is_found_despite_rewrapped_whitespace_and_quotes():
    evidence = (
        "Data written there during the week is lost, so long-running experiments belong on "
        "the research cluster instead."
    )
    start, end = locate_evidence(evidence, PASSAGE)
    assert PASSAGE[start:end].split() == evidence.split()
    assert "\n" in PASSAGE[start:end]
    quoted = "It’s the “main” one."
    assert locate_evidence('It\'s the "main" one.', "Intro. " + quoted) == (7, 7 + len(quoted))


@given(
    words=st.lists(st.from_regex(r"[a-h]{1,5}[.,]?", fullmatch=True), min_size=8, max_size=30),
    spaces=st.lists(st.sampled_from([" ", "  ", "\n", " \n\t"]), min_size=30, max_size=30),
    first=st.integers(0, 4),
    length=st.integers(3, 6),
)
def test_located_evidence_always_matches_the_passage_text(words, spaces, first, length):
    passage = "".join(word + spaces[i] for i, word in enumerate(words)).strip()
    evidence = " ".join(words[first : first + length])
    start, end = locate_evidence(evidence, passage)
    assert passage[start:end].split() == evidence.split()


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("I could not think of a question.", "not_json"),
        ('{"question": "What is it?", "evidence": ', "not_json"),
        ('["What is it?"]', "not_json"),
        ('{"question": "Why?"}', "missing_field"),
        (
            answer("When is staging rebuilt?", "x") + "\n" + answer("Who grants access?", "y"),
            "several_answers",
        ),
        (
            '{"question": ["When is staging rebuilt?", "Who grants access?"], "evidence": "x"}',
            "several_questions",
        ),
        (answer("When is staging rebuilt? Who grants access?", "x"), "several_questions"),
        (answer("1. When is staging rebuilt?\n2. Who grants access?", "x"), "several_questions"),
        (answer("When is staging rebuilt? Explain.", "x"), "several_questions"),
        (answer("Here is a question: when is staging rebuilt?", "x"), "preamble"),
        (answer("Question: when is staging rebuilt?", "x"), "preamble"),
        (answer("Staging is rebuilt on Sundays.", "x"), "not_a_question"),
        (answer("Staging?", "x"), "too_short"),
        (answer("Why " + "really " * 45 + "?", "x"), "too_long"),
        (answer("What does the passage say about staging rebuilds?", "x"), "refers_to_passage"),
        (
            answer("What if the staging cluster is rebuilt from scratch every Sunday night?", "x"),
            "copies_passage",
        ),
        (
            answer(
                "When is the staging environment wiped?", "Staging is wiped weekly by the team."
            ),
            "evidence_not_found",
        ),
        (answer("When is the staging environment wiped?", "Sunday night."), "evidence_too_short"),
    ],
)
def test_invalid_answers_are_named(text, code):
    assert reason_of(text) == code


def test_truncated_answer_is_never_trusted():
    evidence = "The staging cluster is rebuilt from scratch every Sunday night."
    good = answer("When does the staging environment get wiped?", evidence)
    assert reason_of(good, truncated=True) == "truncated"


def test_a_repeat_of_an_earlier_question_is_invalid():
    evidence = "Access to the research cluster is granted by the platform team."
    text = answer("Who gives access to the research machines?", evidence)
    assert (
        reason_of(text, asked=["who gives access to the research machines?"]) == "repeats_question"
    )


def test_code_fences_and_a_lead_in_line_are_tolerated():
    evidence = "Access to the research cluster is granted by the platform team."
    fenced = (
        "Sure:\n```json\n"
        + answer("Who gives access to the research machines?", evidence)
        + "\n```"
    )
    assert validate_answer(fenced, PASSAGE).question == "Who gives access to the research machines?"
    assert parse_answer_json('Answer: {"question": "A b c d?", "evidence": "e"}')["evidence"] == "e"


def test_seven_shared_words_are_fine_eight_are_a_copy():
    passage = "one two three four five six seven eight nine ten."
    assert check_question("Why one two three four five six seven here?", passage)
    with pytest.raises(InvalidAnswer):
        check_question("Why one two three four five six seven eight?", passage)


def test_invalid_answer_detail_is_readable():
    with pytest.raises(InvalidAnswer) as caught:
        validate_answer("nope", PASSAGE)
    assert "JSON" in caught.value.detail and str(caught.value).startswith("not_json")


def test_a_near_copy_of_a_passage_sentence_is_snapped_to_it():
    passage = (
        "The Hippo–YAP pathway is an emerging signalling cascade involved in the regulation "
        "of stem cell activity and organ size. It is conserved from flies to mammals."
    )
    retyped = (
        "The Hippo-YAP pathway is an emerging signaling cascade involved in regulation of "
        "stem cell activity and organ size."
    )
    start, end = locate_evidence(retyped, passage)
    assert passage[start:end] == passage.split(". ")[0] + "."


def test_a_sentence_from_elsewhere_is_still_not_found():
    passage = "The Hippo pathway controls organ size. It is conserved from flies to mammals."
    with pytest.raises(InvalidAnswer) as error:
        locate_evidence("Backups run every night at 02:00 UTC and are kept for 35 days.", passage)
    assert error.value.code == "evidence_not_found"
