"""The retrievers named in params.yaml `retrievers:`, each ranking the items of a query set.

Every retriever returns the same thing, ranked lists (:class:`~goldenset.scoring.topk.TopK`: item
indices best first, -1 padding a short list), so scoring and exports never depend on how a
list was made:

- dense: exact inner-product search over the embeddings (:class:`DenseScores`, :func:`top_k`);
- bm25: bm25s over the chunk texts;
- ann: a faiss HNSW or IVF index over the same embeddings; :func:`recall_loss` measures what it
  misses against exact search at the same k;
- external: a team's own retriever, as a Python callable or a TREC run file;
- hybrid: reciprocal rank fusion of the ranked lists of other retrievers.

Which retrievers exist, and their params, is declared in goldenset.core.registry.

Items are chunks for a query set judged per chunk (the golden set) and documents for one judged
per document (real queries): a document ranks by its best chunk (``QuerySet.groups``).
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from goldenset.core.errors import GoldensetError
from goldenset.core.registry import (
    ANNParams,
    BM25Params,
    DenseParams,
    ExternalParams,
    HybridParams,
)
from goldenset.scoring.exports import read_trec_run
from goldenset.scoring.metrics import rank_run
from goldenset.scoring.ranked import QuerySet
from goldenset.scoring.topk import BM25Scores, DenseScores, TopK, top_k

log = logging.getLogger("goldenset")


@dataclass(frozen=True)
class Corpus:
    """The chunks every retriever searches, row i of each field belonging to chunk i."""

    chunk_ids: list[str]
    texts: list[str]
    vectors: np.ndarray


@dataclass(frozen=True)
class Queries:
    """One query set with its query texts and vectors (row i: ``query_set.qids[i]``)."""

    query_set: QuerySet
    texts: list[str]
    vectors: np.ndarray


@dataclass(frozen=True)
class RankingContext:
    """What a retriever's own metrics may read besides its lists: the queries, the corpus they
    searched, the other retrievers' lists on the same set, the depth and the dense device."""

    queries: Queries
    corpus: Corpus
    ranked: Mapping[str, TopK]
    depth: int
    device: torch.device | str = "cpu"


class Retriever(Protocol):
    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK | None:
        """Ranked lists of up to ``depth`` items per query; None when it has none for this set.

        ``earlier``: the lists of the retrievers ranked before it on the same query set.
        """
        ...


class Dense:
    def __init__(self, corpus: Corpus, device: torch.device | str = "cpu") -> None:
        self.corpus, self.device = corpus, device

    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK:
        source = DenseScores(queries.vectors, self.corpus.vectors, self.device)
        return top_k(source, depth, groups=queries.query_set.groups)


class BM25:
    def __init__(self, corpus: Corpus, k1: float, b: float) -> None:
        self.corpus, self.k1, self.b = corpus, k1, b

    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK:
        source = BM25Scores(self.corpus.texts, queries.texts, k1=self.k1, b=self.b)
        return top_k(source, depth, groups=queries.query_set.groups)


class ANN:
    """faiss over the chunk vectors, inner product like :class:`Dense`, built once."""

    def __init__(self, corpus: Corpus, params: ANNParams) -> None:
        self.corpus, self.params = corpus, params
        self._index = None

    def _built(self):
        if self._index is None:
            self._index = build_faiss_index(self.corpus.vectors, self.params)
        return self._index

    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK:
        import faiss

        groups, n_chunks = queries.query_set.groups, len(self.corpus.chunk_ids)
        wanted = min(chunk_depth(groups, n_chunks, depth), n_chunks)
        index = self._built()
        if self.params.index == "hnsw":
            index.hnsw.efSearch = max(self.params.ef_search, wanted)
        vectors = np.ascontiguousarray(queries.vectors, dtype=np.float32)
        if wanted == 0 or len(vectors) == 0:
            return padded(len(vectors), 0)
        # One thread: faiss' OpenMP pool and torch's would otherwise fight over the cores.
        faiss.omp_set_num_threads(1)
        scores, indices = index.search(vectors, wanted)
        return to_groups(TopK(indices.astype(np.int64), scores.astype(np.float32)), groups, depth)


def build_faiss_index(vectors: np.ndarray, params: ANNParams):
    """An HNSW or IVF inner-product index holding ``vectors``, built deterministically."""
    import faiss

    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n_items, dimension = vectors.shape
    faiss.omp_set_num_threads(1)  # HNSW insertion order, hence the graph, then never varies
    if params.index == "hnsw":
        index = faiss.IndexHNSWFlat(dimension, params.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = params.ef_construction
    else:
        quantizer = faiss.IndexFlatIP(dimension)
        nlist = max(1, min(params.ivf_nlist, n_items))
        index = faiss.IndexIVFFlat(quantizer, dimension, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.min_points_per_centroid = 1  # small corpora: no warning per training
        if n_items:
            index.train(vectors)
        index.nprobe = min(params.ivf_nprobe, nlist)
    if n_items:
        index.add(vectors)
    return index


class Hybrid:
    """Reciprocal rank fusion (Cormack et al., 2009) of the lists of ``fuse``."""

    def __init__(self, fuse: Sequence[str], rrf_k: int) -> None:
        self.fuse, self.rrf_k = list(fuse), rrf_k

    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK:
        missing = [name for name in self.fuse if earlier.get(name) is None]
        if missing:
            raise GoldensetError(
                f"retrievers.hybrid: {missing} ranked nothing for the {queries.query_set.name} "
                "queries, so they cannot be fused; fuse other retrievers"
            )
        return reciprocal_rank_fusion([earlier[name] for name in self.fuse], self.rrf_k, depth)


def reciprocal_rank_fusion(lists: Sequence[TopK], rrf_k: int, depth: int) -> TopK:
    """Items scored by the sum of 1 / (rrf_k + rank) over the lists; ties by lower index."""
    n_queries = lists[0].indices.shape[0]
    rows, items, gains = [], [], []
    for found in lists:
        row, column = np.nonzero(found.indices >= 0)
        rows.append(row)
        items.append(found.indices[row, column])
        gains.append(1.0 / (rrf_k + column + 1.0))
    rows, items, gains = np.concatenate(rows), np.concatenate(items), np.concatenate(gains)
    if rows.size == 0:
        return padded(n_queries, 0)
    width = int(items.max()) + 1
    keys, inverse = np.unique(rows * width + items, return_inverse=True)
    fused = np.bincount(inverse.ravel(), weights=gains, minlength=keys.size)
    key_rows, key_items = keys // width, keys % width
    order = np.lexsort((key_items, -fused, key_rows))
    return ranked_rows(key_rows[order], key_items[order], fused[order], n_queries, depth)


def ranked_rows(
    rows: np.ndarray, items: np.ndarray, scores: np.ndarray, n_queries: int, depth: int
) -> TopK:
    """Entries already sorted by row then rank -> (n_queries, depth) lists, -1 padded."""
    found = padded(n_queries, depth)
    first = np.searchsorted(rows, np.arange(n_queries))
    position = np.arange(rows.size) - first[rows]
    keep = position < depth
    found.indices[rows[keep], position[keep]] = items[keep]
    found.scores[rows[keep], position[keep]] = scores[keep]
    return found


def padded(n_queries: int, depth: int) -> TopK:
    return TopK(
        indices=np.full((n_queries, depth), -1, dtype=np.int64),
        scores=np.full((n_queries, depth), -np.inf, dtype=np.float32),
    )


def chunk_depth(groups: np.ndarray | None, n_chunks: int, depth: int) -> int:
    """Chunks to fetch so that ``depth`` distinct documents are among them."""
    if groups is None:
        return depth
    largest = int(np.diff(np.r_[groups, n_chunks]).max()) if len(groups) else 1
    return depth * largest


def to_groups(found: TopK, groups: np.ndarray | None, depth: int) -> TopK:
    """Ranked chunks -> ranked documents (a document at the rank of its best chunk)."""
    if groups is None:
        return ranked_rows(*_entries(found), found.indices.shape[0], depth)
    row, column = np.nonzero(found.indices >= 0)
    group = np.searchsorted(groups, found.indices[row, column], side="right") - 1
    # the first (best) chunk of each document in each row
    _, first = np.unique(row * (len(groups) + 1) + group, return_index=True)
    first = np.sort(first)  # back into row, then rank order
    scores = found.scores[row[first], column[first]]
    return ranked_rows(row[first], group[first], scores, found.indices.shape[0], depth)


def _entries(found: TopK) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    row, column = np.nonzero(found.indices >= 0)
    return row, found.indices[row, column], found.scores[row, column]


class ExternalCallable:
    """``module:function`` called as ``function(query_texts, chunk_ids, chunk_texts, k)``.

    It returns, for each query in order, its best chunks first: chunk ids, or (chunk id, score)
    pairs. For a query set judged per document, the documents rank by their best chunk.
    The module is imported from the folder holding ``folder`` (retrievers.external.folder):
    ``external.my_search`` from the project folder, ``search.retrieve`` from a repository
    holding the pipeline in a subfolder and its ``search/`` folder at the top (``../search``).
    """

    def __init__(self, corpus: Corpus, spec: str, folder: str) -> None:
        self.corpus, self.spec, self.folder = corpus, spec, folder
        self._function: Callable | None = None

    def _loaded(self) -> Callable:
        if self._function is None:
            self._function = load_callable(self.spec, self.folder)
        return self._function

    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK:
        groups, n_chunks = queries.query_set.groups, len(self.corpus.chunk_ids)
        wanted = min(chunk_depth(groups, n_chunks, depth), n_chunks)
        answer = self._loaded()(
            list(queries.texts), self.corpus.chunk_ids, self.corpus.texts, wanted
        )
        found = parse_ranked_ids(answer, self.corpus.chunk_ids, len(queries.texts), self.spec)
        return to_groups(found, groups, depth)


def load_callable(spec: str, folder: str) -> Callable:
    module_name, _, function_name = spec.partition(":")
    # the user's module sits in `folder`, named from the folder above it (the project folder
    # for external/, the repository's top for ../search), or in the project folder itself
    for root in dict.fromkeys([os.getcwd(), str(Path(folder).resolve().parent)]):
        if root not in sys.path:
            sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise GoldensetError(
            f"retrievers.external.callable: cannot import {module_name!r} ({error}); put the "
            "module in retrievers.external.folder, e.g. external/<name>.py named external.<name>"
        ) from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise GoldensetError(
            f"retrievers.external.callable: {module_name!r} has no function {function_name!r}"
        )
    return function


def parse_ranked_ids(answer: object, item_ids: list[str], n_queries: int, origin: str) -> TopK:
    """Per-query lists of ids or (id, score) pairs -> ranked lists; scores default to 1/rank."""
    if not isinstance(answer, Sequence) or len(answer) != n_queries:
        raise GoldensetError(
            f"retrievers.external: {origin} must return one ranked list per query "
            f"({n_queries}), got {type(answer).__name__}"
            + (f" of {len(answer)}" if isinstance(answer, Sequence) else "")
        )
    index_of = {item: position for position, item in enumerate(item_ids)}
    depth = max((len(ranked) for ranked in answer), default=0)
    found = padded(n_queries, depth)
    for row, ranked in enumerate(answer):
        for column, entry in enumerate(ranked):
            item, score = (entry, 1.0 / (column + 1)) if isinstance(entry, str) else entry
            position = index_of.get(str(item))
            if position is None:
                raise GoldensetError(
                    f"retrievers.external: {origin} ranked unknown chunk id {item!r} for query "
                    f"{row}; return ids from the chunk_ids it was given"
                )
            found.indices[row, column], found.scores[row, column] = position, score
    return found


class ExternalRunFile:
    """A TREC run file (``qid Q0 docid rank score tag``), ordered as trec_eval orders it.

    Golden-set questions rank chunk ids (those of data/chunks.parquet, as exported to the BEIR
    corpus); real queries rank document ids, like their qrels. A query set none of whose query
    ids is in the file is not scored; a query of a set absent from the file ranks nothing.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._run: dict[str, dict[str, float]] | None = None

    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK | None:
        if self._run is None:
            self._run = read_trec_run(Path(self.path))
        query_set = queries.query_set
        if not any(qid in self._run for qid in query_set.qids):
            log.info("external: %s holds no %s query; not scored", self.path, query_set.name)
            return None
        unit = "chunk" if query_set.groups is None else "document"
        try:
            indices = rank_run(self._run, query_set.item_ids, query_set.qids, depth)
        except GoldensetError as error:
            raise GoldensetError(
                f"retrievers.external.run_file {self.path}: {error}; {query_set.name} queries "
                f"rank {unit} ids"
            ) from None
        scores = np.full(indices.shape, -np.inf, dtype=np.float32)
        for row, qid in enumerate(query_set.qids):
            run = self._run.get(qid, {})
            for column, item in enumerate(indices[row]):
                if item >= 0:
                    scores[row, column] = run[query_set.item_ids[item]]
        return TopK(indices=indices, scores=scores)


def build_dense(settings: DenseParams, corpus: Corpus, device: torch.device | str) -> Dense:
    return Dense(corpus, device)


def build_bm25(settings: BM25Params, corpus: Corpus, device: torch.device | str) -> BM25:
    return BM25(corpus, settings.k1, settings.b)


def build_ann(settings: ANNParams, corpus: Corpus, device: torch.device | str) -> ANN:
    return ANN(corpus, settings)


def build_external(
    settings: ExternalParams, corpus: Corpus, device: torch.device | str
) -> ExternalCallable | ExternalRunFile:
    if settings.callable:
        return ExternalCallable(corpus, settings.callable, settings.folder)
    return ExternalRunFile(str(settings.run_file))


def build_hybrid(settings: HybridParams, corpus: Corpus, device: torch.device | str) -> Hybrid:
    return Hybrid(settings.fuse, settings.rrf_k)


def rank_all(retrievers: Mapping[str, Retriever], queries: Queries, depth: int) -> dict[str, TopK]:
    """Every retriever's lists on one query set (a retriever with none for it is left out)."""
    ranked: dict[str, TopK] = {}
    for name, retriever in retrievers.items():
        found = retriever.rank(queries, depth, ranked)
        if found is not None:
            ranked[name] = found
    return ranked


def recall_loss(approximate: TopK, exact: TopK, ks: Sequence[int]) -> dict[str, float]:
    """``recall_loss@k``: 1 - |approximate top k ∩ exact top k| / k, averaged over queries.

    k is capped by the items the exact search returned (a corpus smaller than k).
    """
    losses = {}
    for k in ks:
        cut = min(k, exact.indices.shape[1])
        if cut == 0 or exact.indices.shape[0] == 0:
            losses[f"recall_loss@{k}"] = 0.0
            continue
        exact_top, approximate_top = exact.indices[:, :cut], approximate.indices[:, :cut]
        shared = [
            np.intersect1d(a[a >= 0], e[e >= 0]).size
            for a, e in zip(approximate_top, exact_top, strict=True)
        ]
        losses[f"recall_loss@{k}"] = float(1.0 - np.mean(shared) / cut)
    return losses


def recall_loss_against_exact(
    approximate: TopK, context: RankingContext, ks: Sequence[int]
) -> dict[str, float]:
    """:func:`recall_loss` against dense's lists, or an exact search run for it when dense is
    off."""
    exact = context.ranked.get("dense")
    if exact is None:
        exact = Dense(context.corpus, context.device).rank(context.queries, context.depth, {})
    return recall_loss(approximate, exact, ks)
