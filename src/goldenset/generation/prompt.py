"""The prompt that asks an LLM for one natural question about a sentence the program marked.

The program, not the model, picks the evidence: one sentence of the passage, wrapped in
<target>...</target>. The model only writes a question that sentence answers, one line of plain
text, so it cannot mis-copy the evidence, and a small local model writes ~20 tokens instead of
~60. Few-shot examples are earlier user/assistant turns rather than text in the system prompt:
small models follow demonstrated turns far better than described rules, and the fixed prefix
(system prompt and few-shot turns) lets the local backend evaluate it once for every request.
The examples paraphrase on purpose (everyday words) but keep the one term that names their
subject (vitamin D, max_retries, the storage team): a question that copies the passage's words
flatters lexical retrievers, and one that drops its subject ("Are high levels of a protein linked
to longer life?") fits any document and cannot be found.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

SYSTEM = """You write test questions for a search engine over a team's documents.

You get a passage in which one sentence is marked <target>...</target>. Write ONE question that \
the marked sentence answers, the way a user who has not read the passage would type it into a \
search box.
- Keep the one specific name or term the marked sentence is about (a gene, drug, product, \
place, person, number) so the question could only be about this document; say everything else \
in your own everyday words, not the passage's wording.
- The question must stand on its own; never say "the passage", "the text", "this study", \
"he" or "she".
- Write the question in the same language as the passage.
- Reply with the question only: one line that ends with a question mark."""

EXAMPLES_TEMPLATE = (
    "\n\nReal users' searches look like these; match their vocabulary and length, but still ask "
    "a question (they are style examples only, never ask about them):\n{examples}"
)
PASSAGE_TEMPLATE = "<passage>\n{passage}\n</passage>"
TARGET_OPEN, TARGET_CLOSE = "<target>", "</target>"
ASKED_TEMPLATE = "\n\nAlready asked about this passage, so ask something else:\n{asked}"
# the target sentence is repeated: small models otherwise drift to a few-shot passage's target
CORRECTION_TEMPLATE = (
    "That question cannot be used: {reason}. Reply with only a new one-line question that this "
    "sentence of the passage answers: {target}"
)

# (passage with its target sentence marked, question)
# the German example comes first: small models copy the language of the last example they saw
FEW_SHOT: tuple[tuple[str, str], ...] = (
    (
        "Der Client wiederholt fehlgeschlagene Anfragen automatisch. <target>Standardmäßig "
        "versucht er es zweimal mit wachsendem Abstand; max_retries auf 0 schaltet das ab."
        "</target>",
        "Wie verhindere ich, dass der Client mit max_retries Aufrufe von selbst neu sendet?",
    ),
    (
        "Backups run every night at 02:00 UTC and are kept for 35 days. <target>Restoring one "
        "requires a ticket to the storage team, who usually respond within four hours.</target> "
        "Snapshots taken before a schema migration are kept for a year.",
        "Who do I ask to get an old copy of my data back from the storage team, and how fast?",
    ),
    (
        "Vitamin D deficiency is common at northern latitudes in winter. <target>In a randomized "
        "trial of 2,000 adults, daily supplementation did not reduce the incidence of fractures "
        "compared with placebo.</target>",
        "Do daily vitamin D pills stop broken bones?",
    ),
)


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


def system_prompt(example_queries: Sequence[str] = ()) -> str:
    """The system prompt, with real users' queries as style examples when there are any."""
    if not example_queries:
        return SYSTEM
    listed = "\n".join(f"- {query}" for query in example_queries)
    return SYSTEM + EXAMPLES_TEMPLATE.format(examples=listed)


def few_shot_passages() -> list[str]:
    """The few-shot passages without their target marks."""
    return [passage.replace(TARGET_OPEN, "").replace(TARGET_CLOSE, "") for passage, _ in FEW_SHOT]


def few_shot_turns() -> list[dict[str, str]]:
    """The fixed turns every request starts with (after the system prompt)."""
    turns: list[dict[str, str]] = []
    for passage, question in FEW_SHOT:
        turns.append({"role": "user", "content": PASSAGE_TEMPLATE.format(passage=passage)})
        turns.append({"role": "assistant", "content": question})
    return turns


def user_turn(marked_passage: str, asked: Sequence[str] = ()) -> str:
    text = PASSAGE_TEMPLATE.format(passage=marked_passage)
    if asked:
        text += ASKED_TEMPLATE.format(asked="\n".join(f"- {question}" for question in asked))
    return text


def build_messages(
    marked_passage: str, asked: Sequence[str] = (), corrections: Sequence[tuple[str, str]] = ()
) -> list[dict[str, str]]:
    """Chat turns for one question: the few-shot examples, the marked passage, then one
    (answer, reason) exchange per earlier invalid answer, so a retry knows what was wrong even at
    temperature 0.

    asked: questions already accepted for this passage (for questions_per_passage > 1).
    """
    messages = few_shot_turns()
    messages.append({"role": "user", "content": user_turn(marked_passage, asked)})
    target = marked_passage.partition(TARGET_OPEN)[2].partition(TARGET_CLOSE)[0]
    for answer, reason in corrections:
        # the Messages API refuses an empty assistant turn
        messages.append({"role": "assistant", "content": answer.strip() or "(empty reply)"})
        correction = CORRECTION_TEMPLATE.format(reason=reason, target=target)
        messages.append({"role": "user", "content": correction})
    return messages


def _prompt_sha() -> str:
    template = {
        "system": SYSTEM,
        "examples": EXAMPLES_TEMPLATE,
        "passage": PASSAGE_TEMPLATE,
        "target": [TARGET_OPEN, TARGET_CLOSE],
        "asked": ASKED_TEMPLATE,
        "correction": CORRECTION_TEMPLATE,
        "few_shot": FEW_SHOT,
    }
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode("utf-8")).hexdigest()[:16]


# Part of every cache key and every golden-set row: editing the prompt re-asks, visibly.
PROMPT_SHA = _prompt_sha()
