"""The prompt that asks an LLM for one natural query about a sentence the program marked.

The program, not the model, picks the evidence: one sentence of the passage, wrapped in
<target>...</target>. The model only writes a query that sentence answers, one line of plain
text, so it cannot mis-copy the evidence, and a small local model writes ~20 tokens instead of
~60. The query takes the form the users type (`Form`: a question, a claim, a keyword search),
read from their example queries: a golden set of questions judged against real claims measures
a retriever on queries nobody sends it.

The writer sees the document's title above the passage: a passage is often one or two sentences,
and a query written from them alone drops the context that names its document ("What happens to
the immune system when it recognizes a virus?"). Few-shot examples are earlier user/assistant
turns rather than text in the system prompt: small models follow demonstrated turns far better
than described rules, and the fixed prefix (system prompt and few-shot turns) lets the local
backend evaluate it once for every request. The examples paraphrase on purpose (everyday words)
but keep the one term that names their subject (vitamin D, max_retries, the storage team): a
query that copies the passage's words flatters lexical retrievers, and one that drops its subject
("Are high levels of a protein linked to longer life?") fits any document and cannot be found.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Form:
    """One shape of query: what the writer is asked for, and its answers to the few-shot turns."""

    name: str
    noun: str  # "question": what one query of this form is called
    relation: str  # how its evidence sentence relates to it
    reply: str  # what the one-line reply looks like
    answers: tuple[str, ...]  # one per FEW_SHOT passage
    verb: str = "write"  # "ask a question", "write a claim"
    past: str = "written"
    # how to word the rest: a question may paraphrase freely, since it asserts nothing; a claim
    # asserts, and a small model told to paraphrase it turns "is linked to" into "causes"
    wording: str = "say everything else in your own everyday words, not the passage's wording."


QUESTION = Form(
    "question",
    "question",
    "answers",
    "one line that ends with a question mark",
    (
        "Wie verhindere ich, dass der Client mit max_retries Aufrufe von selbst neu sendet?",
        "Who do I ask to get an old copy of my data back from the storage team, and how fast?",
        "Do daily vitamin D pills stop broken bones?",
    ),
    verb="ask",
    past="asked",
)
# A claim passes the strict rule when its sentence itself states it: the relation says so, since
# a small model shown a title otherwise copies the title's promise or hardens a "may" into a fact.
CLAIM = Form(
    "claim",
    "claim",
    "itself states",
    "one line, a statement with no question mark",
    (
        "Mit max_retries auf 0 schickt der Client gescheiterte Aufrufe kein zweites Mal.",
        "Getting an old copy of your data back takes a ticket to the storage team.",
        "Taking vitamin D daily did not cut broken bones in a 2,000-adult trial.",
    ),
    "say exactly what the marked sentence says and no more, shorter and in plainer words: keep "
    'how sure it is ("is linked to" is not "causes", "may" stays "may") and what it '
    "was found in (mice, a trial, a cell line), and never add a fact from the title or other "
    "sentences.",
)
KEYWORDS = Form(
    "keywords",
    "keyword search",
    "answers",
    "a few words on one line, no question mark",
    (
        "max_retries Wiederholungen abschalten",
        "storage team data restore",
        "daily vitamin D broken bones",
    ),
)
FORMS: dict[str, Form] = {form.name: form for form in (QUESTION, CLAIM, KEYWORDS)}


def plural(form: str) -> str:
    """What queries of a form are called, in lines a person reads: questions, claims, keyword
    searches."""
    noun = FORMS[form].noun
    return noun + ("es" if noun.endswith("h") else "s")


SYSTEM = """You write test {noun}s for a search engine over a team's documents.

You get {shown} in which one sentence is marked <target>...</target>. Write ONE {noun} \
that the marked sentence {relation}, the way a user who has not read the passage would type it \
into a search box.
- Keep the one specific name or term the marked sentence is about (a gene, drug, product, \
place, person, number) so the {noun} could only be about this document; {wording}
- The {noun} must stand on its own; never say "the passage", "the text", "this study", \
"he" or "she".
- Write the {noun} in the same language as the passage.
- Reply with the {noun} only: {reply}."""

EXAMPLES_TEMPLATE = (
    "\n\nReal users' searches look like these; match their vocabulary and length, but still "
    "{verb} a {noun} (they are style examples only, never {verb} about them):\n{examples}"
)
SHOWN = {False: "a passage", True: "a document's title and a passage of it"}
TITLE_TEMPLATE = "<title>{title}</title>\n"
PASSAGE_TEMPLATE = "<passage>\n{passage}\n</passage>"
TARGET_OPEN, TARGET_CLOSE = "<target>", "</target>"
ASKED_TEMPLATE = "\n\nAlready {past} about this passage, so {verb} something else:\n{asked}"
# the target sentence is repeated: small models otherwise drift to a few-shot passage's target
CORRECTION_TEMPLATE = (
    "That {noun} cannot be used: {reason}. Reply with only a new one-line {noun} that this "
    "sentence of the passage {relation}: {target}"
)

# (title, passage with its target sentence marked); their answers are each Form's
# the German example comes first: small models copy the language of the last example they saw
FEW_SHOT: tuple[tuple[str, str], ...] = (
    (
        "Konfiguration des HTTP-Clients",
        "Der Client wiederholt fehlgeschlagene Anfragen automatisch. <target>Standardmäßig "
        "versucht er es zweimal mit wachsendem Abstand; max_retries auf 0 schaltet das ab."
        "</target>",
    ),
    (
        "Backup and restore policy",
        "Backups run every night at 02:00 UTC and are kept for 35 days. <target>Restoring one "
        "requires a ticket to the storage team, who usually respond within four hours.</target> "
        "Snapshots taken before a schema migration are kept for a year.",
    ),
    (
        "Vitamin D supplementation and fractures in adults",
        "Vitamin D deficiency is common at northern latitudes in winter. <target>In a randomized "
        "trial of 2,000 adults, daily supplementation did not reduce the incidence of fractures "
        "compared with placebo.</target>",
    ),
)

_QUESTION_START = re.compile(
    r"^\W*(?:what|which|who|whom|whose|why|how|when|where|is|are|was|were|do|does|did|can|could"
    r"|should|would|will|has|have)\b",
    re.IGNORECASE,
)
# a query of at most this many words and no sentence mark is a keyword search: on NFCorpus,
# whose queries are mostly titles ("Foods for Glaucoma"), 2 in 3 have no more than 6 words
KEYWORD_WORDS = 6


def form_of(query: str) -> str:
    """'question', 'claim' or 'keywords': the form of one user query, by its shape."""
    text = query.strip()
    if text.endswith("?") or _QUESTION_START.match(text):
        return QUESTION.name
    if text.endswith((".", "!")) or len(text.split()) > KEYWORD_WORDS:
        return CLAIM.name
    return KEYWORDS.name


def users_form(example_queries: Sequence[str]) -> str:
    """The form most of the example queries take; questions when there are none or no majority."""
    return chosen_form("auto", example_queries)[0]


def chosen_form(setting: str, example_queries: Sequence[str]) -> tuple[str, str]:
    """The form generate.form picks, and why in a few words: auto takes the form most of the
    example queries take (all of them, not only those the prompt shows), questions when there
    are none or on a tie."""
    if setting != "auto":
        return setting, f"generate.form: {setting}"
    counts = Counter(form_of(query) for query in example_queries if query.strip())
    ranked = counts.most_common()
    total = sum(counts.values())
    if not ranked:
        return QUESTION.name, "auto: no example query, so questions"
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return QUESTION.name, f"auto: a tie among the {total} example queries, so questions"
    form, count = ranked[0]
    return form, f"auto: {count} of the {total} example queries are {plural(form)}"


def mark_target(passage: str, start: int, end: int) -> str:
    """The passage with passage[start:end] wrapped in target tags."""
    return passage[:start] + TARGET_OPEN + passage[start:end] + TARGET_CLOSE + passage[end:]


def pick_examples(queries: Sequence[str], count: int, seed: int) -> list[str]:
    """`count` of the queries, chosen by a hash of (seed, text): the same ones on every machine."""
    distinct = sorted({query.strip() for query in queries if query.strip()})
    ranked = sorted(
        distinct,
        key=lambda query: hashlib.sha256(f"{seed}\0{query}".encode()).hexdigest(),
    )
    return ranked[:count]


def system_prompt(
    example_queries: Sequence[str] = (), form: Form = QUESTION, *, titled: bool = False
) -> str:
    """The system prompt for one form (titled: the writer is shown the document's title), with
    real users' queries as style examples when there are any."""
    text = SYSTEM.format(
        noun=form.noun,
        relation=form.relation,
        reply=form.reply,
        wording=form.wording,
        shown=SHOWN[titled],
    )
    if not example_queries:
        return text
    listed = "\n".join(f"- {query}" for query in example_queries)
    return text + EXAMPLES_TEMPLATE.format(verb=form.verb, noun=form.noun, examples=listed)


def few_shot_passages() -> list[str]:
    """The few-shot passages without their target marks."""
    return [passage.replace(TARGET_OPEN, "").replace(TARGET_CLOSE, "") for _, passage in FEW_SHOT]


def few_shot_turns(form: Form = QUESTION, *, titled: bool = False) -> list[dict[str, str]]:
    """The fixed turns every request of one form starts with (after the system prompt)."""
    turns: list[dict[str, str]] = []
    for (title, passage), answer in zip(FEW_SHOT, form.answers, strict=True):
        turns.append({"role": "user", "content": user_turn(passage, title=title if titled else "")})
        turns.append({"role": "assistant", "content": answer})
    return turns


def user_turn(
    marked_passage: str, asked: Sequence[str] = (), title: str = "", form: Form = QUESTION
) -> str:
    text = TITLE_TEMPLATE.format(title=title.strip()) if title.strip() else ""
    text += PASSAGE_TEMPLATE.format(passage=marked_passage)
    if asked:
        listed = "\n".join(f"- {query}" for query in asked)
        text += ASKED_TEMPLATE.format(past=form.past, verb=form.verb, asked=listed)
    return text


def build_messages(
    marked_passage: str,
    asked: Sequence[str] = (),
    corrections: Sequence[tuple[str, str]] = (),
    *,
    title: str | None = None,
    form: Form = QUESTION,
) -> list[dict[str, str]]:
    """Chat turns for one query: the few-shot examples, the marked passage (below its
    document's title, unless title is None: the writer is not shown titles), then one (answer,
    reason) exchange per earlier invalid answer, so a retry knows what was wrong even at
    temperature 0.

    asked: queries already accepted for this passage (for questions_per_passage > 1).
    """
    messages = few_shot_turns(form, titled=title is not None)
    messages.append(
        {"role": "user", "content": user_turn(marked_passage, asked, title or "", form)}
    )
    target = marked_passage.partition(TARGET_OPEN)[2].partition(TARGET_CLOSE)[0]
    for answer, reason in corrections:
        # the Messages API refuses an empty assistant turn
        messages.append({"role": "assistant", "content": answer.strip() or "(empty reply)"})
        correction = CORRECTION_TEMPLATE.format(
            noun=form.noun, reason=reason, relation=form.relation, target=target
        )
        messages.append({"role": "user", "content": correction})
    return messages


def _prompt_sha() -> str:
    template = {
        "system": SYSTEM,
        "examples": EXAMPLES_TEMPLATE,
        "title": TITLE_TEMPLATE,
        "shown": SHOWN,
        "passage": PASSAGE_TEMPLATE,
        "target": [TARGET_OPEN, TARGET_CLOSE],
        "asked": ASKED_TEMPLATE,
        "correction": CORRECTION_TEMPLATE,
        "few_shot": FEW_SHOT,
        "forms": [asdict(form) for form in FORMS.values()],
    }
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode("utf-8")).hexdigest()[:16]


# Part of every cache key and every golden-set row: editing the prompt re-asks, visibly.
PROMPT_SHA = _prompt_sha()
