"""Which passages are asked about: their own segmentation, a seeded sample spread over documents."""

from __future__ import annotations

import pytest

from goldenset.core.errors import GoldensetError
from goldenset.generation.passages import (
    MIN_TARGET_WORDS,
    document_passages,
    sample_passages,
    states_a_finding,
    target_sentences,
    title_span,
)
from tests.support.documents import make_documents


def sample(documents, **overrides):
    settings = dict(
        max_questions=10, questions_per_passage=1, passage_size=700, min_chars=200, seed=0
    )
    settings.update(overrides)
    return sample_passages(documents, **settings)


def test_passages_are_whole_sentences_within_the_size():
    ((_, text),) = make_documents(1, sentences=30)
    spans = document_passages(text, 500, 100)
    assert len(spans) > 3
    for start, end in spans:
        assert end - start <= 500
        assert text[start:end].endswith(".")
        assert start == 0 or text[start - 2 : start] == ". "


def test_a_sentence_longer_than_a_passage_stays_whole():
    short = "Backups run every night at two and are kept for a month. "
    long = (
        "Restoring one " + "needs a ticket to the storage team and a reason, " * 8 + "in writing."
    )
    table = "col " * 400  # no sentence end: cut at whitespace
    text = short + long + " " + short + table.strip() + "."
    spans = document_passages(text, 200, 20)
    start = text.index(long)
    assert (start, start + len(long)) in spans  # 413 characters, whole
    assert text[spans[0][0] : spans[0][1]] == short.strip()
    assert all(end - start <= 200 for start, end in spans if text[start:end].startswith("col"))


def test_short_passages_are_skipped():
    text = "Tiny one. " + "A much longer sentence that goes on for a good while here. " * 3
    assert document_passages(text.strip(), 1000, 500) == []
    assert document_passages(text.strip(), 1000, 50) == [(0, len(text.strip()))]


def test_sample_spreads_over_documents_before_taking_seconds():
    documents = make_documents(6, sentences=24)
    chosen = sample(documents, max_questions=6)
    assert sorted(p.doc_id for p in chosen) == sorted(doc_id for doc_id, _ in documents)
    more = sample(documents, max_questions=9)
    assert [p.doc_id for p in more[:6]] == [p.doc_id for p in chosen]  # a larger sample extends it


def test_sample_is_seeded_and_passage_text_matches_document():
    documents = make_documents(8, sentences=24)
    texts = dict(documents)
    first = sample(documents)
    assert first == sample(documents)
    assert first != sample(documents, seed=1)
    for passage in first:
        assert texts[passage.doc_id][passage.start : passage.end] == passage.text


def test_adding_a_document_keeps_the_other_choices():
    documents = make_documents(30, sentences=12)
    before = {(p.doc_id, p.start) for p in sample(documents[:29], max_questions=40)}
    after = {(p.doc_id, p.start) for p in sample(documents, max_questions=40)}
    # one more document takes at most one slot per round-robin depth
    assert len(before - after) <= 2


def test_questions_add_up_to_max_questions():
    documents = make_documents(5, sentences=24)
    chosen = sample(documents, max_questions=7, questions_per_passage=3)
    assert [p.n_questions for p in chosen] == [3, 3, 1]
    assert sample(documents, max_questions=0) == []


def test_fewer_passages_than_asked_for_is_fine():
    chosen = sample(make_documents(2, sentences=5), max_questions=50)
    assert len(chosen) == 2


def test_duplicate_doc_ids_are_a_clear_error():
    ((doc_id, text),) = make_documents(1)
    with pytest.raises(GoldensetError, match="appears twice"):
        sample([(doc_id, text), (doc_id, text)])


def test_each_question_gets_its_own_target_sentence_that_states_something():
    text = (
        "Results. "
        "Backups of every production database run each night and are kept for a month. "
        "Short one here. "
        "Restoring a backup needs a ticket to the storage team, answered within four hours."
    )
    targets = target_sentences(text, 3, seed=0)
    # the heading and the four-word sentence are never targets
    assert [text[s:e] for s, e in targets] == [
        "Backups of every production database run each night and are kept for a month.",
        "Restoring a backup needs a ticket to the storage team, answered within four hours.",
    ]
    (one,) = target_sentences(text, 1, seed=0)
    assert one in targets and target_sentences(text, 1, seed=0) == (one,)
    picks = {target_sentences(text, 1, seed=seed)[0] for seed in range(20)}
    assert picks == set(targets)  # the seed decides, between eligible sentences only
    assert target_sentences("Too short to ask. Also short.", 1, seed=0) == ()


def test_sampled_passages_carry_their_targets():
    documents = make_documents(5, sentences=24)
    for passage in sample(documents, max_questions=7, questions_per_passage=3):
        assert len(passage.targets) == passage.n_questions
        assert len(set(passage.targets)) == passage.n_questions
        for start, end in passage.targets:
            assert 0 <= start < end <= len(passage.text)
            assert len(passage.text[start:end].split()) >= MIN_TARGET_WORDS


def test_long_documents_get_more_passages_but_not_in_proportion():
    # one document 64 times as long as each of the eight others
    documents = make_documents(9, sentences=24)
    (long_id, long_text), *short = documents
    documents = [(long_id, " ".join([long_text] * 64)), *short]
    questions = 24
    passages = {doc_id: len(document_passages(text, 300, 200)) for doc_id, text in documents}
    assert passages[long_id] > 50 * passages[short[0][0]]

    def asked_of_long(power: float) -> int:
        chosen = sample(documents, max_questions=questions, length_power=power, passage_size=300)
        return sum(p.doc_id == long_id for p in chosen)

    def expected(power: float) -> float:
        weights = {doc_id: n**power for doc_id, n in passages.items()}
        return questions * weights[long_id] / sum(weights.values())

    for power in (0.0, 0.5, 1.0):  # a document's share of questions ~ its passages ** power
        assert abs(asked_of_long(power) - expected(power)) <= 1.5, power
    assert asked_of_long(0.0) < asked_of_long(0.5) < asked_of_long(1.0)


def test_a_passage_that_repeats_a_chosen_one_is_not_asked_twice():
    documents = make_documents(3, sentences=12)
    boiler = (
        "Forward-looking statements in this report involve risks and uncertainties, and actual "
        "results may differ materially from those expressed or implied here. "
    )
    filing = [("filing", " ".join([boiler] * 30) + documents[0][1])]
    repeated = sample(filing, max_questions=40, passage_size=300, min_chars=100)
    deduped = sample(
        filing, max_questions=40, passage_size=300, min_chars=100, duplicate_jaccard=0.8
    )

    def only_boilerplate(passages):
        return [p for p in passages if not p.text.replace(boiler.strip(), "").strip()]

    boilerplate = only_boilerplate(deduped)
    assert len(only_boilerplate(repeated)) > 5
    assert len(boilerplate) == 1
    assert len(deduped) > len(boilerplate)  # the filing's own prose is still asked about


def test_only_sentences_that_name_something_are_targets_when_asked_so():
    text = (
        "However, this remains an important tool for the future of research in general. "
        "The PPM1D phosphatase suppresses p53 in breast tumours of older patients."
    )
    assert len(target_sentences(text, 2, 0)) == 2
    only = target_sentences(text, 2, 0, names_something=lambda s: "PPM1D" in s)
    assert [text[a:b] for a, b in only] == [text.partition(". ")[2]]


@pytest.mark.parametrize(
    "sentence",
    [
        "OBJECTIVES We evaluated whether particulate pollution modifies DNA methylation in blood.",
        "METHODS We used multivariate linear regression on soft drink sales in 75 countries.",
        "DESIGN, SETTING, AND POPULATION Retrospective cohort study in 23 Canadian hospitals.",
        "Diffusion tensor imaging was used to measure the anisotropy of the frontal white matter.",
        "We sought to determine whether fibroblasts can be converted into progenitors in one step.",
        "To determine whether statins reduce stroke risk, we pooled twelve randomised trials.",
        "Despite their high incidence, the role of febrile seizures in epilepsy has remained "
        "controversial.",
        "Little is known about how the cluster schedules its nightly backups across regions.",
        "The aim of this study was to compare two backup schedules for production databases.",
        "## Rapid DNA methylation changes after exposure to traffic particles in the city",
        "PATIENT(S) Individuals treated with letrozole or gonadotropins who failed to conceive.",
        "Endothelial function was measured before, at 2 and 4 hours after a dose of folate.",
        "Recordings from knee joint nerve fibres assessed the effects of stimulating the receptor.",
        "We determined the proportion of patients with adenomas and the time to their recurrence.",
        "Finally, we characterised the association of TSPAN7 with partner molecules in vitro.",
    ],
)
def test_a_heading_an_aim_a_method_or_an_open_question_is_no_target(sentence):
    assert not states_a_finding(sentence)
    assert target_sentences(sentence, 1, seed=0) == ()


@pytest.mark.parametrize(
    "sentence",
    [
        "From 2009 to 2014, sepsis incidence by clinical criteria was stable at 6% of admissions.",
        "RESULTS Mortality fell by 12% in the treated group compared with placebo after a year.",
        "Backups of every production database run each night and are kept for a month.",
        "We found that the PPM1D phosphatase suppresses p53 in breast tumours of older patients.",
        "Restoring a backup needs a ticket to the storage team, answered within four hours.",
        "Here we report that in yeast, loss of mtDNA leads to genome instability, a process we "
        "define as a cellular crisis.",
        "We determined that the kinase is required for spindle assembly in all three cell lines.",
        "Here we describe two classes of small molecules that bind to the Arp2/3 complex.",
    ],
)
def test_a_sentence_that_states_a_finding_is_a_target(sentence):
    assert states_a_finding(sentence)


def test_the_documents_title_is_no_target():
    title = "Oncogenic mTOR signaling recruits myeloid suppressor cells to promote tumor growth"
    # as BEIR ingest writes it: the title glued to the first sentence, no full stop between
    text = (
        f"{title} Myeloid suppressor cells play critical roles in primary and metastatic cancer. "
        "Deleting mTOR in tumour cells halved the number of suppressor cells in the mouse lungs."
    )
    documents = [("doc-1", text)]
    settings = dict(max_questions=5, questions_per_passage=2, min_chars=50)
    (untitled,) = sample(documents, **settings)
    assert untitled.targets[0][0] == 0  # without its title, the glued sentence looks like one
    (titled,) = sample(documents, **settings, titles={"doc-1": title})
    assert [titled.text[s:e] for s, e in titled.targets] == [text.partition(". ")[2]]
    assert title_span(text, title) == (0, len(title))
    assert title_span(text, "") is None and title_span(text, "Another title") is None
