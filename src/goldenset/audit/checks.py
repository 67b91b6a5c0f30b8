"""The audit of a golden set: does it read like real users' queries, or echo its source?

Pure functions over plain tables and arrays; goldenset.stages.audit reads the files and writes
metrics/audit.json (DVC metrics) and reports/audit.md (for a person).

Echo is goldenset.core.echo.echo: the highest share of a question's content words found in one
~100-word window of its document, so it means the same on an abstract and a long filing. Each
question is measured so against its document, and each real query against each document judged
relevant to it: for both, the best-matching window. overlap_evidence is the share found in the
evidence sentence. The judge (goldenset.judge) estimates the share of questions a strict reviewer
would accept, with an interval, and says how far it may be trusted (its cross-validated AUC).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.sparse import csr_array

from goldenset.core.echo import WindowIndex, echo, overlap
from goldenset.core.params import AuditParams
from goldenset.core.stats import bootstrap_interval
from goldenset.corpus.querysets import QuerySet, references
from goldenset.corpus.verdicts import golden_line, share_line
from goldenset.evaluation.chance import chance_levels
from goldenset.generation.prompt import plural, users_form
from goldenset.judge.model import CRITERIA, TRUSTED_AUC

# "What is X?", "Who were the Y?": a look-up of a name or term, answered by a definition, ending
# within a few words. Questions that go on ("What is the effect of X on Y?") do not match.
DEFINITIONAL = re.compile(
    r"^\s*(what|who)\s+(is|are|was|were)\s+(an?\s+|the\s+)?[^\s?]+(\s+[^\s?]+){0,2}\s*\?*\s*$",
    re.IGNORECASE,
)


def is_definitional(question: str) -> bool:
    return DEFINITIONAL.match(question) is not None


@dataclass(frozen=True)
class Acceptance:
    """The audit's judge on the golden set as written: the probability that a strict reviewer
    accepts each judged question (a column per criterion, indexed by qid: a seeded sample of the
    questions, or all) and each criterion's cross-validated ROC AUC on the labels."""

    probabilities: pd.DataFrame
    aucs: dict[str, float]
    refitted: str | None = None  # the judge file refitted with the team's verdicts, if read


@dataclass
class Audit:
    metrics: dict
    flags: list[str]
    # golden set rows with overlap_evidence, echo, definitional and, when judged, P(<criterion>)
    table: pd.DataFrame
    duplicates: list[tuple[int, int, float]] = field(default_factory=list)  # (i, j, cosine), i<j


def document_indexes(documents: pd.DataFrame) -> dict[str, WindowIndex]:
    """doc_id -> the windows of its text that questions and real queries are compared with."""
    texts = documents["text"].astype(str)
    return {
        doc_id: WindowIndex.of(text)
        for doc_id, text in zip(documents["doc_id"].astype(str), texts, strict=True)
    }


SPREAD = {"p10": 10, "p25": 25, "median": 50, "p75": 75, "p90": 90}  # percentiles reported
PLOT_QUANTILES = np.round(np.arange(0.05, 1.0, 0.05), 2)  # plots/echo.json: one row each


def spread(values: Sequence[float]) -> dict[str, float | None]:
    if not len(values):
        return dict.fromkeys(SPREAD)
    return {
        name: round(float(np.percentile(values, percentile)), 4)
        for name, percentile in SPREAD.items()
    }


def echo_quantile_rows(echoes: dict[str, Sequence[float]]) -> list[dict[str, float]]:
    """plots/echo.json: each set's echo at PLOT_QUANTILES (a column per set; null for a set
    without queries, so that the plot's columns are the same on every corpus), so the golden
    set's distribution is read against the real queries' tail to tail."""
    return [
        {"quantile": float(q)}
        | {
            name: round(float(np.quantile(values, q)), 4) if len(values) else None
            for name, values in echoes.items()
        }
        for q in PLOT_QUANTILES
    ]


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


@dataclass(frozen=True)
class ChanceLimit:
    """score.ks and score.max_chance: the golden set's document view must clear chance."""

    ks: Sequence[int]
    max_chance: float


def reference_echoes(
    query_sets: Mapping[str, QuerySet], documents: dict[str, WindowIndex]
) -> dict[str, list[float] | None]:
    """Each reference set's echoes by its label (real queries first), None for a set without
    questions: each document judged relevant (holding evidence) to a question is read."""
    echoes: dict[str, list[float] | None] = {}
    for entry in references():
        questions = query_sets[entry.name]
        table = pd.DataFrame({"qid": questions.qids, "text": questions.texts})
        judgments = questions.document_judgments() if len(questions) else None
        echoes[str(entry.echo_label)] = (
            None if judgments is None else real_query_echoes(table, judgments, documents)
        )
    return echoes


def reference_form(query_sets: Mapping[str, QuerySet]) -> tuple[str, str] | None:
    """(label, form) of the first reference set with queries (real queries first): the form
    most of them take; None when there is none."""
    for entry in references():
        texts = query_sets[entry.name].texts
        if texts:
            return str(entry.echo_label), users_form(texts)
    return None


def run_audit(
    golden: pd.DataFrame,
    documents: dict[str, WindowIndex],
    question_vectors: np.ndarray,
    generate_stats: dict,
    params: AuditParams,
    references: Mapping[str, list[float] | None],
    acceptance: Acceptance | None = None,
    chance: ChanceLimit | None = None,
    review: dict | None = None,
    reference_form: tuple[str, str] | None = None,
    rarest_word: dict | None = None,
) -> Audit:
    """The audit of a golden set (qid, question, doc_id, evidence) against its documents.

    references: every reference set's echoes by its label (reference_echoes), the yardstick
    first (real queries; labelled questions where there are none). acceptance: the judge's
    probabilities (None: no estimate of the strict pass share). chance: the chance levels of the
    document view, flagged above the limit (None: not computed). review: a person's pass share
    and the judge against the person (goldenset.review.pass_shares; None: no verdict).
    reference_form: (the reference set's label, the form most of its queries take), flagged when
    the golden set is written in another (None: no reference queries). rarest_word: the
    rarest-word shares (goldenset.audit.rarest.rarest_word_figures; None: not measured)."""
    table = golden.reset_index(drop=True).copy()
    empty = WindowIndex.of("")
    pairs = list(zip(table["question"], table["evidence"].astype(str), strict=True))
    table["overlap_evidence"] = [overlap(q, e) for q, e in pairs]
    table["echo"] = [
        echo(q, documents.get(d, empty))
        for q, d in zip(table["question"], table["doc_id"], strict=True)
    ]
    table["definitional"] = [is_definitional(q) for q in table["question"]]
    if acceptance is not None:
        for criterion in acceptance.probabilities:
            # NaN: not judged (not drawn, or a person's version of a question)
            table[f"p_{criterion}"] = table["qid"].map(acceptance.probabilities[criterion])
    duplicates = near_duplicate_pairs(question_vectors, params.duplicate_cosine)
    n = len(table)

    def share(count: int) -> float | None:
        return round(count / n, 4) if n else None

    echoing = int((table["echo"] >= params.echo_threshold).sum())
    metrics: dict = {
        "questions": n,
        "form": generate_stats.get("form") or "question",  # what the writer wrote (prompt.Form)
        "form_reason": generate_stats.get("form_reason") or "",  # why (prompt.chosen_form)
        **(
            {"reference_form": dict(zip(["queries", "form"], reference_form, strict=True))}
            if reference_form
            else {}
        ),
        "written": generate_stats.get("questions"),  # before people's verdicts applied
        "answers": generate_stats.get("answers"),
        "yield": generate_stats.get("yield"),
        "rejects": {"total": sum(generate_stats.get("rejects", {}).values())}
        | generate_stats.get("rejects", {}),
        "overlap_evidence": spread(table["overlap_evidence"].tolist()),
        "echo": spread(table["echo"].tolist()),
        "echo_share": share(echoing),
        "definitional_share": share(int(table["definitional"].sum())),
        "near_duplicates": len({j for _, j, _ in duplicates}),
        "documents_covered": int(table["doc_id"].nunique()),
        "documents": len(documents),
    }
    if acceptance is not None:
        metrics["judge"] = judge_estimates(acceptance, params)
    if review is not None:
        metrics["review"] = review
    if rarest_word is not None:
        metrics["rarest_word"] = rarest_word
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
    levels = None
    if chance is not None:
        levels = document_chance(table["doc_id"].astype(str), list(documents), chance.ks)
        flags.extend(chance_flags(levels, len(documents), chance.max_chance))
    metrics["flags"] = len(flags)
    if levels is not None:
        metrics["chance"] = {"documents": len(documents), **levels}
    return Audit(metrics, flags, table, duplicates)


def judge_estimates(acceptance: Acceptance, params: AuditParams) -> dict:
    """Per criterion: the estimated share a strict reviewer accepts (the mean probability), its
    bootstrap interval over the questions, and whether the judge may be trusted on it."""
    estimates: dict = {"judged": len(acceptance.probabilities)}
    if acceptance.refitted is not None:
        estimates["refitted"] = acceptance.refitted
    settings = params.intervals
    for criterion in CRITERIA:
        if criterion not in acceptance.probabilities:
            continue
        values = acceptance.probabilities[criterion].to_numpy(np.float64)
        interval = bootstrap_interval(
            values, settings.resamples, settings.confidence, settings.seed
        )
        auc = acceptance.aucs[criterion]
        estimates[criterion] = {
            "estimate": round(float(values.mean()), 4) if len(values) else None,
            "low": None if np.isnan(interval.low) else round(interval.low, 4),
            "high": None if np.isnan(interval.high) else round(interval.high, 4),
            "auc": auc,
            "trusted": auc >= TRUSTED_AUC,
        }
    return estimates


def _reference_echoes(echoes: list[float], threshold: float) -> dict:
    """A reference query set's echoes, in the golden set's units."""
    share = round(sum(v >= threshold for v in echoes) / len(echoes), 4) if echoes else None
    return {"pairs": len(echoes), "echo": spread(echoes), "echo_share": share}


def rarest_word_flags(rarest: dict, tolerance: float) -> list[str]:
    """One flag when the golden set carries its document's rarest word more (or less) often
    than the reference queries by more than the tolerance."""
    gap = rarest.get("gap")
    if gap is None or abs(gap) <= tolerance:
        return []
    effect = (
        "hands lexical retrieval its answer: it may flatter BM25 and hide what tells BM25's "
        "variants apart"
        if gap > 0
        else "names its subject less often than users do"
    )
    return [
        f"rarest word: {rarest['golden']:.0%} of the questions carry their document's rarest "
        f"word, {rarest['against'].replace('_', ' ')} {rarest['reference']:.0%} "
        f"(audit.rarest_word_tolerance {tolerance}): the golden set {effect}"
    ]


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
    flags += rarest_word_flags(metrics.get("rarest_word") or {}, params.rarest_word_tolerance)
    reference = metrics.get("reference_form")
    if reference and reference["form"] != metrics["form"]:
        why = metrics["form_reason"] or "generate.form"
        # auto already follows the examples: what it lacks is examples in the users' form
        fix = (
            "give generate.example_queries in their form"
            if why.startswith("auto")
            else "generate.form: auto writes the users' form"
        )
        flags.append(
            f"form: the golden set is written as {plural(metrics['form'])} ({why}); most "
            f"{reference['queries'].replace('_', ' ')} are {plural(reference['form'])}: {fix}"
        )
    flags += _acceptance_flags(metrics, params)
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


def _acceptance_flags(metrics: dict, params: AuditParams) -> list[str]:
    """The strict pass share below audit.min_pass_share: the person's, once enough random-sample
    verdicts exist (review.min_verdicts), else the judge's estimate."""
    person = metrics.get("review", {}).get("person", {})
    if person.get("enough"):
        if person["estimate"] >= params.min_pass_share:
            return []
        return [
            f"review: a person passed {person['estimate']:.0%} [{person['low']:.0%}, "
            f"{person['high']:.0%}] of {person['checked']} questions drawn at random "
            f"(audit.min_pass_share {params.min_pass_share:.0%}); the ones failed are not "
            "scored (review.leave_out_failed): review the rest with `goldenset review`"
        ]
    passing = metrics.get("judge", {}).get("pass")
    if not passing or passing["estimate"] is None or passing["estimate"] >= params.min_pass_share:
        return []
    trust = "trusted" if passing["trusted"] else f"below {TRUSTED_AUC} to be trusted"
    which = metrics["judge"].get("refitted")
    named = "the judge" if which is None else f"the judge refitted with your verdicts ({which})"
    until = (
        f"; {person['checked']} of review.min_verdicts {person['min_verdicts']} random-sample "
        "verdicts, after which the person's share sets this flag"
        if person
        else ""
    )
    return [
        f"judge: an estimated {passing['estimate']:.0%} [{passing['low']:.0%}, "
        f"{passing['high']:.0%}] of questions would pass a strict reviewer "
        f"(audit.min_pass_share {params.min_pass_share:.0%}; {named} ranks held-out "
        f"labels at ROC AUC {passing['auc']:.2f}, {trust}{until}): read the least likely below, "
        "or review them (`goldenset review`)"
    ]


def render_report(
    audit: Audit,
    params: AuditParams,
    review: Sequence[str] = (),
    calibrated: Sequence[str] = (),
) -> str:
    """Markdown a person reads: the verdict in one look (`calibrated`: its calibration lines,
    calibration_lines), the figures, the flags, people's review (`review`: its lines,
    goldenset.review.pass_shares), the worst echoes, the duplicates, and a seeded random sample of
    questions with their evidence."""
    q = audit.table
    lines = ["# Golden set audit", "", *opening(audit), *calibrated, "", "## Figures", ""]
    lines += ["| measure | value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in _flatten(audit.metrics)]
    lines += ["", "## Flags", ""]
    lines += [f"- {flag}" for flag in audit.flags] or ["None."]
    if review:
        lines += ["", "## People's review", "", *review]
    lines += ["", f"## Worst echoes (top {params.sample_size} by echo)", ""]
    worst = q.sort_values(["echo", "overlap_evidence", "qid"], ascending=[False, False, True])
    lines += _question_blocks(worst.head(params.sample_size))
    if "p_pass" in q:
        lines += ["", "## Least likely to pass a strict reviewer (by the judge)", ""]
        read = q.dropna(subset=["p_pass"]).sort_values(["p_pass", "qid"])
        lines += _question_blocks(read.head(params.sample_size))
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


OPENING_WIDTH = 100  # characters a line of the opening takes at most
OPENING_FLAGS = 10  # flags the opening names, each on one line
OPENING_AGREEMENTS = 3  # pairs of labellers the opening names, each on one line


def opening(audit: Audit) -> list[str]:
    """The audit's verdict in one look, before its figures: the people's pass share, their
    agreement, the judge's estimate and the flags, each on one line (the flags cut short: they
    are whole under Flags)."""
    m = audit.metrics
    why = m.get("form_reason") or "generate.form"
    counted = f"{m['questions']} {plural(m.get('form') or 'question')}"
    if m.get("written") not in (None, m["questions"]):  # people's verdicts applied
        counted += f" scored of the {m['written']} written"
    lines = [f"**In one look:** {counted} ({why}).", ""]
    lines += _person_lines(m.get("review"))
    passing = m.get("judge", {}).get("pass")
    if passing and passing["estimate"] is not None:
        trust = "trusted" if passing["trusted"] else "not trusted"
        lines.append(
            f"- the judge: {passing['estimate']:.0%} [{passing['low']:.0%}, "
            f"{passing['high']:.0%}] would pass (held-out ROC AUC {passing['auc']:.2f}, {trust})"
        )
    flags = audit.flags
    lines.append(f"- flags: {len(flags)}" + (":" if flags else ""))
    lines += [_cut(f"  - {flag}") for flag in flags[:OPENING_FLAGS]]
    if len(flags) > OPENING_FLAGS:
        lines.append(f"  - and {len(flags) - OPENING_FLAGS} more, under Flags")
    return lines


OPENING_GROUPS = 4  # close-call groups the opening's calibration lines name


def calibration_lines(calibrated: dict | None, golden_md5: str | None) -> list[str]:
    """The opening's word on `goldenset calibrate` (metrics/calibration.json): each close-call
    group's decisions on its document view (else its first), pooled over the seeds, while the
    golden set is the one calibrated; else that it is not calibrated on this set."""
    if calibrated is None or calibrated.get("golden_set_md5") != golden_md5:
        return ["- calibrate: not calibrated on this set (`goldenset calibrate`)"]
    try:
        return _calibrated_lines(calibrated)
    except (KeyError, TypeError, AttributeError, StopIteration):  # a hand-edited or foreign file
        return ["- calibrate: metrics/calibration.json is damaged: run `goldenset calibrate` again"]


def _calibrated_lines(calibrated: dict) -> list[str]:
    commit = (calibrated.get("commit") or "no commit")[:7]
    seeds = ", ".join(calibrated["seeds"])
    lines = [f"- calibrate, at {commit}, seeds {seeds} pooled: of the pairs real queries separate"]
    groups = {k: v for k, v in calibrated["groups"].items() if k != "whole grid"}
    for name, views in list((groups or calibrated["groups"]).items())[:OPENING_GROUPS]:
        view = "document" if "document" in views else next(iter(views))
        pooled = views[view]["pooled"]
        lines.append(
            _cut(
                f"  - {name}, {view}: {pooled['right']} right, {pooled['wrong']} wrong, "
                f"{pooled['undecided']} undecided of {pooled['pairs_separated']}"
            )
        )
    return lines


def _person_lines(review: dict | None) -> list[str]:
    if review is None:
        return ["- a person: no verdict yet (`goldenset review`)"]
    person = review["person"]
    if not person["checked"]:
        return ["- a person: no verdict on a question drawn at random yet"]
    lines = [f"- a person, on questions drawn at random: {share_line(person)}"]
    if "golden" in person:
        lines.append(_cut(f"  - {golden_line(person['golden'])}"))
    if "now" in person:
        lines.append(
            f"  - of the set as it is now ({person['replaced']} failed asked again): "
            f"{share_line(person['now'])}"
        )
    # one line a pair of labellers grows as n²: the pairs that judged most in common, then a count
    pairs = sorted(review.get("agreement", []), key=lambda pair: -pair["questions"])
    for agreement in pairs[:OPENING_AGREEMENTS]:
        kappa = "n/a" if agreement["kappa"] is None else f"{agreement['kappa']:.2f}"
        lines.append(
            _cut(
                f"- agreement: {agreement['agreed']} of {agreement['questions']} "
                f"({agreement['share']:.0%}), Cohen's kappa {kappa}: "
                + " and ".join(agreement["labellers"])
            )
        )
    if len(pairs) > OPENING_AGREEMENTS:
        lines.append(
            f"  - and {len(pairs) - OPENING_AGREEMENTS} more pairs of labellers, in "
            "metrics/audit.json (review.agreement)"
        )
    return lines


def _cut(line: str) -> str:
    return line if len(line) <= OPENING_WIDTH else line[: OPENING_WIDTH - 1] + "…"


def _question_blocks(rows: pd.DataFrame) -> list[str]:
    if rows.empty:
        return ["None."]
    lines = []
    for row in rows.itertuples(index=False):
        lines.append(
            f"- **{_quote(row.question)}** ({row.qid}, {row.doc_id}; echo {row.echo:.2f}, "
            f"overlap evidence {row.overlap_evidence:.2f}{_judged(row)})"
        )
        lines.append(f"  > {' '.join(str(row.evidence).split())}")
    return lines


def _judged(row: tuple) -> str:
    """ ", judge: pass 0.31 (answered 0.40, specific 0.72)" when the row was judged."""
    p = {c: getattr(row, f"p_{c}") for c in CRITERIA if hasattr(row, f"p_{c}")}
    if not p or any(np.isnan(v) for v in p.values()):
        return ""
    rest = ", ".join(f"{c} {v:.2f}" for c, v in p.items() if c != "pass")
    return f"; judge: pass {p['pass']:.2f} ({rest})" if "pass" in p else f"; judge: {rest}"


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
