"""The embedding cache pays once per distinct text, with the real MiniLM model."""

from __future__ import annotations

import numpy as np
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.params import EmbedParams
from goldenset.embedding.cache import EmbeddingCache, cache_key
from goldenset.embedding.encoder import embed_texts, load_encoder, model_identity


@pytest.fixture(scope="module")
def minilm():
    params = EmbedParams()
    encode, dimension = load_encoder(params)
    return params, encode, dimension


class CountingEncoder:
    """Wraps the real model's encode to count what reaches it."""

    def __init__(self, encode):
        self.encode, self.texts = encode, []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.encode(texts)


def test_minilm_loads_offline_with_unit_vectors(minilm):
    params, encode, dimension = minilm
    vectors = encode(["Vitamin D deficiency raises fracture risk."])
    assert dimension == 384 and vectors.shape == (1, 384)
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)


def test_only_unseen_texts_are_encoded_after_rechunking(minilm, tmp_path):
    params, encode, dimension = minilm
    identity = model_identity(params)
    counting = CountingEncoder(encode)
    first_chunking = ["alpha beta.", "gamma delta.", "epsilon zeta.", "alpha beta."]
    cache = EmbeddingCache(tmp_path)
    before = embed_texts(first_chunking, counting, cache, identity, dimension=dimension)
    assert sorted(counting.texts) == ["alpha beta.", "epsilon zeta.", "gamma delta."]
    np.testing.assert_array_equal(before[0], before[3])

    counting.texts.clear()
    second_chunking = ["gamma delta.", "epsilon zeta. eta theta.", "alpha beta."]
    after = embed_texts(
        second_chunking, counting, EmbeddingCache(tmp_path), identity, dimension=dimension
    )
    assert counting.texts == ["epsilon zeta. eta theta."]
    np.testing.assert_array_equal(after[0], before[1])
    np.testing.assert_allclose(after[1], encode(["epsilon zeta. eta theta."])[0], atol=1e-6)


def test_prefix_and_model_settings_are_part_of_the_key(minilm):
    params = minilm[0]
    identity = model_identity(params)
    other = model_identity(params.model_copy(update={"normalize": False}))
    assert cache_key(identity, "", "text") != cache_key(identity, "query: ", "text")
    assert cache_key(identity, "", "text") != cache_key(other, "", "text")


def test_a_crash_leaves_no_partial_segment(tmp_path):
    (tmp_path / "abc.tmp").write_bytes(b"half a segment")
    cache = EmbeddingCache(tmp_path)
    assert len(cache) == 0 and not list(tmp_path.glob("*.tmp"))
    cache.add([b"k" * 32], np.ones((1, 4), dtype=np.float32))
    assert len(EmbeddingCache(tmp_path)) == 1


def test_empty_input_gives_an_empty_matrix(minilm, tmp_path):
    params, encode, dimension = minilm
    vectors = embed_texts(
        [], encode, EmbeddingCache(tmp_path), model_identity(params), dimension=dimension
    )
    assert vectors.shape == (0, dimension)


def test_unknown_model_is_a_clear_error():
    with pytest.raises(GoldensetError, match="embed.model"):
        load_encoder(EmbedParams(model="no-such-org/no-such-model-xyz"))
