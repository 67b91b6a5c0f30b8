"""Aiming the golden set's overlap distribution at the user's example queries.

Real queries reuse their document's words to very different degrees: on SciFact a tenth of the
claims share at most 15% of their content words with any ~100-word window of their document, and
that low-overlap tail is where dense retrieval beats BM25 by the widest margin. A writer told
only "use your own words" sits near the median and has no such tail, so a golden set flatters
lexical retrieval. Here each question gets its own aim: an echo drawn from the example queries'
echoes (a quantile chosen by a hash of the question's place, the same on every machine), and of
the generate.candidates answers sampled from one prompt the valid one nearest that aim is kept,
so the kept queries spread like the examples, tail included, and aiming never costs a query.
(Telling a small model which words to change raised its echo: 0.54 -> 0.65 over 21 questions;
sampling and choosing does not depend on the model following advice.)

An example's echo is measured as a golden question's is: against the window of its own document
that best matches it (the example names its document with a doc_id), or, for an example without
one, against the best window of the whole corpus, which reads higher in the low tail (a short
query finds most of its words somewhere among many documents).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np

from goldenset.core.echo import WindowIndex, echo
from goldenset.corpus.queries import ExampleQuery

MIN_AIM_EXAMPLES = 10  # fewer echoes draw a distribution of their own noise: no aim


def example_echoes(
    examples: Sequence[ExampleQuery], sources: Mapping[str, WindowIndex]
) -> np.ndarray:
    """Each example's echo, sorted: against its own document when it is in the corpus, else the
    highest over the corpus's documents."""
    echoes = [
        echo(query.text, sources[query.doc_id])
        if query.doc_id in sources
        else max((echo(query.text, source) for source in sources.values()), default=0.0)
        for query in examples
    ]
    return np.sort(np.asarray(echoes, dtype=float))


def echo_aim(echoes: np.ndarray, *place: object) -> float:
    """The echo one question aims at: the quantile of `echoes` at a point in [0, 1) that a hash
    of the question's place (seed, document, passage, question) picks."""
    digest = hashlib.sha256("\0".join(map(str, place)).encode("utf-8")).hexdigest()
    point = int(digest[:13], 16) / 16**13
    return float(np.quantile(echoes, point))
