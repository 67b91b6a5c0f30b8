"""The audit of a golden set: does it read like real users' queries, or echo its source?

Pure functions over plain tables and arrays; goldenset.stages.audit reads the files and writes
metrics/audit.json (DVC metrics) and reports/audit.md (for a person).

Echo is goldenset.core.echo.echo: the highest share of a question's content words found in one
~100-word window of its document, so it means the same on an abstract and a long filing. Each
question is measured so against its document, and each real query against each document judged
relevant to it: for both, the best-matching window. overlap_evidence is the share found in the
evidence sentence. specific and answered are the generate stage's rules (goldenset.core.echo):
the question keeps a distinctive term of its evidence, and shares a word with it while naming
nothing its document never mentions.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.sparse import csr_array

from goldenset.core.echo import (
    WindowFrequency,
    WindowIndex,
    answered_terms,
    distinctive_terms,
    echo,
    overlap,
    unknown_names,
)
from goldenset.core.params import AuditParams
from goldenset.scoring.chance import chance_levels

# "What is X?", "Who were the Y?": a look-up of a name or term, answered by a definition, ending
# within a few words. Questions that go on ("What is the effect of X on Y?") do not match.
DEFINITIONAL = re.compile(
    r"^\s*(what|who)\s+(is|are|was|were)\s+(an?\s+|the\s+)?[^\s?]+(\s+[^\s?]+){0,2}\s*\?*\s*$",
    re.IGNORECASE,
)


def is_definitional(question: str) -> bool:
    return DEFINITIONAL.match(question) is not None


@dataclass
class Audit:
    metrics: dict
    flags: list[str]
    # golden set rows with overlap_evidence, echo, definitional, answered, specific
    questions: pd.DataFrame
    duplicates: list[tuple[int, int, float]] = field(default_factory=list)  # (i, j, cosine), i<j


def document_indexes(documents: pd.DataFrame) -> dict[str, WindowIndex]:
    """doc_id -> the windows of its text that questions and real queries are compared with."""
    texts = documents["text"].astype(str)
    return {
        doc_id: WindowIndex.of(text)
        for doc_id, text in zip(documents["doc_id"].astype(str), texts, strict=True)
    }


def spread(values: Sequence[float]) -> dict[str, float | None]:
    if not len(values):
        return {"median": None, "p90": None}
    return {
        "median": round(float(np.median(values)), 4),
        "p90": round(float(np.percentile(values, 90)), 4),
    }


def near_duplicate_pairs(
    vectors: np.ndarray, threshold: float, block: int = 1024
) -> list[tuple[int, int, float]]:
    """Pairs (i, j, cosine), i < j, of question vectors at least `threshold` apart in cosine.

    Compared a block of rows at a time, so memory stays O(block x n)."""
    if len(vectors) < 2:
        return []
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    pairs = []
    for start in range(0, len(unit), block):
        cosines = unit[start : start + block] @ unit.T
        rows, cols = np.nonzero(cosines >= threshold)
        pairs += [
            (start + int(r), int(c), float(cosines[r, c]))
            for r, c in zip(rows, cols, strict=True)
            if c > start + r
        ]
    return sorted(pairs, key=lambda pair: (-pair[2], pair[0], pair[1]))


def real_query_echoes(
    queries: pd.DataFrame, qrels: pd.DataFrame, documents: dict[str, WindowIndex]
) -> list[float]:
    """Echo of each real query with each document judged relevant to it (grade > 0): its
    best-matching window, as for a golden-set question."""
    text_of = dict(zip(queries["qid"], queries["text"], strict=True))
    return [
        echo(text_of[qid], documents[doc_id])
        for qid, doc_id in qrels.loc[qrels["grade"] > 0, ["qid", "doc_id"]].itertuples(index=False)
        if qid in text_of and doc_id in documents
    ]


def run_audit(
    golden: pd.DataFrame,
    documents: dict[str, WindowIndex],
    question_vectors: np.ndarray,
    generate_stats: dict,
    real_echoes: list[float] | None,
    params: AuditParams,
    distinctive_share: float | None = None,
    labelled_echoes: list[float] | None = None,
) -> Audit:
    """The audit of a golden set (qid, question, doc_id, evidence) against its documents.

    distinctive_share: generate.distinctive_share, the rarity a specific question's term has
    (None: every question counts as specific). real_echoes, labelled_echoes: the reference
    sets' echoes (real_query_echoes); the median gap is taken against real queries, else against
    labelled questions."""
    questions = golden.reset_index(drop=True).copy()
    empty = WindowIndex.of("")
    pairs = list(zip(questions["question"], questions["evidence"].astype(str), strict=True))
    questions["overlap_evidence"] = [overlap(q, e) for q, e in pairs]
    questions["echo"] = [
        echo(q, documents.get(d, empty))
        for q, d in zip(questions["question"], questions["doc_id"], strict=True)
    ]
    questions["definitional"] = [is_definitional(q) for q in questions["question"]]
    questions["answered"] = [
        bool(answered_terms(q, e)) and not unknown_names(q, documents.get(d, empty))
        for (q, e), d in zip(pairs, questions["doc_id"], strict=True)
    ]
    rarity = WindowFrequency(documents.values())
    questions["specific"] = [
        distinctive_share is None or bool(distinctive_terms(q, e, rarity, distinctive_share))
        for q, e in pairs
    ]
    duplicates = near_duplicate_pairs(question_vectors, params.duplicate_cosine)
    n = len(questions)

    def share(count: int) -> float | None:
        return round(count / n, 4) if n else None

    echoing = int((questions["echo"] >= params.echo_threshold).sum())
    metrics: dict = {
        "questions": n,
        "answers": generate_stats.get("answers"),
        "yield": generate_stats.get("yield"),
        "rejects": {"total": sum(generate_stats.get("rejects", {}).values())}
        | generate_stats.get("rejects", {}),
        "overlap_evidence": spread(questions["overlap_evidence"].tolist()),
        "echo": spread(questions["echo"].tolist()),
        "echo_share": share(echoing),
        "answered_share": share(int(questions["answered"].sum())),
        "specific_share": share(int(questions["specific"].sum())),
        "definitional_share": share(int(questions["definitional"].sum())),
        "near_duplicates": len({j for _, j, _ in duplicates}),
        "documents_covered": int(questions["doc_id"].nunique()),
        "documents": len(documents),
    }
    references = {"real_queries": real_echoes, "labelled_queries": labelled_echoes}
    for name, echoes in references.items():
        if echoes is not None:
            metrics[name] = _reference_echoes(echoes, params.echo_threshold)
    # real queries are what users type; labelled questions stand in where there are none
    against = next((name for name, echoes in references.items() if echoes), None)
    if against is not None:
        theirs, ours = metrics[against]["echo"]["median"], metrics["echo"]["median"]
        if theirs is not None and ours is not None:
            metrics["echo_median_gap"] = round(ours - theirs, 4)
            metrics["echo_gap_against"] = against
    flags = _flags(metrics, params)
    metrics["flags"] = len(flags)
    return Audit(metrics, flags, questions, duplicates)


def _reference_echoes(echoes: list[float], threshold: float) -> dict:
    """A reference query set's echoes, in the golden set's units."""
    share = round(sum(v >= threshold for v in echoes) / len(echoes), 4) if echoes else None
    return {"pairs": len(echoes), "echo": spread(echoes), "echo_share": share}


def document_chance(
    question_doc_ids: Sequence[str], doc_ids: Sequence[str], ks: Sequence[int]
) -> dict[str, float]:
    """The golden set's document-view metrics under a random ranking of every document (one
    relevant document per question): the level a score must clear before it means anything."""
    column = {doc_id: i for i, doc_id in enumerate(doc_ids)}
    cols = [column[doc_id] for doc_id in question_doc_ids if doc_id in column]
    if not cols:
        return {}
    qrels = csr_array((np.ones(len(cols)), (np.arange(len(cols)), cols)), (len(cols), len(column)))
    levels = chance_levels(qrels, len(column), ks, len(column))
    return {f"doc_{name}": round(float(values.mean()), 6) for name, values in levels.items()}


def chance_flags(chance: dict[str, float], n_documents: int, max_chance: float) -> list[str]:
    """One flag naming every metric that a random ranking already scores above
    score.max_chance (none when there is no such metric)."""
    above = [f"{name} {value:.3g}" for name, value in chance.items() if value > max_chance]
    if not above:
        return []
    return [
        f"chance: a random ranking of the {n_documents} documents scores {', '.join(above)}, "
        f"above score.max_chance {max_chance}: more documents, or smaller k"
    ]


def _flags(metrics: dict, params: AuditParams) -> list[str]:
    """What a person should look at, each from a param, so a flag is never a hidden default."""
    flags = []
    echo = metrics["echo_share"]
    if echo is not None and echo > params.max_echo_share:
        flags.append(
            f"echo: {echo:.0%} of questions find at least {params.echo_threshold:.0%} of their "
            f"content words in their document (audit.max_echo_share {params.max_echo_share:.0%})"
        )
    gap = metrics.get("echo_median_gap")
    if gap is not None and abs(gap) > params.echo_median_tolerance:
        against = metrics["echo_gap_against"]
        ours, theirs = metrics["echo"]["median"], metrics[against]["echo"]["median"]
        effect = (
            "may flatter lexical retrievers (BM25)"
            if gap > 0
            else "drops the terms real users type (vaguer than they are)"
        )
        flags.append(
            f"echo: median {ours:.2f}, {against.replace('_', ' ')} {theirs:.2f} "
            f"(audit.echo_median_tolerance {params.echo_median_tolerance}): the golden set {effect}"
        )
    for name, what in [("answered_share", "answered by"), ("specific_share", "specific to")]:
        value = metrics[name]
        if value is not None and value < params.min_specific_share:
            flags.append(
                f"{name}: only {value:.0%} of questions are {what} their evidence "
                f"(audit.min_specific_share {params.min_specific_share:.0%})"
            )
    definitional = metrics["definitional_share"]
    if definitional is not None and definitional > params.max_definitional_share:
        flags.append(
            f"look-ups: {definitional:.0%} of questions are 'what is X' "
            f"(audit.max_definitional_share {params.max_definitional_share:.0%})"
        )
    if metrics["near_duplicates"]:
        flags.append(
            f"duplicates: {metrics['near_duplicates']} questions repeat an earlier one "
            f"(embedding cosine >= {params.duplicate_cosine})"
        )
    return flags


def render_report(audit: Audit, params: AuditParams) -> str:
    """Markdown a person reads: the figures, the flags, the worst echoes, the duplicates, and a
    seeded random sample of questions with their evidence."""
    q = audit.questions
    lines = ["# Golden set audit", "", "## Figures", "", "| measure | value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in _flatten(audit.metrics)]
    lines += ["", "## Flags", ""]
    lines += [f"- {flag}" for flag in audit.flags] or ["None."]
    lines += ["", f"## Worst echoes (top {params.sample_size} by echo)", ""]
    worst = q.sort_values(["echo", "overlap_evidence", "qid"], ascending=[False, False, True])
    lines += _question_blocks(worst.head(params.sample_size))
    lines += ["", "## Near-duplicate questions", ""]
    if not audit.duplicates:
        lines.append("None.")
    for i, j, cosine in audit.duplicates[: params.sample_size]:
        first, second = q.iloc[i], q.iloc[j]
        lines.append(
            f"- {cosine:.3f}: {first.qid} {_quote(first.question)} / "
            f"{second.qid} {_quote(second.question)}"
        )
    lines += ["", f"## Random sample (seed {params.seed})", ""]
    rng = random.Random(params.seed)
    picked = sorted(rng.sample(range(len(q)), min(params.sample_size, len(q))))
    lines += _question_blocks(q.iloc[picked])
    return "\n".join(lines) + "\n"


def _question_blocks(rows: pd.DataFrame) -> list[str]:
    if rows.empty:
        return ["None."]
    lines = []
    for row in rows.itertuples(index=False):
        lines.append(
            f"- **{_quote(row.question)}** ({row.qid}, {row.doc_id}; echo {row.echo:.2f}, "
            f"overlap evidence {row.overlap_evidence:.2f}"
            f"{'' if row.specific else ', vague'}{'' if row.answered else ', not answered'})"
        )
        lines.append(f"  > {' '.join(str(row.evidence).split())}")
    return lines


def _quote(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _flatten(metrics: dict, prefix: str = "") -> list[tuple[str, object]]:
    items: list[tuple[str, object]] = []
    for name, value in metrics.items():
        if isinstance(value, dict):
            items += _flatten(value, f"{prefix}{name}.")
        else:
            items.append((prefix + name, value))
    return items
