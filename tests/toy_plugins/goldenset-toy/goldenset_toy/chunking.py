"""A chunking strategy: a document cut at `chunk.toy.parts` - 1 equally spaced characters
(its own settings are chunk.toy)."""

from __future__ import annotations

from itertools import pairwise

from pydantic import Field

from goldenset.chunking.base import STRATEGIES, Strategy
from goldenset.core.params import Section
from goldenset.core.spans import Span, trim_span


class PartsParams(Section):
    parts: int = Field(2, ge=1)


def parts(text: str, params, tokenizer) -> list[Span]:
    count = params.toy.parts
    cuts = [len(text) * number // count for number in range(count + 1)]
    pieces = (trim_span(text, start, end) for start, end in pairwise(cuts))
    return [span for span in pieces if span is not None]


STRATEGIES.register("toy", Strategy(parts, params=PartsParams))
