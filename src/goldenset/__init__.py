"""goldenset: labelled (question -> evidence) sets from your documents, and retriever scores.

``goldenset.evaluate(qrels, run, ["ndcg@10", "mrr"])`` scores a run the way the score stage
does (goldenset.evaluation.public)."""

from __future__ import annotations

import importlib
from typing import Any

from goldenset.core import moved

__version__ = "0.1.0"
__all__ = ["__version__", "evaluate"]

moved.install()


def __getattr__(name: str) -> Any:
    # imported on first use, by name: `import goldenset` (which every stage does) stays free of
    # numpy and scipy, and of the evaluation code a stage's dvc.yaml deps would then list
    if name == "evaluate":
        return importlib.import_module("goldenset.evaluation.public").evaluate
    raise AttributeError(f"module 'goldenset' has no attribute {name!r}")
