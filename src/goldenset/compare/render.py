"""The comparison as a reader sees it: a pull-request comment (Markdown) or aligned columns
for a terminal, byte for byte the same rows, verdict and method."""

from __future__ import annotations

from goldenset.compare.gate import Row
from goldenset.compare.params import CompareParams
from goldenset.compare.regressed import Regressed, Texts
from goldenset.core.stats import EXACT_MAX_N

HEADER = [
    "query set", "retriever", "metric", "A", "B", "Δ", "CI of Δ",
    "p", "gate p", "worse/better/n", "",
]  # fmt: skip


def verdict(rows: list[Row], settings: CompareParams) -> str:
    regressions = [row for row in rows if row.regression]
    gated = sum(row.gated for row in rows)
    family = (
        f"alpha {settings.alpha:g} Holm-corrected over {gated} gated metric(s), "
        f"{_budgets(settings)}; {len(rows) - gated} other row(s) not gated"
    )
    if not regressions:
        return f"No significant regression ({family})."
    named = ", ".join(
        f"{row.query_set}.{row.retriever}.{row.metric} {row.delta:+.4f}" for row in regressions
    )
    return f"{len(regressions)} significant regression(s) beyond budget ({family}): {named}."


def undecided(rows: list[Row], alpha: float) -> str | None:
    """The rows the paired test does not separate (Holm-adjusted p when gated), in one line:
    there the questions cannot tell A from B, whichever mean is higher; None when there are none."""
    count = sum((row.p_gate if row.gated else row.p_value) >= alpha for row in rows)
    if not count:
        return None
    return (
        f"Undecided: {count} of {len(rows)} rows (p >= {alpha:g}): there these questions cannot "
        "tell A from B, whichever mean is higher (`goldenset calibrate --seeds` measures how often "
        "this golden set decides the close calls right)."
    )


def _budgets(settings: CompareParams) -> str:
    named = "".join(
        f", {metric} {value:g}" for metric, value in settings.budgets.items() if metric != "default"
    )
    return f"budget {settings.budget('default'):g}{named}"


def _cells(row: Row, alpha: float) -> list[str]:
    status = ""
    if row.regression:
        status = "REGRESSION"
    elif row.improvement:
        status = "improved"
    elif row.gated and row.p_gate < alpha and row.delta < 0:
        status = "worse, within budget"
    elif not row.gated and row.p_value < alpha and row.delta < 0:
        status = "worse, not gated"  # uncorrected: one of many rows, information only
    return [
        row.query_set,
        row.retriever,
        row.metric,
        f"{row.mean_a:.4f}",
        f"{row.mean_b:.4f}",
        f"{row.delta:+.4f}",
        f"[{row.low:+.4f}, {row.high:+.4f}]",
        f"{row.p_value:.3g}",
        f"{row.p_gate:.3g}" if row.gated else "not gated",
        f"{row.worse}/{row.better}/{row.n}",
        status,
    ]


def _shorten(text: str, limit: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _regressed_lines(regressed: list[Regressed], texts: Texts, code: str) -> list[str]:
    lines = []
    for item in regressed:
        question = texts.question_texts.get(item.query_set, {}).get(item.qid, "")
        ranks = f"{item.rank_a or '-'} → {item.rank_b or '-'}"
        line = (
            f"- {item.query_set}/{item.retriever} {code}{item.qid}{code} "
            f'"{_shorten(question)}": {item.metric} {item.value_a:.3f} → {item.value_b:.3f}, '
            f"first relevant at rank {ranks}"
        )
        evidence = texts.evidence.get(item.query_set, {}).get(item.qid)
        if evidence:
            line += f'; evidence "{_shorten(evidence, 70)}"'
        if item.above:
            above = ", ".join(
                f'{code}{other}{code} "{_shorten(texts.item(item.query_set, other), 60)}"'
                for other in item.above
            )
            line += f"; outranked by {above}"
        lines.append(line)
    return lines


def _method(settings: CompareParams) -> str:
    return (
        f"Δ = B − A, mean over paired questions; CI: {settings.confidence:.0%} paired bootstrap "
        f"({settings.resamples:,} resamples); p: paired randomization test, two-sided (every "
        f"sign flip up to {EXACT_MAX_N} questions, else {settings.permutations:,}), uncorrected; "
        "gate p: Holm-adjusted over the gated metrics (compare.gate), the only ones that fail "
        f"the build; seed {settings.seed}."
    )


def render_markdown(
    rows: list[Row],
    regressed: list[Regressed],
    texts: Texts,
    labels: tuple[str, str],
    settings: CompareParams,
) -> str:
    """A pull-request comment: one table, the verdict, the most regressed questions folded."""
    lines = [f"### goldenset compare: A = `{labels[0]}`, B = `{labels[1]}`", ""]
    lines.append("| " + " | ".join(HEADER) + " |")
    lines.append("|" + "|".join(["---"] * 3 + ["---:"] * 7 + ["---"]) + "|")
    for row in rows:
        lines.append("| " + " | ".join(_cells(row, settings.alpha)) + " |")
    lines += ["", f"**{verdict(rows, settings)}**", ""]
    open_calls = undecided(rows, settings.alpha)
    lines += [open_calls, ""] if open_calls else []
    if regressed:
        lines += [
            f"<details><summary>Most regressed questions ({regressed[0].metric})</summary>",
            "",
            *_regressed_lines(regressed, texts, "`"),
            "",
            "</details>",
            "",
        ]
    lines.append(f"<sub>{_method(settings)}</sub>")
    return "\n".join(lines) + "\n"


def render_text(
    rows: list[Row],
    regressed: list[Regressed],
    texts: Texts,
    labels: tuple[str, str],
    settings: CompareParams,
) -> str:
    """The same report as aligned columns, for a terminal."""
    table = [HEADER, *(_cells(row, settings.alpha) for row in rows)]
    widths = [max(len(cells[i]) for cells in table) for i in range(len(HEADER))]
    lines = [f"A = {labels[0]}, B = {labels[1]}", ""]
    for cells in table:
        lines.append(
            "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()
        )
    lines += ["", verdict(rows, settings)]
    open_calls = undecided(rows, settings.alpha)
    lines += [open_calls] if open_calls else []
    if regressed:
        lines += ["", f"Most regressed questions ({regressed[0].metric}):"]
        lines += _regressed_lines(regressed, texts, "")
    lines += ["", _method(settings)]
    return "\n".join(lines) + "\n"
