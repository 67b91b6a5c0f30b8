"""rank_all's one line for a plugin of the earlier interface (it read ``queries.judged``) is
given to that plugin only: any other error, whatever its message, keeps its type and traceback."""

from __future__ import annotations

import numpy as np
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.retrievers import Queries, Run, rank_all


class ReadsJudged:
    """A plugin of the earlier interface: it reads the query set's judgments off its queries."""

    def rank(self, queries: Queries, depth: int) -> Run:
        return queries.judged  # type: ignore[attr-defined]


class Cache:
    judged_ids: list[str] = []


class BrokenCache:
    """A plugin of today's interface with a bug of its own whose message mentions `judged`."""

    def __init__(self) -> None:
        self.cache: Cache | None = None

    def rank(self, queries: Queries, depth: int) -> Run:
        return self.cache.judged_ids  # type: ignore[union-attr]


class OwnJudged:
    """Reads an attribute named `judged` of an object of its own, not of the queries."""

    def rank(self, queries: Queries, depth: int) -> Run:
        return object().judged  # type: ignore[attr-defined]


def two_queries() -> Queries:
    return Queries("synthetic", ["q0", "q1"], ["a", "b"], np.zeros((2, 4), np.float32))


def test_a_plugin_reading_queries_judged_gets_the_earlier_interface_line():
    with pytest.raises(GoldensetError, match=r"^retrievers\.old: .* the earlier interface"):
        rank_all({"old": ReadsJudged()}, two_queries(), depth=3)


@pytest.mark.parametrize("plugin", [BrokenCache, OwnJudged])
def test_any_other_attribute_error_propagates_with_its_traceback(plugin):
    with pytest.raises(AttributeError, match="judged") as raised:
        rank_all({"mine": plugin()}, two_queries(), depth=3)
    # the plugin's own line is where the traceback ends, its cause not replaced
    assert raised.traceback[-1].name == "rank"
    assert raised.value.__cause__ is None
