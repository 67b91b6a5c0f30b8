"""The old module paths (goldenset.scoring's retrievers, stores and topk; goldenset.metrics) still
import, as the modules at their new homes, with one FutureWarning a process: what a plugin
written against them, like the toy retriever, sees."""

from __future__ import annotations

import json
import subprocess
import sys

from goldenset.core.moved import MOVED, new_home
from tests.conftest import ROOT

TOY = ROOT / "tests" / "toy_plugins" / "goldenset-toy-search"
IMPORTS = f"""
import json, sys, warnings
sys.path.insert(0, {str(TOY)!r})
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import goldenset_toy_search  # registers "toy" through goldenset.scoring.retrievers
    from goldenset.scoring.retrievers.lexical import BM25Scores as old_scores
    from goldenset.scoring.topk import top_k as old_top_k
    import goldenset.metrics.measures as old_measures
    import goldenset.scoring.configuration  # did not move: no warning of its own
from goldenset.retrieval.retrievers import RETRIEVERS
from goldenset.retrieval.retrievers.lexical import BM25Scores
from goldenset.core.topk import top_k
import goldenset.evaluation.measures as measures
print(json.dumps({{
    "warnings": [(w.category.__name__, str(w.message)) for w in caught],
    "same": [old_scores is BM25Scores, old_top_k is top_k, old_measures is measures],
    "toy": "toy" in RETRIEVERS,
}}))
"""


def test_a_plugin_on_the_old_paths_gets_the_new_modules_and_one_warning():
    process = subprocess.run(
        [sys.executable, "-c", IMPORTS], capture_output=True, text=True, check=True, cwd=ROOT
    )
    seen = json.loads(process.stdout)
    assert seen["same"] == [True, True, True]
    assert seen["toy"]
    [(category, message)] = seen["warnings"]
    assert category == "FutureWarning"
    assert message.startswith(
        "goldenset.scoring.retrievers moved to goldenset.retrieval.retrievers;"
    )
    assert "work until 0.2.0" in message


def test_every_old_path_names_a_module_that_exists_and_a_new_one_is_left_alone():
    for old, new in MOVED.items():
        assert new_home(old) == new
        assert (ROOT / "src" / (new.replace(".", "/") + ".py")).exists() or (
            ROOT / "src" / new.replace(".", "/") / "__init__.py"
        ).exists(), new
    assert (
        new_home("goldenset.scoring.retrievers.lexical") == "goldenset.retrieval.retrievers.lexical"
    )
    assert new_home("goldenset.metrics") == "goldenset.evaluation"
    assert new_home("goldenset.scoring.configuration") is None
    assert new_home("goldenset.metricsx") is None
