"""external: a team's own retriever, as a Python callable (module:function) or a TREC run file;
it reads no embedding. A run file ranks the ids it holds, not the chunks it is handed."""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import Field, model_validator

from goldenset.core.errors import GoldensetError
from goldenset.scoring.retrievers.base import RETRIEVERS, RetrieverEntry, RetrieverSection

if TYPE_CHECKING:
    import torch

    from goldenset.scoring.query_cache import QueryCache
    from goldenset.scoring.retrievers.base import Corpus, Queries
    from goldenset.scoring.topk import TopK

log = logging.getLogger("goldenset")
# the folder a team's ``module:function`` is imported from: retrievers.external's, and that of
# each store its own callable builds (goldenset.scoring.stores.callable)
CodeFolder = Annotated[
    str,
    Field(
        min_length=1,
        description="the retriever's files, a dep of score; its module imports from the folder "
        "holding this one",
    ),
]


class ExternalParams(RetrieverSection):
    enabled: bool = False
    callable: str | None = Field(None, pattern=r"^[\w.]+:\w+$", description="module:function")
    run_file: str | None = Field(None, min_length=1, description="a TREC run file")
    folder: CodeFolder = "external"
    cache_dir: str = Field(
        "cache/retrievers", description="the callable's answers by question (a DVC output)"
    )
    batch_size: int = Field(
        64, gt=0, description="questions a call; the answers of each call are kept"
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
    pairs. For a query set judged per document, the documents rank by their best chunk.
    The module is imported from the folder holding ``folder`` (retrievers.external.folder):
    ``external.my_search`` from the project folder, ``search.retrieve`` from a repository
    holding the pipeline in a subfolder and its ``search/`` folder at the top (``../search``).
    """

    def __init__(self, corpus: Corpus, spec: str, source: CallableSource) -> None:
        from goldenset.scoring.query_cache import digest

        self.corpus, self.spec, self.source = corpus, spec, source
        self._handed = digest(*corpus.chunk_ids, *corpus.texts)  # what it ranks

    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK:
        from goldenset.scoring.query_cache import digest
        from goldenset.scoring.topk import chunk_depth, to_groups

        groups, n_chunks = queries.query_set.groups, len(self.corpus.chunk_ids)
        wanted = min(chunk_depth(groups, n_chunks, depth), n_chunks)
        texts = list(queries.texts)
        keys = [digest(self._handed, str(wanted), text) for text in texts]
        cache = self.source.cache
        missing = [i for i, key in enumerate(keys) if cache.get(key) is None]
        for batch in self._batches(missing, queries.query_set.name):
            answer = self._ask([texts[i] for i in batch], wanted, len(cache.answers))
            check_answer_count(answer, len(batch), self.spec)
            for i, ranked in zip(batch, answer, strict=True):
                cache.put(keys[i], [plain(entry) for entry in ranked])
        answers = [cache.get(key) for key in keys]
        found = parse_ranked_ids(answers, self.corpus.chunk_ids, len(texts), self.spec)
        return to_groups(found, groups, depth)

    def _batches(self, rows: list[int], name: str) -> Iterator[list[int]]:
        """The questions not asked before, a batch a call, with a progress bar for many."""
        from tqdm import tqdm

        size = self.source.batch_size
        batches = [rows[start : start + size] for start in range(0, len(rows), size)]
        bar = tqdm(batches, desc=f"external {name}", unit="batch", disable=len(batches) < 2)
        yield from bar

    def _ask(self, texts: list[str], k: int, kept: int) -> object:
        try:
            return self.source.function(texts, self.corpus.chunk_ids, self.corpus.texts, k)
        except Exception as error:  # the user's code, or the index it queries: any error
            reason = (str(error).strip().splitlines() or [""])[0]
            raise GoldensetError(
                f"retrievers.external: {self.spec} failed on {len(texts)} questions "
                f"({type(error).__name__}: {reason}); check the index or service it queries: "
                f"the {kept} answers it gave are kept and the next run asks only the rest"
            ) from error


@dataclass(frozen=True)
class CallableSource:
    """What a callable retriever reads from outside: the function, its answers so far, and how
    many questions it is asked a call."""

    function: Callable
    cache: QueryCache
    batch_size: int = 64


def load_callable(
    spec: str, folder: str, section: str = "retrievers.external", field: str = "callable"
) -> Callable:
    """``module:function`` imported from ``folder`` (``section``.``field`` names it in errors)."""
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
            f"{section}.{field}: cannot import {module_name!r} ({error}); put the module in "
            f"{section}.folder, e.g. external/<name>.py named external.<name>"
        ) from None
    function = getattr(module, function_name, None)
    if not callable(function):
        raise GoldensetError(
            f"{section}.{field}: {module_name!r} has no function {function_name!r}"
        )
    return function


def plain(entry: object) -> str | list:
    """An answer's entry as JSON keeps it: an id, or [id, score] (a numpy score as a float)."""
    if isinstance(entry, str):
        return entry
    item, score = entry  # type: ignore[misc]
    return [str(item), float(score)]


def check_answer_count(answer: object, n_queries: int, origin: str) -> None:
    if not isinstance(answer, Sequence) or len(answer) != n_queries:
        raise GoldensetError(
            f"retrievers.external: {origin} must return one ranked list per query "
            f"({n_queries}), got {type(answer).__name__}"
            + (f" of {len(answer)}" if isinstance(answer, Sequence) else "")
        )


def parse_ranked_ids(answer: object, item_ids: list[str], n_queries: int, origin: str) -> TopK:
    """Per-query lists of ids or (id, score) pairs -> ranked lists; scores default to 1/rank."""
    from goldenset.scoring.topk import padded

    check_answer_count(answer, n_queries, origin)
    assert isinstance(answer, Sequence)
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

    def __init__(self, path: str, run: Mapping[str, Mapping[str, float]]) -> None:
        self.path, self._run = path, run  # qid -> item id -> score, read by load_external

    def rank(self, queries: Queries, depth: int, earlier: Mapping[str, TopK]) -> TopK | None:
        import numpy as np

        from goldenset.metrics.ranking import rank_run
        from goldenset.scoring.topk import TopK

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


def load_external(settings: ExternalParams) -> CallableSource | dict[str, dict[str, float]]:
    """The callable imported with its cache of answers, or the run file read."""
    from goldenset.scoring.exports import read_trec_run
    from goldenset.scoring.query_cache import QueryCache, digest, folder_digest

    if settings.callable:
        function = load_callable(settings.callable, settings.folder)
        code = folder_digest(Path(settings.folder))
        identity = digest(settings.callable, code, settings.version)
        cache = QueryCache.open(Path(settings.cache_dir), identity)
        return CallableSource(function, cache, settings.batch_size)
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


def _ranks_the_chunks_handed(settings: ExternalParams) -> bool:
    """A callable ranks the chunks it is handed; a run file, the ids it holds."""
    return bool(settings.callable)


RETRIEVERS.register(
    "external",
    RetrieverEntry(
        ExternalParams,
        build_external,
        order=40,
        model_free=True,
        ranks_chunks=_ranks_the_chunks_handed,
        load=load_external,
    ),
)
