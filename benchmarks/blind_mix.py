"""Two golden sets side by side for blind labellers, and their verdicts counted per set.

`make`: draws `--size` random questions (seeded) from each of two files of golden-set rows (a
golden set, or a label file of one: the same fields), shuffles them into one list with neutral
ids, and writes one item a line with what a labeller sees: the query, its evidence sentence, the
document's title and its first 1,500 characters. A question both sets hold is shown once and
counts for both. The key (item -> sets) is written apart, for `count` alone.

`count`: reads verdict files (labels/*.jsonl's schema, `qid` the item id) and prints each
labeller's passes per set with a Wilson 95% interval.

    python benchmarks/blind_mix.py make NEW.jsonl OLD.jsonl --out FOLDER
    python benchmarks/blind_mix.py count FOLDER VERDICTS.jsonl [VERDICTS.jsonl ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

import pandas as pd

from goldenset.core.files import read_jsonl, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
SHOWN_CHARS = 1500


def item_id(question: str, doc_id: str) -> str:
    return "bl-" + hashlib.sha256(f"{doc_id}\x1f{question}".encode()).hexdigest()[:12]


def make(sets: dict[str, Path], size: int, seed: int, documents: Path, out: Path) -> None:
    texts = pd.read_parquet(documents).set_index("doc_id")
    items: dict[str, dict] = {}
    key: dict[str, list[str]] = {}
    for name, path in sets.items():
        rows = random.Random(seed).sample(read_jsonl(path), size)
        for row in rows:
            item = item_id(row["question"], str(row["doc_id"]))
            key.setdefault(item, []).append(name)
            document = texts.loc[str(row["doc_id"])]
            items[item] = {
                "qid": item,
                "doc_id": str(row["doc_id"]),
                "question": row["question"],
                "form": row.get("form", "question"),
                "evidence": row["evidence"],
                "title": str(document.get("title", "")),
                "document_start": str(document["text"])[:SHOWN_CHARS],
            }
    order = sorted(items)
    random.Random(seed + 1).shuffle(order)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "items.jsonl", [items[item] for item in order])
    (out / "key.json").write_text(json.dumps(key, indent=1, sort_keys=True) + "\n")
    print(f"{len(order)} items ({sum(len(v) > 1 for v in key.values())} in both sets)")


def wilson(passes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    share = passes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z * (share * (1 - share) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    return centre - half, centre + half


def count(folder: Path, verdict_files: list[Path]) -> None:
    key = json.loads((folder / "key.json").read_text())
    for path in verdict_files:
        verdicts = {row["qid"]: row["verdict"] for row in read_jsonl(path)}
        for name in sorted({name for names in key.values() for name in names}):
            judged = [verdicts[item] for item, names in key.items() if name in names]
            passes = judged.count("pass")
            low, high = wilson(passes, len(judged))
            print(
                f"{path.name}: {name}: {passes} of {len(judged)} pass ({passes / len(judged):.0%}, "
                f"[{low:.0%}, {high:.0%}])"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("make")
    made.add_argument("new", type=Path)
    made.add_argument("old", type=Path)
    made.add_argument("--out", type=Path, required=True)
    made.add_argument("--size", type=int, default=60)
    made.add_argument("--seed", type=int, default=2028)
    made.add_argument("--documents", type=Path, default=ROOT / "data/documents.parquet")
    counted = commands.add_parser("count")
    counted.add_argument("folder", type=Path)
    counted.add_argument("verdicts", type=Path, nargs="+")
    args = parser.parse_args()
    if args.command == "make":
        make({"new": args.new, "old": args.old}, args.size, args.seed, args.documents, args.out)
    else:
        count(args.folder, args.verdicts)


if __name__ == "__main__":
    main()
