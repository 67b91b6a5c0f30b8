"""The decoder that writes what validation accepts (generation/steering.py), on a toy model.

The toy model's vocabulary is words; its scores are a fixed preference per step, so each test
states what the model alone would write and checks what the steered loop writes instead.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from goldenset.core.echo import WindowFrequency, WindowIndex
from goldenset.generation.prompt import CLAIM, KEYWORDS, QUESTION
from goldenset.generation.steering import (
    MAX_REWINDS,
    Sampling,
    Steer,
    broken_rule,
    decode,
    is_whole,
    shape_allows,
    steer_for,
)
from goldenset.generation.validation import (
    _AUTHORS,
    _PREAMBLE,
    _REFERS_TO_SOURCE,
    _THIS,
    InvalidAnswer,
    Specificity,
    check_question,
)

END = "<end>"


class ToyModel:
    """A steering.TokenModel whose tokens are pieces of text and whose scores at each step are
    `prefer` (a list of pieces, best first, per step; the last list repeats)."""

    def __init__(self, pieces: list[str], prefer: list[list[str]]) -> None:
        self.pieces = [END, *pieces]
        self.ids = {piece: i for i, piece in enumerate(self.pieces)}
        self.prefer = prefer
        self.written: list[int] = []
        self.advanced = 0

    def logits(self) -> np.ndarray:
        order = self.prefer[min(len(self.written), len(self.prefer) - 1)]
        scores = np.full(len(self.pieces), -10.0, dtype=np.float32)
        for rank, piece in enumerate(order):
            scores[self.ids[piece]] = 10.0 - rank
        return scores

    def advance(self, token: int) -> None:
        self.written.append(token)
        self.advanced += 1

    def rewind(self, generated: int) -> None:
        del self.written[generated:]

    def text(self, tokens) -> str:
        return "".join(self.pieces[t] for t in tokens if t)

    def is_end(self, token: int) -> bool:
        return token == 0

    def word_tokens(self, word: str):
        """Each spelling of `word` the pieces can write, the longest piece first at each point."""
        spellings = set()
        for form in (f" {word}", f" {word.capitalize()}", word, word.capitalize()):
            written: list[int] = []
            while len(rest := form[len(self.text(written)) :]) > 0:
                fits = [i for i, p in enumerate(self.pieces) if i and rest.startswith(p)]
                if not fits:
                    break
                written.append(max(fits, key=lambda i: len(self.pieces[i])))
            else:
                spellings.add(tuple(written))
        return sorted(spellings)


GREEDY = Sampling()


FREE = Steer(QUESTION)  # the question's rules, no echo penalty


def _decode(pieces, prefer, steer=FREE, sampling=GREEDY, max_tokens=30):
    model = ToyModel(pieces, prefer)
    return decode(model, steer, sampling, max_tokens)


def test_without_a_form_it_writes_what_the_model_prefers():
    decoded = _decode(
        ["Which", " this", " gene", "?", "\n"],
        [["Which"], [" this"], [" gene"], ["?"], ["\n"]],
        steer=Steer(None),
    )
    assert decoded.text == "Which this gene?"
    assert decoded.steered == 0 and not decoded.truncated


def test_a_word_pointing_into_the_passage_is_taken_back():
    pieces = ["What", " does", " this", " the", " BRCA1", " protein", " do", "?"]
    prefer = [["What"], [" does"], [" this", " the"], [" protein", " BRCA1"], [" do"], ["?"]]
    decoded = _decode(pieces, prefer)
    # the model alone writes "What does this protein do?": 'this' points into the passage
    assert decoded.text == "What does the protein do?"
    assert decoded.rewinds == 1
    check_question(decoded.text, "BRCA1 is a protein.")  # validation accepts it


def test_the_passage_is_never_named():
    pieces = ["What", " did", " the", " passage", " text", " trial", " find", "?"]
    prefer = [["What"], [" did"], [" the"], [" passage", " text", " trial"], [" find"], ["?"]]
    decoded = _decode(pieces, prefer)
    assert decoded.text == "What did the trial find?"
    assert decoded.rewinds == 2  # passage, then text


def test_a_question_ends_only_when_whole():
    pieces = ["Does", " aspirin", "?", " prevent", " strokes"]
    # the model wants to stop after two words, then to end without a question mark
    prefer = [
        ["Does"],
        [" aspirin", "?"],
        ["?", END, " prevent"],
        [END, " strokes"],
        [END, "?"],
        [END],
    ]
    decoded = _decode(pieces, prefer)
    assert decoded.text == "Does aspirin prevent strokes?"
    assert is_whole(decoded.text, QUESTION)
    assert decoded.steered >= 2


def test_a_preamble_cannot_start_the_answer():
    pieces = ["Sure", ":", "Is", " smoking", " linked", " to", " cancer", "?"]
    prefer = [["Sure", "Is"], [" smoking", ":"], [" linked"], [" to"], [" cancer"], ["?"]]
    decoded = _decode(pieces, prefer)
    assert decoded.text == "Is smoking linked to cancer?"


def test_claims_and_keywords_have_no_question_mark():
    pieces = ["Aspirin", " prevents", " strokes", " in", " adults", "?", "."]
    prefer = [["Aspirin"], [" prevents"], [" strokes"], [" in"], [" adults"], ["?", "."], [END]]
    claim = _decode(pieces, prefer, steer=Steer(CLAIM))
    assert claim.text == "Aspirin prevents strokes in adults."
    assert not shape_allows("aspirin strokes?", KEYWORDS)


def test_a_banned_token_is_never_chosen_when_sampled():
    pieces = ["Is", " this", " the", " gene", " active", "?"]
    prefer = [["Is"], [" this", " the"], [" gene"], [" active"], ["?"]]
    for seed in range(40):
        decoded = _decode(pieces, prefer, sampling=Sampling(temperature=5.0, top_k=6, seed=seed))
        assert " this " not in decoded.text + " "


def test_the_echo_penalty_makes_a_passage_word_less_likely():
    pieces = ["Which", " gene", " locus", " controls", " regulates", " growth", "?"]
    prefer = [["Which"], [" gene", " locus"], [" controls", " regulates"], [" growth"], ["?"]]
    steer = steer_for(
        "The gene regulates growth in mice.",
        "The gene regulates growth in mice.",
        QUESTION,
        strength=1.5,
    )
    chosen: Counter = Counter()
    free: Counter = Counter()
    for seed in range(200):
        sampling = Sampling(temperature=1.0, top_k=6, seed=seed)
        chosen.update(_decode(pieces, prefer, steer, sampling).text.rstrip("?").split())
        free.update(_decode(pieces, prefer, Steer(QUESTION), sampling).text.rstrip("?").split())
    for word in ("regulates", "gene"):
        assert chosen[word] < 0.75 * free[word]
    assert chosen["growth"] == free["growth"] == 200  # nothing else to say there
    greedy = _decode(pieces, prefer, steer)
    assert greedy.text == "Which locus controls growth?"  # growth has no other word here


def test_the_evidence_distinctive_terms_stay_free():
    evidence = "BRCA1 mutations raise the risk of ovarian cancer."
    passage = "Women were followed for ten years. " + evidence
    texts = [passage, "Cancer risk rises with age.", "Ten years of follow-up in women."]
    rarity = WindowFrequency(WindowIndex.of(t) for t in texts)
    steer = steer_for(passage, evidence, QUESTION, 2.0, Specificity(rarity, 0.01))
    assert "brca1" not in steer.penalised and "ovarian" not in steer.penalised
    assert {"women", "years"} <= steer.penalised
    assert not steer_for(passage, evidence, QUESTION, 0.0).penalised


@pytest.mark.parametrize(
    "pattern, phrases",
    [
        (_REFERS_TO_SOURCE, ["the passage", "this study", "given text", "the paper"]),
        (_THIS, ["this", "these"]),
        (_PREAMBLE, ["Sure", "Here is", "Question 1:"]),
    ],
)
def test_each_pattern_is_forbidden_while_decoding(pattern, phrases):
    """Every phrase a validation pattern rejects is taken back by the decoder as it completes."""
    for phrase in phrases:
        assert pattern.search(phrase)
        query = f"{phrase} mice gain weight with age?"
        assert broken_rule(query, QUESTION) is not None, phrase
        with pytest.raises(InvalidAnswer):
            check_question(query, "Mice gain weight.")


def test_the_authors_voice_is_forbidden_in_claims_only():
    assert _AUTHORS.search("we")
    assert broken_rule("We found that mice gain weight.", CLAIM).code == "refers_to_passage"
    assert broken_rule("How do we restore a backup?", QUESTION) is None


def test_a_word_being_written_is_not_judged_yet():
    assert broken_rule("Does thi", QUESTION) is None
    assert broken_rule("Does thistle", QUESTION) is None
    assert broken_rule("Does this ", QUESTION).code == "refers_to_passage"


def test_rewinds_are_bounded():
    these = [" " * n + "this" for n in range(1, 2 * MAX_REWINDS)]  # all point into the passage
    pieces = ["Is", *these, " mice", " obese", "?"]
    prefer = [["Is"], [*these, " mice"], [" mice", " obese"], [" obese"], ["?"]]
    decoded = _decode(pieces, prefer, max_tokens=40)
    assert decoded.rewinds == MAX_REWINDS
    assert decoded.text.split()[1] == "this"  # then validation has the last word


def test_the_subject_boost_makes_the_evidence_term_the_pick():
    evidence = "TP53 loss drives tumour growth in mice."
    pieces = ["Which", " gene", " TP53", " drives", " tumour", " growth", "?"]
    prefer = [["Which"], [" gene", " TP53"], [" drives"], [" tumour"], [" growth"], ["?"]]
    plain = steer_for(evidence, evidence, QUESTION, 0.0)
    boosted = steer_for(evidence, evidence, QUESTION, 0.0, boost=2.0)
    assert boosted.boosted == {"TP53"}
    assert _decode(pieces, prefer, plain).text == "Which gene drives tumour growth?"
    assert _decode(pieces, prefer, boosted).text == "Which TP53 drives tumour growth?"


def test_a_token_that_ends_the_line_keeps_what_comes_before_the_break():
    """Qwen writes "?\n" as one token: the answer is whole with its '?', not cut before it."""
    pieces = ["Does", " aspirin", " prevent", " strokes", "?\n"]
    prefer = [["Does"], [" aspirin"], [" prevent"], [" strokes"], ["?\n"]]
    decoded = _decode(pieces, prefer)
    assert decoded.text == "Does aspirin prevent strokes?"
    assert not decoded.truncated
    check_question(decoded.text, "Aspirin prevents strokes.")


def test_a_rewind_takes_back_the_offending_word_wherever_it_sits():
    """'this' is judged once '?' follows it: the rewind bans ' this', not the '?'."""
    pieces = ["Does", " aspirin", " help", " this", " mice", "?"]
    prefer = [["Does"], [" aspirin"], [" help"], [" this", " mice"], ["?"]]
    decoded = _decode(pieces, prefer)
    assert decoded.text == "Does aspirin help mice?"
    assert decoded.rewinds == 1


def test_the_echo_penalty_falls_on_whole_words_not_on_a_shared_first_piece():
    """' protein' is written ' pro' + 'tein': the penalty falls on 'tein' after ' pro', so
    ' progress', which starts with the same piece, is as free as before."""
    passage = "The protein binds DNA."
    steer = steer_for(passage, "DNA binding.", QUESTION, strength=5.0)
    assert "protein" in steer.penalised
    pieces = ["Which", " pro", "tein", "gress", " binds", " DNA", "?"]
    prefer = [["Which"], [" pro"], ["tein", "gress"], [" binds"], [" DNA"], ["?"]]
    assert _decode(pieces, prefer, steer).text == "Which progress binds DNA?"
    progress = [["Which"], [" pro"], ["gress", "tein"], [" binds"], [" DNA"], ["?"]]
    assert _decode(pieces, progress, steer).steered == 0


def test_the_steering_key_follows_the_rules_patterns(monkeypatch):
    """A rule's pattern joins the writer's identity: editing one asks again."""
    from goldenset.generation import validation
    from goldenset.generation.steering import steering_key

    before = steering_key()
    assert steering_key() == before
    edited = validation.REFERENCE_RULES[0]
    replaced = type(edited)(
        edited.code, re.compile(edited.pattern.pattern + "|\\bsource\\b"), edited.detail, True
    )
    monkeypatch.setattr(validation, "REFERENCE_RULES", (replaced, *validation.REFERENCE_RULES[1:]))
    assert steering_key() != before


# Words that sit on the rules' edges: a word a later one may turn valid ("those" before "who",
# "it" before "to", "Ok" before "ra"), words that grow into others ("this" into "thistle"), quotes
_WORDS = [
    *(  # noqa: SIM905 (a word list reads best as words)
        "Is is it safe to take aspirin How long does Which of those who smoke Ok Okra OK Sure "
        "Surely sure this thistle these they them theyre he here Here her hers the passage "
        "passages study studies text textbook we our mice when age gain weight Question es gibt "
        "sie Sie er Wie Gibt Mäuse wenn that for whether BRCA1 cancer risk patients with jene die "
        "dieses Protein"
    ).split(),
    *["1:", "1.", "-", ",", '"', "?"],
]
_SEPARATORS = [" ", " ", " ", "", ", "]


@st.composite
def _texts(draw, min_words=1):
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=min_words, max_size=12))
    text = ""
    for word in words:
        text += (draw(st.sampled_from(_SEPARATORS)) if text else "") + word
    return text


def _forbidden(prefix: str, form) -> bool:
    return broken_rule(prefix, form) is not None or not shape_allows(prefix, form)


def _accepted(query: str, form) -> bool:
    try:
        check_question(query, "Unrelated.", form=form)
    except InvalidAnswer:
        return False
    return True


# Most random word strings are no valid query (or no forbidden prefix): the filtering is the
# property's own, and a fixed seed keeps CI from meeting a different draw each run
PROPERTY = settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)


@PROPERTY
@given(body=_texts(min_words=3), quoted=st.booleans(), form=st.sampled_from([QUESTION, CLAIM]))
def test_no_query_validation_accepts_has_a_prefix_the_decoder_forbids(body, quoted, form):
    query = body + ("?" if form is QUESTION else ".")
    query = f'"{query}"' if quoted else query
    assume(_accepted(query, form))
    for split in range(len(query) + 1):
        assert not _forbidden(query[:split], form), (query, split)
    assert broken_rule(query + " ", form) is None  # as the decoder checks a query that ends


@PROPERTY
@given(start=_texts(), rest=_texts(), form=st.sampled_from([QUESTION, CLAIM]))
def test_every_completion_of_a_forbidden_prefix_is_rejected(start, rest, form):
    assume(broken_rule(start, form) is not None)
    for completion in (rest, " " + rest, rest + "?", " " + rest + "?", " " + rest + "."):
        assert not _accepted(start + completion, form), start + completion


@pytest.mark.parametrize(
    "prefix",
    ["Is it safe", "How long does it take ", "Which of those ", "Ok", "Sure", "Is this", "thi"],
)
def test_prefixes_a_valid_question_may_start_with_are_open(prefix):
    assert broken_rule(prefix, QUESTION) is None
