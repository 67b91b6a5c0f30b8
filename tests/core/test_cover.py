"""Exact runs that cover ``depth`` documents and texts: the evaluator reads them exactly as it
reads the exhaustive ranking, while each question fetches at most twice ``depth`` chunks, however
large a document or however many copies of one text the corpus holds."""

from __future__ import annotations

import re
import zlib
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from goldenset.core.cover import Cover, deepen, select_covering
from goldenset.core.selection import select_top_k
from goldenset.core.topk import top_k
from goldenset.evaluation.projection import RunItems
from goldenset.retrieval.params import retrievers_model
from goldenset.retrieval.retrievers import (
    RETRIEVERS,
    Corpus,
    Queries,
    RetrieverEntry,
    RetrieverSection,
    Run,
    build_retrievers,
    load_retrievers,
    rank_all,
)
from goldenset.retrieval.retrievers.dense import DenseScores
from goldenset.retrieval.retrievers.lexical import BM25Scores
from goldenset.scoring.configuration import score_inputs
from goldenset.scoring.inputs import ScoreInputs
from goldenset.scoring.params import ScoreParams
from tests.scoring.test_boundary import every_metric, with_real_queries
from tests.scoring.test_configuration import empty_set, golden_set, memory_inputs
from tests.scoring.test_exports import golden_questions

OWN = ["dense", "bm25", "ann", "hybrid"]
FOOTER = "Printed copies are not controlled; check the intranet for the current version."


def random_cover(rng: np.random.Generator, n_chunks: int) -> tuple[Cover, np.ndarray]:
    """Documents of 1 to 40 chunks, a few texts repeated across them; each text's score column
    (equal texts score alike, as in any exact retriever of their text)."""
    sizes = rng.integers(1, 40, n_chunks)
    doc_ids = np.repeat(np.arange(n_chunks), sizes)[:n_chunks].astype(str).tolist()
    texts = [f"t{i}" for i in range(n_chunks)]
    for row in rng.choice(n_chunks, n_chunks // 5, replace=False):
        texts[row] = f"t{rng.integers(0, 8)}"  # copies of a few texts
    cover = Cover.of(doc_ids, texts)
    return cover, cover.text_of


@pytest.mark.parametrize("seed", range(6))
def test_a_covering_selection_is_read_as_the_exhaustive_ranking_is(seed):
    rng = np.random.default_rng(seed)
    cover, text_of = random_cover(rng, 600)
    by_text = rng.normal(size=(25, text_of.max() + 1)).astype(np.float32)
    by_text[:, :3] = np.round(by_text[:, :3], 1)  # ties too
    if seed % 2:
        by_text[::3, 0] = np.nan  # ranks as -inf
    block = by_text[:, text_of]
    depth = int(rng.integers(1, 30))
    everything = Run([str(i) for i in range(600)], TopKOf(*select_top_k(block, 600)))
    covering = Run(everything.ids, TopKOf(*select_covering(block, depth, cover)))
    assert covering.found.indices.shape[1] <= 2 * depth
    qids = [f"q{i}" for i in range(25)]
    for of_chunk in (cover.doc_of, cover.text_of):
        items = RunItems("set", qids, everything.ids, of_chunk, int(of_chunk.max()) + 1)
        expected = items.project(everything, depth, "exhaustive")
        found = items.project(covering, depth, "covering")
        np.testing.assert_array_equal(found.indices, expected.indices)
        np.testing.assert_array_equal(found.scores, expected.scores)


def TopKOf(indices: np.ndarray, scores: np.ndarray):  # noqa: N802 - reads as the type it makes
    from goldenset.core.ranked import TopK

    return TopK(indices, scores)


def test_deepening_doubles_until_the_answer_is_enough_or_the_cap():
    asked: list[tuple[list[int], int]] = []

    def ask(rows: list[int], k: int) -> list[int]:
        asked.append((rows, k))
        return [min(k, 50 * (row + 1)) for row in rows]  # row r holds 50 (r + 1) items

    def short(answer: int, k: int) -> bool:
        return answer >= k and answer < 120  # a full answer of fewer than 120 items

    answers, cut = deepen(ask, 3, 10, 160, short)
    rows = [0, 1, 2]
    assert asked == [(rows, 10), (rows, 20), (rows, 40), (rows, 80), ([1, 2], 160)]
    assert answers == [50, 100, 150] and cut == 0  # all they hold: none is full
    _, cut = deepen(ask, 3, 10, 80, short)
    assert cut == 2  # rows 1 and 2 are full at the cap


class ExhaustiveParams(RetrieverSection):
    enabled: bool = False
    lexical: bool = False


class Exhaustive:
    """dense (or bm25) ranking every chunk: what covering runs must be read as."""

    def __init__(self, corpus: Corpus, settings: ExhaustiveParams) -> None:
        self.corpus, self.settings = corpus, settings

    def rank(self, queries: Queries, depth: int) -> Run:
        if self.settings.lexical:
            source = BM25Scores(self.corpus.texts, queries.texts)
        else:
            source = DenseScores(queries.vectors, self.corpus.vectors)
        return Run(self.corpus.chunk_ids, top_k(source, len(self.corpus.chunk_ids)))


@pytest.fixture
def exhaustive_model():
    RETRIEVERS.register(
        "exhaustive",
        RetrieverEntry(
            ExhaustiveParams, lambda settings, corpus, _, __: Exhaustive(corpus, settings)
        ),
    )
    try:
        yield retrievers_model()
    finally:
        RETRIEVERS.unregister("exhaustive")


def text_vector(text: str, dimensions: int = 16) -> np.ndarray:
    """A unit vector of the text alone: equal texts, equal vectors (as an embedding model)."""
    vector = np.random.default_rng(zlib.crc32(text.encode())).normal(size=dimensions)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def long_and_repeated() -> ScoreInputs:
    """A 2,000-chunk manual, 300 notices ending with the same footer, and 40 short documents; a
    golden set on some of them, asked again as real queries (judged per document)."""
    rng = np.random.default_rng(11)
    words = ["valve", "pump", "filter", "gasket", "seal", "hose", "gauge", "relay", "fuse"]
    documents = {
        "manual": [f"Step {i}: check the {rng.choice(words)} {i % 97}." for i in range(2000)]
    }
    for number in range(300):
        documents[f"notice-{number}"] = [f"Notice {number} on the {rng.choice(words)}.", FOOTER]
    for number in range(40):
        documents[f"note-{number}"] = [
            f"Note {number}: the {rng.choice(words)} needs care.",
            f"The {rng.choice(words)} of note {number} is {rng.choice(words)} grade {number}.",
        ]
    rows, texts = [], {}
    for doc_id, parts in documents.items():
        texts[doc_id] = " ".join(parts)
        start = 0
        for number, part in enumerate(parts):
            rows.append((f"{doc_id}#{number}", doc_id, start, start + len(part), part))
            start += len(part) + 1
    chunks = pd.DataFrame(rows, columns=["chunk_id", "doc_id", "start", "end", "text"])
    golden = pd.DataFrame(golden_questions(chunks)).head(60)
    synthetic = golden_set(golden)
    vectors = np.stack([text_vector(text) for text in chunks["text"]])
    # questions near the footer, near the manual's steps, and anywhere
    anchors = [text_vector(FOOTER), vectors[5], vectors[1500]]
    question_vectors = np.stack(
        [anchors[i % 3] + rng.normal(0, 0.4 if i % 4 else 2.0, 16) for i in range(len(golden))]
    ).astype(np.float32)
    starts = {
        doc_id: [word.start() for word in re.finditer(r"\S+", text)]
        for doc_id, text in texts.items()
    }
    frame = pd.DataFrame({"doc_id": list(texts), "text": list(texts.values())})
    inputs = ScoreInputs(
        chunks,
        vectors,
        {"synthetic": synthetic, "labelled": empty_set("labelled"), "real": empty_set("real")},
        {"synthetic": question_vectors},
        starts,
        {},
        frame,
    )
    return with_real_queries(inputs)


def test_dense_and_bm25_fetch_at_most_four_times_depth_and_score_as_exhaustive_ranking(
    exhaustive_model,
):
    inputs = long_and_repeated()
    score = ScoreParams(device="cpu", depth=20, ks=[1, 5, 10, 20])
    for own, lexical in [("dense", False), ("bm25", True)]:
        params = exhaustive_model.model_validate(
            {name: {"enabled": name == own} for name in OWN}
            | {"exhaustive": {"enabled": True, "lexical": lexical}}
        )
        corpus = Corpus(
            inputs.chunks["chunk_id"].tolist(),
            inputs.chunks["text"].tolist(),
            inputs.chunk_vectors,
            inputs.chunks["doc_id"].tolist(),
        )
        golden = inputs.query_sets["synthetic"]
        queries = Queries("synthetic", golden.qids, golden.texts, inputs.query_vectors["synthetic"])
        run = rank_all(build_retrievers(params, corpus, names=[own]), queries, 20)[own]
        assert run.found.indices.shape[1] <= 4 * 20  # not depth x 2,000
        outputs = score_inputs(inputs, score, params)
        for query_set in ["synthetic", "real"]:
            ours = every_metric(outputs, query_set, own)
            expected = every_metric(outputs, query_set, "exhaustive")
            assert ours.keys() == expected.keys()
            for name, value in expected.items():
                assert ours[name] == pytest.approx(value, abs=1e-12), (own, query_set, name)
        # the case is one: the footer and the manual reach the top of some questions
        rows = outputs.results[(outputs.results["retriever"] == own)]
        top = {item for ids in rows["top_ids"] for item in list(ids)[:3]}
        assert any(item.startswith("manual") for item in top)
        assert any(item.startswith("notice") for item in top)


def test_a_corpus_whose_documents_are_split_is_one_line():
    with pytest.raises(Exception, match="each document's chunks together"):
        Cover.of(["a", "b", "a"], ["x", "y", "z"])
    assert replace(Cover.of(["a", "b"], ["x", "y"])).trivial


TEAM_BM25 = """
from goldenset.retrieval.retrievers.lexical import BM25Scores
from goldenset.core.topk import top_k


def search(query_texts, chunk_ids, chunk_texts, k):
    found = top_k(BM25Scores(chunk_texts, query_texts), k)
    return [
        [(chunk_ids[i], float(score)) for i, score in zip(row, scores) if i >= 0]
        for row, scores in zip(found.indices, found.scores)
    ]
"""


def test_a_callable_is_asked_deeper_until_it_ranks_as_bm25_does(tmp_path, caplog):
    """The team's callable returns bm25's k best chunks: asked for 3, it names fewer than 3
    documents, so it is asked again deeper, and scores as the built-in bm25 on both sets."""
    (tmp_path / "team").mkdir()
    (tmp_path / "team/lexical.py").write_text(TEAM_BM25)
    score = ScoreParams(device="cpu", ks=[1, 3], depth=3, headline=["doc_ndcg@3", "mrr"])

    def scored(most: int):
        external = {
            "enabled": True,
            "callable": "team.lexical:search",
            "folder": str(tmp_path / "team"),
            "cache_dir": str(tmp_path / f"cache{most}"),
            "max_fetch": most,
        }
        params = retrievers_model().model_validate(
            {"external": external} | {name: {"enabled": name == "bm25"} for name in OWN}
        )
        inputs = with_real_queries(memory_inputs(load_retrievers(params)))
        with caplog.at_level("WARNING", logger="goldenset"):
            return score_inputs(inputs, score, params), inputs.loaded["external"].cache

    outputs, cache = scored(1000)
    for query_set in ["synthetic", "real"]:
        expected = every_metric(outputs, query_set, "bm25")
        for name, value in every_metric(outputs, query_set, "external").items():
            assert value == pytest.approx(expected[name], abs=1e-12), (query_set, name)
    assert "max_fetch" not in caplog.text
    # its first answers held 3 chunks, then 6 or more for the short ones: every depth is cached
    assert {len(answer) for answer in cache.answers.values()} > {3}
    scored(3)
    lines = [line for line in caplog.text.splitlines() if "max_fetch" in line]
    assert [line.split(" questions'")[0].split()[-1] for line in lines] == ["synthetic", "real"]
    assert all(line.endswith("raise retrievers.external.max_fetch") for line in lines)
