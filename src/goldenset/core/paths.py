"""The pipeline's files, named once. Every stage, `goldenset compare` (which reads them at git
revisions) and `goldenset calibrate` use these names; dvc.yaml spells the same paths for DVC, and
a test keeps the two in step."""

from __future__ import annotations

from pathlib import Path

# plugins: <extension point>.json, the plugins installed, their versions (goldenset.core.registry)
PLUGINS = Path("data/plugins")
# ingest
DOCUMENTS = Path("data/documents.parquet")
QUERIES = Path("data/queries.parquet")
QRELS = Path("data/qrels.parquet")
LABELLED = Path("data/labelled.parquet")
LABELLED_EVIDENCE = Path("data/labelled_evidence.parquet")
DUPLICATES = Path("data/duplicates.json")
QUERY_SETS = Path("data/query_sets")  # the sets plugins add (goldenset.corpus.querysets) ...
MADE_SETS = QUERY_SETS / "sets.json"  # ... and their question counts (none: {})
# chunk
CHUNKS = Path("data/chunks.parquet")
# generate
GOLDENSET = Path("data/goldenset.jsonl")
REJECTS = Path("data/goldenset.rejects.jsonl")
GENERATE_STATS = Path("data/generate_stats.json")
# apply: the golden set as people left it (passed, fixed, failed ones left out), what is scored
APPLIED = Path("data/applied.jsonl")
APPLIED_STATS = Path("data/applied_stats.json")  # how the verdicts met it ({}: no verdict)
# embed: <name>.npy and <name>.ids.json per set of texts (chunks, synthetic, labelled, real)
EMBEDDINGS = Path("data/embeddings")
# score
RESULTS = Path("data/results.parquet")
RESULT_KEYS = ["query_set", "retriever", "qid"]  # one row of RESULTS per these columns
EXPORT = Path("data/export")


def store_corpus(retriever: str) -> Path:
    """A store's own chunking as score placed it, in BEIR's corpus format."""
    return EXPORT / "stores" / retriever / "corpus.jsonl"


SCORES = Path("metrics/scores.json")
DETAIL = Path("metrics/detail.json")
INTERVALS = Path("metrics/intervals.json")
RECALL_PLOT = Path("plots/recall_at_k.json")
WORST_MISSES = Path("reports/worst_misses.md")
# audit
AUDIT_METRICS = Path("metrics/audit.json")
AUDIT_REPORT = Path("reports/audit.md")
JUDGE_PROBABILITIES = Path("data/judged.parquet")  # by qid, of the questions the judge read
ECHO_PLOT = Path("plots/echo.json")
# goldenset calibrate (no stage): golden mean against reference mean per configuration and view
CALIBRATION_PLOT = Path("plots/calibration.json")
# its decisions per group, view and seed, with the commit and the golden set's md5: the audit
# quotes them while the golden set is the one calibrated (not a dependency of the audit)
CALIBRATION_METRICS = Path("metrics/calibration.json")
