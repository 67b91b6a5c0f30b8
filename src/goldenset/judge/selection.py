"""Selection at the level of the set: ask more questions than the set needs, keep the ones the
judge ranks highest (generate.keep_share).

Measured before it was trusted: the shipped judge was never fitted on the questions of
`labels/question_set.jsonl`, and on them its probability `pass` ranks held out at ROC AUC 0.776;
the top half passed a strict reviewer 50% of the time against 31% for all (docs: Benchmarks).

Spread: a document keeps at most `keep_share` of the questions asked of it (rounded up), so the
set does not collapse onto the documents whose sentences the judge likes. The judge's readings
are kept in a small cache beside the answers (`PROBABILITIES_FILE`), keyed by what they read, so a
re-run pays nothing for them.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from goldenset.core.echo import WindowFrequency, WindowIndex
from goldenset.core.files import read_json_cache, write_json
from goldenset.judge.model import WEIGHTS

PROBABILITIES_FILE = "judged.json"  # in generate.cache_dir: the judge's P(pass) by what it read


def asked_for(max_questions: int, keep_share: float) -> int:
    """Questions to ask so that keeping `keep_share` of them fills max_questions."""
    return math.ceil(max_questions / keep_share) if keep_share < 1 else max_questions


def keep_best(
    doc_ids: Sequence[str], scores: np.ndarray, keep: int, keep_share: float
) -> list[int]:
    """The rows to keep, in their order: the best `keep` by score, a document keeping at most
    ceil(keep_share x its questions). Ties go to the earlier row."""
    asked = Counter(doc_ids)
    cap = {doc: math.ceil(keep_share * count) for doc, count in asked.items()}
    kept: Counter = Counter()
    chosen = []
    for row in np.argsort(-np.asarray(scores, dtype=float), kind="stable"):
        doc = doc_ids[row]
        if kept[doc] < cap[doc]:
            kept[doc] += 1
            chosen.append(int(row))
            if len(chosen) == keep:
                break
    return sorted(chosen)


def reading_key(row: dict, weights: str) -> str:
    """What the judge's probability of one row depends on: its texts, document and weights."""
    fields = [row["question"], row["evidence"], str(row["doc_id"]), row.get("form", ""), weights]
    return hashlib.sha256("\x1f".join(fields).encode("utf-8")).hexdigest()


def cached_pass_probabilities(
    rows: list[dict],
    cache_dir: str | Path,
    weights: str,
    judge: Callable[[pd.DataFrame], np.ndarray],
) -> np.ndarray:
    """P(pass) of each row: from the cache, else from `judge` (a frame of the rows not cached
    -> their probabilities), the new ones written to the cache at once."""
    path = Path(cache_dir) / PROBABILITIES_FILE
    cached = read_json_cache(path, "the judge's readings")
    keys = [reading_key(row, weights) for row in rows]
    missing = [i for i, key in enumerate(keys) if key not in cached]
    if missing:
        probabilities = judge(pd.DataFrame([rows[i] for i in missing]))
        cached.update({keys[i]: float(p) for i, p in zip(missing, probabilities, strict=True)})
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, dict(sorted(cached.items())))
    return np.array([cached[key] for key in keys], dtype=float)


def weights_digest(weights: Path = WEIGHTS) -> str:
    """A judge's weights, hashed: another judge reads every question again."""
    return hashlib.sha256(weights.read_bytes()).hexdigest()[:16]


def pass_judge(
    documents: dict[str, WindowIndex], weights: Path = WEIGHTS
) -> Callable[[pd.DataFrame], np.ndarray]:
    """A judge's P(pass) for rows (question, evidence, doc_id, form): the referee model embeds,
    the bundled model reads, as in the audit; `weights` is the shipped judge or one refitted
    with the team's verdicts (generate.judge). Loaded on the first call."""
    from goldenset.judge.features import question_features
    from goldenset.judge.model import load_judge
    from goldenset.judge.reader import Reader
    from goldenset.judge.referee import load_referee

    def judge(frame: pd.DataFrame) -> np.ndarray:
        rarity = WindowFrequency(documents.values())
        features = question_features(frame, documents, rarity, load_referee(), Reader().read)
        return load_judge(weights).probabilities(features)["pass"].to_numpy()

    return judge
