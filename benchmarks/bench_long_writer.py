"""The question writer on long documents: kept share and kept questions per minute.

Ingests FOLDER (e.g. the long SciFact documents `benchmarks/long_documents.py` writes) as the
ingest stage does, and runs this checkout's params.yaml `generate` section on it with
`--questions` questions, a fresh answer cache and the model loaded before the clock starts.
Prints questions asked and kept, rejects by reason, kept per minute, the questions per file,
the median echo of the kept questions beside that of the folder's labelled questions
(labelled.jsonl and SQuAD files, each against the documents of its evidence), and the kept
questions with their evidence.

    python benchmarks/long_documents.py /tmp/long --documents 4 --chars 150000
    PYTHONPATH=src python benchmarks/bench_long_writer.py /tmp/long --questions 30
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="a folder of long documents")
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()

    import pandas as pd

    from goldenset.audit.checks import document_indexes
    from goldenset.core.echo import echo
    from goldenset.corpus.ingest import ingest
    from goldenset.corpus.labelled import read_labelled_file
    from goldenset.generation.params import GenerateParams
    from goldenset.generation.prompt import pick_examples
    from goldenset.generation.providers.registry import make_provider
    from goldenset.generation.runner import run_generation

    generate = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["generate"]
    with tempfile.TemporaryDirectory() as tmp:
        result = ingest(args.folder, max_file_mb=20)
        documents = [(d.doc_id, d.text) for d in result.documents]
        titles = {d.doc_id: d.title for d in result.documents}
        print("files:", {d.doc_id: (d.title, len(d.text)) for d in result.documents})
        overrides = {
            "max_questions": args.questions,
            "cache_dir": str(Path(tmp) / "cache"),
            "request_timeout": 3600,  # a loaded machine must not cut answers short
        }
        params = GenerateParams(**{**generate, **overrides})
        provider = make_provider(params)
        provider.load()  # the clock measures questions, not the model load
        shown = params.example_queries if isinstance(params.example_queries, list) else []
        examples = pick_examples(shown, params.example_count, params.seed)
        started = time.perf_counter()
        run = run_generation(
            documents,
            params,
            provider=provider,
            progress=True,
            example_queries=examples,
            titles=titles,
        )
        seconds = time.perf_counter() - started
    stats, rows = run.stats, run.rows
    indexes = document_indexes(pd.DataFrame(documents, columns=["doc_id", "text"]))
    echoes = [echo(row["question"], indexes[row["doc_id"]]) for row in rows]
    print(f"asked {stats.questions_planned}, kept {len(rows)} ", end="")
    print(f"({len(rows) / max(stats.questions_planned, 1):.0%}), requests {stats.requests}")
    print(f"{seconds:.0f} s: {len(rows) / seconds * 60:.1f} kept/min")
    print("rejects:", dict(stats.rejected), "invalid answers:", dict(stats.invalid_answers))
    print("questions per file:", dict(Counter(row["doc_id"] for row in rows)))
    labelled_file = args.folder / "labelled.jsonl"
    labelled = [*result.squad_questions]
    labelled += read_labelled_file(labelled_file) if labelled_file.exists() else []
    labelled_echoes = [
        echo(question.text, indexes[excerpt.doc_id])
        for question in labelled
        for excerpt in question.evidence
        if excerpt.doc_id in indexes
    ]
    for name, values in [("golden set", echoes), ("labelled", labelled_echoes)]:
        if values:
            print(f"median echo, {name}: {statistics.median(values):.2f} ({len(values)})")
    for row, value in zip(rows, echoes, strict=True):
        print(f"- {row['question']}  (echo {value:.2f})\n  > {' '.join(row['evidence'].split())}")


if __name__ == "__main__":
    main()
