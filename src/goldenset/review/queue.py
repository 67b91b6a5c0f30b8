"""The order a person reviews in.

First a seeded random sample (review.sample queries): its pass share estimates the whole set's,
which is why it comes first and why its verdicts are marked `drawn: random`. Then, for a person
who goes on, the queries whose P(pass) by the judge is nearest 0.5, where a verdict teaches the
judge most; queries the judge has not read follow in the random order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def review_order(
    qids: Sequence[str], p_pass: Mapping[str, float], sample: int, seed: int
) -> list[tuple[str, str]]:
    """(qid, drawn) pairs in the order to review them; drawn is random or least_sure."""
    shuffled = [qids[i] for i in np.random.default_rng(seed).permutation(len(qids))]
    first, rest = shuffled[:sample], shuffled[sample:]
    unsure = sorted((qid for qid in rest if qid in p_pass), key=lambda qid: abs(p_pass[qid] - 0.5))
    unread = [qid for qid in rest if qid not in p_pass]
    return (
        [(qid, "random") for qid in first]
        + [(qid, "least_sure") for qid in unsure]
        + [(qid, "random") for qid in unread]
    )
