"""The prompt and the checks on LLM answers: pure functions, no server."""

from __future__ import annotations

import re

import pytest

from goldenset.core.echo import WindowFrequency, WindowIndex, echo, overlap
from goldenset.generation import prompt
from goldenset.generation.prompt import (
    CLAIM,
    FEW_SHOT,
    FORMS,
    KEYWORDS,
    PROMPT_SHA,
    QUESTION,
    build_messages,
    chosen_form,
    form_of,
    mark_target,
    pick_examples,
    system_prompt,
    users_form,
)
from goldenset.generation.validation import (
    InvalidAnswer,
    Specificity,
    check_question,
    validate_question,
)

PASSAGE = (
    "The staging cluster is rebuilt from scratch every Sunday night.\n"
    "Data written there during the week is lost, so long-running experiments belong on the\n"
    "research cluster instead.  Access to the research cluster is granted by the platform team."
)

GERMAN_PASSAGE = (
    "Der Staging-Cluster wird jeden Sonntag neu aufgebaut. Daten, die dort während der Woche "
    "geschrieben werden, gehen verloren, und lange Experimente gehören auf den Forschungscluster."
)


def reason_of(text: str, passage: str = PASSAGE, **kwargs) -> str:
    with pytest.raises(InvalidAnswer) as caught:
        validate_question(text, passage, **kwargs)
    return caught.value.code


SYSTEM = system_prompt()


@pytest.mark.parametrize("form", FORMS.values(), ids=list(FORMS))
def test_few_shot_examples_pass_our_own_checks(form):
    # the demonstrations must be answers we would accept, or they teach the wrong thing: each
    # keeps a term of its target that is rare among the passages
    passages = [marked.replace("<target>", "").replace("</target>", "") for _, marked in FEW_SHOT]
    rarity = WindowFrequency(WindowIndex.of(text) for text in [*passages, PASSAGE])
    for (_, marked), answer, passage in zip(FEW_SHOT, form.answers, passages, strict=True):
        assert marked.count("<target>") == 1 and marked.count("</target>") == 1
        evidence = marked.partition("<target>")[2].partition("</target>")[0]
        checked = validate_question(
            answer,
            passage,
            source=WindowIndex.of(passage),
            evidence=evidence,
            specificity=Specificity(rarity, 0.25),
            form=form,
        )
        assert checked == answer
        assert form_of(answer) == form.name


@pytest.mark.parametrize("form", FORMS.values(), ids=list(FORMS))
def test_few_shot_answers_do_not_echo_their_passages(form):
    # they show the model how to paraphrase: none reuses more than half of its words
    for (_, marked), answer in zip(FEW_SHOT, form.answers, strict=True):
        assert overlap(answer, marked) <= 0.5, answer


def test_messages_are_few_shot_turns_then_the_title_and_the_marked_passage():
    marked = mark_target("Intro. A fact about things. Outro.", 7, 27)
    assert marked == "Intro. <target>A fact about things.</target> Outro."
    messages = build_messages(marked, title="Things")
    assert "document's title" in system_prompt(titled=True) and "title" not in SYSTEM
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant"] * len(FEW_SHOT) + ["user"]
    assert messages[-1]["content"] == f"<title>Things</title>\n<passage>\n{marked}\n</passage>"
    assert build_messages(marked)[-1]["content"] == f"<passage>\n{marked}\n</passage>"
    assert messages[0]["content"].startswith(f"<title>{FEW_SHOT[0][0]}</title>")
    assert "<target>" in SYSTEM and "question only" in SYSTEM


def test_each_form_has_its_own_prompt_and_few_shot_answers():
    claim = build_messages("A <target>fact.</target>", form=CLAIM)
    assert [m["content"] for m in claim[1:6:2]] == list(CLAIM.answers)
    assert "claim only" in system_prompt(form=CLAIM) and "itself states" in system_prompt(
        form=CLAIM
    )
    assert "keyword search only" in system_prompt(form=KEYWORDS)
    corrected = build_messages("A <target>fact.</target>", corrections=[("x", "bad")], form=CLAIM)
    assert (
        "new one-line claim that this sentence of the passage itself states"
        in (corrected[-1]["content"])
    )


@pytest.mark.parametrize(
    ("queries", "form"),
    [
        (["Obesity decreases life quality.", "AIRE is expressed in some skin tumors."], "claim"),
        (["how do statins work?", "what is the dose of aspirin"], "question"),
        (["statin side effects", "Foods for Glaucoma", "Is coffee bad?"], "keywords"),
        (["CX3CR1 on the Th2 cells impairs T cell survival", "aspirin dose", "x."], "claim"),
        (["statin side effects", "Is coffee bad?"], "question"),  # no majority
        ([], "question"),
    ],
)
def test_the_users_form_is_the_one_most_example_queries_take(queries, form):
    assert users_form(queries) == form


def test_the_form_chosen_says_why():
    assert chosen_form("claim", ["how?"]) == ("claim", "generate.form: claim")
    assert chosen_form("auto", []) == ("question", "auto: no example query, so questions")
    tie = ["statin side effects", "Is coffee bad?"]
    assert chosen_form("auto", tie) == (
        "question",
        "auto: a tie among the 2 example queries, so questions",
    )
    keywords = ["statin side effects", "Foods for Glaucoma", "Is coffee bad?"]
    assert chosen_form("auto", keywords) == (
        "keywords",
        "auto: 2 of the 3 example queries are keyword searches",
    )


@pytest.mark.parametrize(
    ("text", "form", "code"),
    [
        ("Is the staging cluster wiped every Sunday?", CLAIM, "not_a_claim"),
        ("Staging cluster Sunday wipe?", KEYWORDS, "not_keywords"),
        (
            "The staging cluster is wiped on Sundays. Experiments go elsewhere.",
            CLAIM,
            "several_questions",
        ),
        ("The staging cluster is wiped on Sundays.", QUESTION, "not_a_question"),
        ("staging", KEYWORDS, "too_short"),
        ("Our screen found that staging is wiped every Sunday.", CLAIM, "refers_to_passage"),
    ],
)
def test_each_form_has_its_own_shape(text, form, code):
    assert reason_of(text, form=form) == code


def test_a_claim_and_a_keyword_search_of_the_right_shape_pass():
    claim = "The staging cluster is wiped every Sunday night."
    assert validate_question(claim, PASSAGE, form=CLAIM) == claim
    assert validate_question("staging cluster Sunday wipe", PASSAGE, form=KEYWORDS)
    # "why" is a question's premise; a claim is not asked why
    assert validate_question("Why wipes happen on Sunday nights at staging.", PASSAGE, form=CLAIM)


def test_the_prompt_asks_for_the_passage_language():
    assert "same language as the passage" in SYSTEM
    # and demonstrates it: one few-shot passage and its question are not English
    german = [q for (_, p), q in zip(FEW_SHOT, QUESTION.answers, strict=True) if "Anfragen" in p]
    assert german and german[0].startswith("Wie ")


def test_example_queries_are_shown_as_style_only():
    assert system_prompt([]) == SYSTEM
    prompt = system_prompt(["statins lower stroke risk", "is coffee bad for the liver"])
    assert prompt.startswith(SYSTEM)
    assert "- statins lower stroke risk\n- is coffee bad for the liver" in prompt
    assert "style examples only" in prompt


def test_example_queries_are_picked_by_seed_the_same_way_everywhere():
    queries = [f"query number {i}" for i in range(50)]
    first = pick_examples(queries, 5, seed=0)
    assert len(first) == 5 and set(first) <= set(queries)
    assert pick_examples(list(reversed(queries)) + ["  "], 5, seed=0) == first
    assert pick_examples(queries, 5, seed=1) != first
    assert pick_examples(queries, 0, seed=0) == []


def test_retry_turns_tell_the_model_what_was_wrong():
    messages = build_messages("A passage.", asked=["Who?"], corrections=[("", "it was empty")])
    assert "Already asked" in messages[-3]["content"] and "- Who?" in messages[-3]["content"]
    assert messages[-2] == {"role": "assistant", "content": "(empty reply)"}
    assert messages[-1]["role"] == "user" and "it was empty" in messages[-1]["content"]


# Pinned: a prompt edit re-asks every question, so it must change this value on purpose.
# After such an edit, put the new value here.
PINNED_PROMPT_SHA = "a13bf1f4d9ef6ce0"


def test_prompt_sha_is_a_stable_short_hash():
    assert PROMPT_SHA == PINNED_PROMPT_SHA


@pytest.mark.parametrize(
    ("template", "edited"),
    [
        ("SYSTEM", lambda text: text + " Be brief."),
        ("EXAMPLES_TEMPLATE", lambda text: text.replace("Real users'", "Users'")),
        ("TITLE_TEMPLATE", lambda text: text.replace("title", "name")),
        ("PASSAGE_TEMPLATE", lambda text: text.replace("\n", " ")),
        ("TARGET_OPEN", lambda text: "<mark>"),
        ("TARGET_CLOSE", lambda text: "</mark>"),
        ("ASKED_TEMPLATE", lambda text: text.replace("something else", "another thing")),
        ("FORMS", lambda forms: dict(list(forms.items())[:2])),
        ("CORRECTION_TEMPLATE", lambda text: text.replace("cannot", "can not")),
        ("FEW_SHOT", lambda pairs: pairs[1:]),
    ],
)
def test_every_part_of_the_prompt_changes_its_sha(template, edited, monkeypatch):
    before = prompt._prompt_sha()
    monkeypatch.setattr(prompt, template, edited(getattr(prompt, template)))
    assert prompt._prompt_sha() != before


def test_a_good_answer_is_the_question_itself():
    assert (
        validate_question("  When does the staging environment get wiped?\n", PASSAGE)
        == "When does the staging environment get wiped?"
    )
    assert validate_question('"Who lets me use the research machines?"', PASSAGE).startswith("Who")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("When is staging rebuilt? Who grants access?", "several_questions"),
        ("1. When is staging rebuilt?\n2. Who grants access?", "several_questions"),
        ("When is staging rebuilt? Explain.", "several_questions"),
        ("Here is a question: when is staging rebuilt?", "preamble"),
        ("Question: when is staging rebuilt?", "preamble"),
        ("Staging is rebuilt on Sundays.", "not_a_question"),
        ("Staging?", "too_short"),
        ("Why " + "really " * 45 + "?", "too_long"),
        ("What does the passage say about staging rebuilds?", "refers_to_passage"),
        ("Is this rebuild done every week?", "refers_to_passage"),
        ("Do these clusters lose their data on Sundays?", "refers_to_passage"),
        ("Do engineers still use those old staging boxes?", "refers_to_passage"),
        (
            "What if the staging cluster is rebuilt from scratch every Sunday night?",
            "copies_passage",
        ),
    ],
)
def test_invalid_answers_are_named(text, code):
    assert reason_of(text) == code


@pytest.mark.parametrize(
    "text",
    ["Can those who need the research machines get access?", "What is thistle used for?"],
)
def test_a_question_that_names_its_subject_is_kept(text):
    assert validate_question(text, PASSAGE) == text


@pytest.mark.parametrize(
    ("text", "passage"),
    [
        ("Was steht im Text über die Sonntage?", GERMAN_PASSAGE),
        ("Was sagt die Studie über den Neuaufbau?", GERMAN_PASSAGE),
        ("Wird dieses Cluster jeden Sonntag gelöscht?", GERMAN_PASSAGE),
        ("Verlieren diese Rechner ihre Daten am Sonntag?", GERMAN_PASSAGE),
        ("What antibodies did they test for?", PASSAGE),
        ("How do they rebuild the staging machines?", PASSAGE),
        ("Why did they approve the weekly wipe?", PASSAGE),  # "he" and "she": unnamed_person
        ("Does it lose every file on Sundays?", PASSAGE),
        ("Welche Antikörper haben sie getestet?", GERMAN_PASSAGE),
        ("Wie bauen sie die Testumgebung neu auf?", GERMAN_PASSAGE),
        ("Warum hat er den Zugang zu den Rechnern genehmigt?", GERMAN_PASSAGE),
        ("Verliert es jeden Sonntag alle Daten?", GERMAN_PASSAGE),
    ],
)
def test_a_question_that_needs_its_passage_is_rejected_in_english_and_german(text, passage):
    assert reason_of(text, passage) == "refers_to_passage"


@pytest.mark.parametrize(
    ("text", "passage"),
    [
        ("Do mice lacking leptin gain weight when they age?", PASSAGE),
        ("Do statins still work if they are taken at night?", PASSAGE),
        ("Is it safe to rebuild staging machines on a weekday?", PASSAGE),
        ("How long does it take to get access to research machines?", PASSAGE),
        ("How do I switch it off on the research machines?", PASSAGE),
        ("Nehmen Mäuse ohne Leptin zu, wenn sie altern?", GERMAN_PASSAGE),
        ("Gibt es eine Warteliste für die Forschungsrechner?", GERMAN_PASSAGE),
        ("Ist es sinnvoll, die Testumgebung jede Woche neu aufzubauen?", GERMAN_PASSAGE),
        ("Wie können Sie den Zugang zu den Forschungsrechnern beantragen?", GERMAN_PASSAGE),
        ("Wie schaltet man sie auf den Forschungsrechnern ab?", GERMAN_PASSAGE),
        ("Bekommen jene, die forschen, Zugang zu den Rechnern?", GERMAN_PASSAGE),
    ],
)
def test_a_pronoun_or_demonstrative_the_question_resolves_is_kept(text, passage):
    assert check_question(text, passage) == text


def test_truncated_answer_is_never_trusted():
    good = "When does the staging environment get wiped?"
    assert reason_of(good, truncated=True) == "truncated"


def test_a_repeat_of_an_earlier_question_is_invalid():
    text = "Who gives access to the research machines?"
    assert (
        reason_of(text, asked=["who gives access to the research machines?"]) == "repeats_question"
    )


def test_a_question_over_the_echo_threshold_is_invalid():
    source = WindowIndex.of(PASSAGE)
    echo = "When is the staging cluster rebuilt from scratch?"  # staging cluster rebuilt scratch
    paraphrase = "When does the staging environment get wiped?"
    assert overlap(echo, PASSAGE) == 1.0 and overlap(paraphrase, PASSAGE) < 0.5
    assert reason_of(echo, source=source, max_echo=0.5) == "echoes_document"
    assert validate_question(paraphrase, PASSAGE, source=source, max_echo=0.5) == paraphrase
    # without a threshold, echo is not checked
    assert validate_question(echo, PASSAGE, source=source, max_echo=None) == echo
    with pytest.raises(InvalidAnswer) as caught:
        validate_question(echo, PASSAGE, source=source, max_echo=0.5)
    assert re.search(r"100% of its words", caught.value.detail)


def test_a_copy_of_an_example_query_is_invalid():
    example = "Sunday wipes destroy weekly experiment data"
    text = "Do Sunday wipes destroy weekly experiment data?"
    assert reason_of(text, example_queries=[example]) == "copies_example"
    assert validate_question("When is staging reset?", PASSAGE, example_queries=[example])


def test_seven_shared_words_are_fine_eight_are_a_copy():
    passage = "one two three four five six seven eight nine ten."
    assert check_question("Why one two three four five six seven here?", passage)
    with pytest.raises(InvalidAnswer):
        check_question("Why one two three four five six seven eight?", passage)


def test_invalid_answer_detail_is_readable():
    with pytest.raises(InvalidAnswer) as caught:
        validate_question("nope", PASSAGE)
    assert "question mark" in caught.value.detail
    assert str(caught.value).startswith("not_a_question")


def test_a_question_about_nothing_in_the_document_is_off_topic():
    source = WindowIndex.of(PASSAGE)
    # about the first few-shot passage (backups), not this one
    assert reason_of("How long are nightly backups kept?", source=source) == "off_topic"
    assert reason_of("Why do elephants sleep standing?", source=source) == "off_topic"
    on_topic = "Who grants research cluster access?"
    assert validate_question(on_topic, PASSAGE, source=source) == on_topic


def test_a_correction_repeats_the_target_sentence():
    marked = mark_target("Intro. A fact about things. Outro.", 7, 27)
    messages = build_messages(marked, corrections=[("What?", "too short")])
    assert messages[-1]["content"].endswith(
        "this sentence of the passage answers: A fact about things."
    )


# a long document in the style of an encyclopedia article: the museum passage, then far more
# text that uses the common words of the questions below, one word per ~100-word section
MUSEUM = (
    "The Horniman Museum in Forest Hill opened its tea room in 1901. "
    "Visitors to the Horniman could drink a cup of Assam tea in the garden conservatory."
)
NOTHING = " ".join(["Nothing further was noted on this page."] * 15)
ARTICLE = " ".join(
    f"Chapter {i} mentions a {word} once. {NOTHING}"
    for i, word in enumerate(["brew", "served", "guests", "visitors drink a cup", "garden"] * 120)
)
LONG = f"{MUSEUM} {NOTHING} {ARTICLE}"


def test_echo_of_a_specific_question_is_the_same_in_a_short_and_a_long_document():
    question = "What brew is served to guests at the Horniman Museum?"
    short, long = WindowIndex.of(MUSEUM), WindowIndex.of(LONG)
    assert len(LONG) > 200_000
    # the whole-document share rose with the filler's common words; the window share does not
    assert overlap(question, LONG) == 1.0 and overlap(question, MUSEUM) == 0.4
    assert echo(question, short) == echo(question, long) == 0.4
    for source in (short, long):
        assert validate_question(question, MUSEUM, source=source, max_echo=0.6) == question


RARITY = WindowFrequency(WindowIndex.of(text) for text in [LONG, PASSAGE, MUSEUM])
SPECIFIC = Specificity(RARITY, 0.01)
EVIDENCE = "Visitors to the Horniman could drink a cup of Assam tea in the garden conservatory."


def test_a_question_that_keeps_no_distinctive_term_of_its_evidence_is_vague():
    vague = "Can visitors drink a cup of something in a garden?"  # words every window has
    assert reason_of(vague, MUSEUM, evidence=EVIDENCE, specificity=SPECIFIC) == "vague"
    for specific in [
        "Can you get a cup of Assam at a London museum?",  # a rare word of the evidence
        "Is there a cup of something in the Horniman garden?",  # a name as written
    ]:
        checked = validate_question(specific, MUSEUM, evidence=EVIDENCE, specificity=SPECIFIC)
        assert checked == specific
    # without a rarity, only whether the evidence answers it is checked
    assert validate_question(vague, MUSEUM, evidence=EVIDENCE) == vague


def test_a_question_its_evidence_does_not_speak_of_is_not_answered():
    passage = (
        "COMPASS is a histone methyltransferase complex. The trithorax group of proteins keeps "
        "developmental genes switched on across many cell divisions."
    )
    evidence = passage.partition(". ")[2]
    assert reason_of("What does COMPASS do?", passage, evidence=evidence) == "not_answered"
    answered = "How do trithorax proteins keep genes active?"
    assert validate_question(answered, passage, evidence=evidence) == answered


@pytest.mark.parametrize(
    "question",
    ["Which groups did he meet with?", "Where did she grow up?", "What was his first job?"],
)
def test_a_person_the_question_does_not_name_is_invalid(question):
    assert reason_of(question) == "unnamed_person"


def test_naming_the_person_is_fine():
    assert validate_question("Which groups did the senator from Ohio meet with?", PASSAGE)


def test_in_a_corpus_of_a_few_short_documents_a_word_in_one_place_is_rare():
    # three one-window documents: no word can be in at most 1% of three windows
    tiny = WindowFrequency(WindowIndex.of(text) for text in [PASSAGE, MUSEUM, "Other text."])
    assert tiny.windows == 3 and tiny.share("assam") == 1 / 3
    assert tiny.is_rare("assam", 0.01) and not RARITY.is_rare("garden", 0.01)
    specific = "Can you get a cup of Assam at a London museum?"
    checked = validate_question(
        specific, MUSEUM, evidence=EVIDENCE, specificity=Specificity(tiny, 0.01)
    )
    assert checked == specific


SEPSIS = (
    "From 2009-2014, sepsis incidence by clinical criteria was stable, whereas incidence by "
    "claims rose 10% a year. The CDC and the NIH funded the study of 409 US hospitals."
)


@pytest.mark.parametrize(
    "question",
    [
        "How did sepsis incidence change between 2009-2014 and 2015?",  # a year it never names
        "Did the FDA fund the hospital study of sepsis incidence?",  # an acronym it never names
        "Was sepsis incidence in US hospitals measured with mTORC1 claims?",  # a mixed-case name
    ],
)
def test_a_question_naming_what_its_document_never_mentions_is_invalid(question):
    source = WindowIndex.of(SEPSIS)
    assert reason_of(question, SEPSIS, source=source) == "unknown_name"


@pytest.mark.parametrize(
    "question",
    [
        "Did sepsis incidence in US hospitals rise between 2009-2014?",
        "Which agencies, the CDCs or the NIH, paid for the sepsis study?",  # a plural is known
        "Did Hospitals in Germany see Sepsis rise?",  # capitalised words: German nouns, a style
    ],
)
def test_names_and_numbers_the_document_holds_are_fine(question):
    assert validate_question(question, SEPSIS, source=WindowIndex.of(SEPSIS)) == question


def test_a_name_counts_as_specific_however_often_the_corpus_uses_it():
    # one article about one game: "Broncos" is in most windows, yet it names what a question is
    # about (requiring names to be rare kept 55 of 200 questions on such an article)
    documents = [f"The Broncos won game {n} of the season in Denver." for n in range(100)]
    rarity = WindowFrequency(WindowIndex.of(text) for text in documents)
    evidence = documents[7]
    specific = "How did the Broncos do in their seventh game?"
    checked = validate_question(
        specific, evidence, evidence=evidence, specificity=Specificity(rarity, 0.01)
    )
    assert checked == specific


def test_a_question_in_another_language_than_its_passage_is_invalid():
    assert reason_of("Wie oft wird der Staging-Cluster neu aufgebaut?") == "wrong_language"
    english = "How often is the staging cluster rebuilt from scratch?"
    assert reason_of(english, GERMAN_PASSAGE) == "wrong_language"
    assert validate_question("Wann wird der Staging-Cluster neu aufgebaut?", GERMAN_PASSAGE)
    # a German name in an English question, and a question without function words, are fine
    assert validate_question("What does the Bundesamt für Statistik report on clusters?", PASSAGE)
    assert validate_question("Staging cluster rebuilt every Sunday night?", PASSAGE)


RESTORE = "Restoring a backup requires a ticket to the storage team, who answer within four hours."


def test_why_needs_a_sentence_that_gives_a_cause():
    question = "Why does a restore need a ticket to the storage team?"
    assert reason_of(question, RESTORE, evidence=RESTORE) == "unanswered_why"
    because = RESTORE.replace("four hours.", "four hours, because restores block the cluster.")
    assert validate_question(question, because, evidence=because) == question
    german = "Eine Wiederherstellung beantragt man mit einem Ticket beim Speicherteam."
    asked = "Warum braucht man ein Ticket beim Speicherteam?"
    assert reason_of(asked, german, evidence=german) == "unanswered_why"


def test_how_is_no_why():
    question = "How do I get a backup restored by the storage team?"
    assert validate_question(question, RESTORE, evidence=RESTORE) == question
