"""external: a team's own retriever, as a Python callable (module:function, through
goldenset.retrieval.team_code) or a TREC run file; it reads no embedding. A run file ranks the ids
it holds (chunk ids, or document ids): the evaluator reads them against the query set's items."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field, model_validator

from goldenset.core.errors import GoldensetError
from goldenset.core.specs import FunctionSpec
from goldenset.retrieval.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection
from goldenset.retrieval.run import Run
from goldenset.retrieval.team_code import CodeFolder

if TYPE_CHECKING:
    import torch

    from goldenset.core.ranked import TopK
    from goldenset.retrieval.query_cache import QueryCache
    from goldenset.retrieval.run import Corpus, Queries

log = logging.getLogger("goldenset")


class ExternalParams(RetrieverSection):
    enabled: bool = False
    callable: FunctionSpec | None = Field(None, description="module:function")
    run_file: str | None = Field(None, min_length=1, description="a TREC run file")
    folder: CodeFolder = "external"
    cache_dir: str = Field(
        "cache/retrievers", description="the callable's answers by question (a DVC output)"
    )
    batch_size: int = Field(
        64, gt=0, description="questions a call; the answers of each call are kept"
    )
    max_fetch: int = Field(
        1000,
        gt=0,
        description="the most chunks a question is asked for: asked deeper until they name "
        "score.depth distinct documents, as goldenset's own retrievers rank",
    )
    version: str = Field(
        "",
        description="bump it when what the callable answers changes outside its files (a live "
        "index): score re-runs and asks it again; otherwise its answers come from the cache",
    )

    @model_validator(mode="after")
    def _one_source(self) -> ExternalParams:
        if self.enabled and (self.callable is None) == (self.run_file is None):
            raise ValueError("set exactly one of callable (module:function) and run_file")
        return self


class ExternalCallable:
    """``module:function`` called as ``function(query_texts, chunk_ids, chunk_texts, k)``.

    It returns, for each query in order, its best chunks first: chunk ids, or (chunk id, score)
    pairs. For a query set judged per document, the evaluator ranks documents by their best
    chunk.
    The module is imported from the folder holding ``folder`` (retrievers.external.folder):
    ``external.my_search`` from the project folder, ``search.retrieve`` from a repository
    holding the pipeline in a subfolder and its ``search/`` folder at the top (``../search``).
    """

    def __init__(self, corpus: Corpus, spec: str, source: CallableSource) -> None:
        from goldenset.retrieval.query_cache import digest

        self.corpus, self.spec, self.source = corpus, spec, source
        self._handed = digest(*corpus.chunk_ids, *corpus.texts)  # what it ranks

    def rank(self, queries: Queries, depth: int) -> Run:
        """Asked deeper for the questions whose answer names fewer than ``depth`` documents or
        texts (goldenset.core.cover), up to retrievers.external.max_fetch chunks."""
        from goldenset.core.topk import deepened_run
        from goldenset.retrieval.query_cache import digest
        from goldenset.retrieval.team_code import ask_missing, parse_ranked_ids

        texts, label = list(queries.texts), f"external {queries.name}"

        def search(rows: list[int], k: int) -> TopK:
            asked = [texts[row] for row in rows]
            keys = [digest(self._handed, str(k), text) for text in asked]
            answers = ask_missing(
                self.source.cache,
                keys,
                asked,
                self.source.batch_size,
                label,
                lambda batch: self._ask(batch, k),
            )
            return parse_ranked_ids(answers, self.corpus.chunk_ids, len(asked), self.spec)

        most = min(self.source.max_fetch, len(self.corpus.chunk_ids))
        found, cut = deepened_run(search, len(texts), depth, most, self.corpus.cover)
        if cut:
            log.warning(
                "warning: retrievers.external: %d of %d %s questions' answers name fewer than "
                "%d distinct documents at max_fetch %d chunks: their rankings are cut short; "
                "raise retrievers.external.max_fetch",
                cut,
                len(texts),
                queries.name,
                depth,
                most,
            )
        return Run(self.corpus.chunk_ids, found)

    def _ask(self, texts: list[str], k: int) -> list[list]:
        from goldenset.retrieval.team_code import check_answer_count, first_line, plain

        try:
            answer = self.source.function(texts, self.corpus.chunk_ids, self.corpus.texts, k)
        except Exception as error:  # the user's code, or the index it queries: any error
            raise GoldensetError(
                f"retrievers.external: {self.spec} failed on {len(texts)} questions "
                f"({first_line(error)}); check the index or service it queries: the "
                f"{len(self.source.cache.answers)} answers it gave are kept and the next run "
                "asks only the rest"
            ) from error
        check_answer_count(answer, len(texts), self.spec)
        return [[plain(entry) for entry in ranked] for ranked in answer]


@dataclass(frozen=True)
class CallableSource:
    """What a callable retriever reads from outside: the function, its answers so far, and how
    many questions it is asked a call."""

    function: Callable
    cache: QueryCache
    batch_size: int = 64
    max_fetch: int = 1000  # the most chunks a question is asked for


class ExternalRunFile:
    """A TREC run file (``qid Q0 docid rank score tag``), ordered as trec_eval orders it.

    Golden-set questions rank chunk ids (those of data/chunks.parquet, as exported to the BEIR
    corpus); real queries rank document ids, like their qrels (then the contexts, which read
    chunks, are not measured). It has no run of a query set none of whose query ids it holds; a
    query of a set absent from the file ranks nothing.
    """

    def __init__(self, path: str, run: Mapping[str, Mapping[str, float]]) -> None:
        self.path, self._run = path, run  # qid -> item id -> score, read by load_external

    def rank(self, queries: Queries, depth: int) -> Run | None:
        import numpy as np

        from goldenset.core.ranked import TopK, rank_run

        held = [self._run[qid] for qid in queries.qids if qid in self._run]
        if not held:
            log.info("external: %s holds no %s query; not scored", self.path, queries.name)
            return None
        ids = sorted({item for ranked in held for item in ranked})
        indices = rank_run(self._run, ids, queries.qids, depth)
        scores = np.full(indices.shape, -np.inf, dtype=np.float32)
        for row, qid in enumerate(queries.qids):
            ranked = self._run.get(qid, {})
            for column, item in enumerate(indices[row]):
                if item >= 0:
                    scores[row, column] = ranked[ids[item]]
        return Run(ids, TopK(indices=indices, scores=scores))


def load_external(settings: ExternalParams) -> CallableSource | dict[str, dict[str, float]]:
    """The callable imported with its cache of answers, or the run file read."""
    from goldenset.retrieval.query_cache import QueryCache, digest
    from goldenset.retrieval.team_code import code_identity, team_function
    from goldenset.retrieval.trec import read_trec_run

    if settings.callable:
        function = team_function(settings.callable, settings.folder, "retrievers.external")
        identity = digest(settings.callable, code_identity(settings.folder), settings.version)
        cache = QueryCache.open(Path(settings.cache_dir), identity)
        return CallableSource(function, cache, settings.batch_size, settings.max_fetch)
    return read_trec_run(Path(str(settings.run_file)))


def build_external(
    settings: ExternalParams,
    corpus: Corpus,
    device: torch.device | str,
    loaded: CallableSource | dict[str, dict[str, float]],
) -> ExternalCallable | ExternalRunFile:
    if settings.callable:
        assert isinstance(loaded, CallableSource)
        return ExternalCallable(corpus, settings.callable, loaded)
    assert isinstance(loaded, dict)
    return ExternalRunFile(str(settings.run_file), loaded)


RETRIEVERS.register(
    "external",
    RetrieverEntry(ExternalParams, build_external, order=40, model_free=True, load=load_external),
)
