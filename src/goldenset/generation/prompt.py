"""The prompt that asks an LLM for one natural question about a passage, and the evidence for it.

Few-shot examples are earlier user/assistant turns rather than text in the system prompt: small
local models follow demonstrated turns far better than described rules, and a fixed prefix lets
the local backend reuse its state across passages.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

SYSTEM = """You write test questions for a search engine over a team's documents.

You get one passage. Write ONE question that a real user might type into the search box, and \
that the passage answers.
- Ask in your own words, the way someone who has not read the passage would ask: do not quote \
it and do not reuse its distinctive phrases.
- The question must stand on its own: never mention "the passage", "the text" or "this study".
- One question only: a single sentence that ends with a question mark.
- Then copy, exactly as written, the sentence or consecutive sentences of the passage that \
answer it.

Reply with only a JSON object: {"question": "...", "evidence": "..."}"""

PASSAGE_TEMPLATE = "<passage>\n{passage}\n</passage>"
ASKED_TEMPLATE = "\n\nAlready asked about this passage, so ask about something else:\n{asked}"
CORRECTION_TEMPLATE = (
    "That answer cannot be used: {reason}. Reply again with only one JSON object "
    '{{"question": "...", "evidence": "..."}} that follows the rules.'
)

FEW_SHOT: tuple[tuple[str, str, str], ...] = (
    (
        "Backups run every night at 02:00 UTC and are kept for 35 days. Restoring one requires "
        "a ticket to the storage team, who usually respond within four hours. Snapshots taken "
        "before a schema migration are kept for a year.",
        "How long do we keep the nightly backups?",
        "Backups run every night at 02:00 UTC and are kept for 35 days.",
    ),
    (
        "Vitamin D deficiency is common at northern latitudes in winter. In a randomized trial "
        "of 2,000 adults, daily supplementation did not reduce the incidence of fractures "
        "compared with placebo. Participants with the lowest baseline levels showed a modest "
        "gain in bone density.",
        "Do vitamin D supplements prevent broken bones?",
        "In a randomized trial of 2,000 adults, daily supplementation did not reduce the "
        "incidence of fractures compared with placebo.",
    ),
    (
        "The client retries failed requests automatically. By default it makes two retries "
        "with exponential backoff; set max_retries to 0 to turn this off. Connection errors, "
        "timeouts, 429 and 5xx responses are retried.",
        "Which errors does the SDK retry on its own?",
        "Connection errors, timeouts, 429 and 5xx responses are retried.",
    ),
)


def answer_json(question: str, evidence: str) -> str:
    return json.dumps({"question": question, "evidence": evidence}, ensure_ascii=False)


def _few_shot_turns() -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for passage, question, evidence in FEW_SHOT:
        turns.append({"role": "user", "content": PASSAGE_TEMPLATE.format(passage=passage)})
        turns.append({"role": "assistant", "content": answer_json(question, evidence)})
    return turns


def user_turn(passage: str, asked: Sequence[str] = ()) -> str:
    text = PASSAGE_TEMPLATE.format(passage=passage)
    if asked:
        text += ASKED_TEMPLATE.format(asked="\n".join(f"- {question}" for question in asked))
    return text


def build_messages(
    passage: str, asked: Sequence[str] = (), corrections: Sequence[tuple[str, str]] = ()
) -> list[dict[str, str]]:
    """Chat turns for one question: the few-shot examples, the passage, then one (answer, reason)
    exchange per earlier invalid answer, so a retry knows what was wrong even at temperature 0.

    asked: questions already accepted for this passage (for questions_per_passage > 1).
    """
    messages = _few_shot_turns()
    messages.append({"role": "user", "content": user_turn(passage, asked)})
    for answer, reason in corrections:
        # the Messages API refuses an empty assistant turn
        messages.append({"role": "assistant", "content": answer.strip() or "(empty reply)"})
        messages.append({"role": "user", "content": CORRECTION_TEMPLATE.format(reason=reason)})
    return messages


def _prompt_sha() -> str:
    template = {
        "system": SYSTEM,
        "passage": PASSAGE_TEMPLATE,
        "asked": ASKED_TEMPLATE,
        "correction": CORRECTION_TEMPLATE,
        "few_shot": FEW_SHOT,
    }
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode("utf-8")).hexdigest()[:16]


# Part of every cache key and every golden-set row: editing the prompt re-asks, visibly.
PROMPT_SHA = _prompt_sha()
