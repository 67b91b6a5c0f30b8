"""What blinds the golden set to the differences between lexical rankers?

Runs the project's `goldenset calibrate` grid once (its `calibrate:` params: set them to the
`lexical` group, `python benchmarks/lexical_causes.py PROJECT`), then judges the group on
selections of the golden questions, each chosen by one property a candidate cause changes, the
reference unchanged:

- all: the golden set as calibrate reads it;
- rarest word matched: questions that carry their document's rarest word dropped at random
  (seeded, several draws) until the share is the reference's (goldenset.audit.rarest);
- without the rarest word / with it: the questions that do not carry it, and those that do;
- short / long: the shorter and the longer half, by words.

For each: the questions kept, their rarest-word share and median length, the pairs the reference
separates and how the selection orders them (right, wrong, undecided: the golden set's own paired
test), tau against a reference half beside the halves' own (the noise ceiling).

    python benchmarks/lexical_causes.py PROJECT [GROUP] [VIEW]   # lexical, document
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.audit.rarest import Corpus, carried, query_set_share
from goldenset.calibrate.figures import assess
from goldenset.calibrate.params import CalibrateCommand
from goldenset.calibrate.runs import run_configurations, usable_views
from goldenset.core.params import load_stage_params
from goldenset.corpus.querysets import QUERY_SETS, file_reader, read_query_set

DRAWS = 5  # random draws of a matched selection


def reference_share(project: Path, corpus: Corpus, reference: str) -> float:
    share = query_set_share(corpus, read_query_set(QUERY_SETS[reference], file_reader(project)))
    assert share is not None, f"{reference} has no questions"
    return share


def main(project: Path, group: str, view_name: str) -> None:
    project = project.resolve()
    params = load_stage_params(CalibrateCommand, project / "params.yaml")
    assert params.calibrate is not None
    settings = params.calibrate.model_copy(
        update={"groups": {group: params.calibrate.groups[group]}}
    )
    scored = run_configurations(project, params, None, lambda line: print(line, file=sys.stderr))
    views, _ = usable_views(scored.results, settings, scored.refused)
    [view] = [view for view in views if view.name == view_name]
    golden_name = next(entry.name for entry in QUERY_SETS.values() if entry.golden)
    reference = view.reference.partition(".")[0]

    documents = pd.read_parquet(project / "data/documents.parquet", columns=["doc_id", "text"])
    corpus = Corpus.of(dict(zip(documents["doc_id"], documents["text"], strict=True)))
    rows = scored.results[scored.results["query_set"] == golden_name]
    table = pd.read_json(project / "data/applied.jsonl", lines=True, dtype=False)
    table = table[table["qid"].isin(set(rows["qid"]))].reset_index(drop=True)
    table["carries"] = carried(corpus, table["question"].tolist(), [[d] for d in table["doc_id"]])
    table["words"] = table["question"].str.split().str.len()
    target = reference_share(project, corpus, reference)

    def judged(qids: set[str]) -> tuple:
        kept = scored.results[
            (scored.results["query_set"] != golden_name) | scored.results["qid"].isin(qids)
        ]
        figures = assess(kept, scored.configurations, [view], [], settings)
        [result] = figures.groups[group].views
        return (
            result.pairs_significant,
            result.right,
            len(result.wrong),
            result.undecided,
            result.noise.tau_golden_half,
            result.noise.tau_halves,
        )

    rng = np.random.default_rng(0)
    carrying = table.index[table["carries"]].to_numpy()
    keep_carrying = int(round(target * (~table["carries"]).sum() / (1 - target)))
    median = table["words"].median()
    selections: dict[str, list[set[str]]] = {
        "all": [set(table["qid"])],
        "rarest word matched": [
            set(table.loc[~table["carries"], "qid"])
            | set(table.loc[rng.choice(carrying, min(keep_carrying, len(carrying)), False), "qid"])
            for _ in range(DRAWS)
        ],
        "without the rarest word": [set(table.loc[~table["carries"], "qid"])],
        "with the rarest word": [set(table.loc[table["carries"], "qid"])],
        "short half": [set(table.loc[table["words"] <= median, "qid"])],
        "long half": [set(table.loc[table["words"] > median, "qid"])],
    }
    print(
        f"{group}, view {view_name}: the golden set's selections against {reference} "
        f"(rarest-word share {target:.0%}); a matched selection averages {DRAWS} draws"
    )
    print(
        "| selection | questions | rarest word | median words | reference separates | right | "
        "wrong | undecided | tau golden vs half | tau half vs half |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, draws in selections.items():
        figures = np.array([judged(qids) for qids in draws], dtype=float).mean(axis=0)
        chosen = table[table["qid"].isin(draws[0])]
        separated, right, wrong, undecided, tau, ceiling = figures
        print(
            f"| {name} | {len(chosen)} | {chosen['carries'].mean():.0%} | "
            f"{chosen['words'].median():.0f} | {separated:.0f} | {right:.1f} | {wrong:.1f} | "
            f"{undecided:.1f} | {tau:.2f} | {ceiling:.2f} |"
        )


if __name__ == "__main__":
    project, group, view = [*sys.argv[1:], "lexical", "document"][:3]
    main(Path(project), group, view if len(sys.argv) > 3 else "document")
