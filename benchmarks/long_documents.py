"""The question writer on long documents: kept share and kept questions per minute.

Builds `--files` Markdown files of at least `--chars` characters each from a BEIR corpus (SciFact
abstracts, each under its own `## title` heading, the file titled `# Collection N`), ingests them
as the ingest stage does, and runs this checkout's params.yaml `generate` section on them with
`--questions` questions, a fresh answer cache and the model loaded before the clock starts.
Prints questions asked and kept, rejects by reason, kept per minute, the questions per file and
the kept questions with their evidence.

    PYTHONPATH=src python benchmarks/long_documents.py ../shared/datasets/scifact/corpus.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def write_long_files(corpus: Path, folder: Path, files: int, chars: int) -> None:
    """`files` Markdown files, each of consecutive abstracts until it has `chars` characters."""
    with gzip.open(corpus, "rt", encoding="utf-8") as lines:
        records = (json.loads(line) for line in lines)
        for number in range(1, files + 1):
            parts = [f"# Collection {number}\n"]
            size = 0
            while size < chars:
                record = next(records)
                part = f"## {record['title'].strip()}\n\n{record['text'].strip()}\n"
                parts.append(part)
                size += len(part)
            (folder / f"collection-{number}.md").write_text("\n".join(parts), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="a BEIR corpus.jsonl.gz")
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--chars", type=int, default=150_000)
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()

    import pandas as pd

    from goldenset.audit import document_indexes
    from goldenset.echo import echo
    from goldenset.generation.prompt import pick_examples
    from goldenset.generation.providers import make_provider
    from goldenset.generation.runner import run_generation
    from goldenset.ingest import ingest
    from goldenset.params import GenerateParams

    generate = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["generate"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        write_long_files(args.corpus, folder, args.files, args.chars)
        result = ingest(folder, max_file_mb=20)
        documents = [(d.doc_id, d.text) for d in result.documents]
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
            documents, params, provider=provider, progress=True, example_queries=examples
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
    if echoes:
        print(f"median echo {statistics.median(echoes):.2f}")
    for row, value in zip(rows, echoes, strict=True):
        print(f"- {row['question']}  (echo {value:.2f})\n  > {' '.join(row['evidence'].split())}")


if __name__ == "__main__":
    main()
