"""A team's store asked through goldenset (goldenset.retrieval.stores: the chroma adapter, ask_store
and its cache, then goldenset.scoring.store_chunking placing the passages) against the store's own
client loop, the baseline: the same questions, embedded by the same model a batch at a time,
then ``collection.query(query_embeddings=..., n_results=k)`` with Chroma's default ``include``
(documents, metadatas, distances), 64 questions a call as ask_store asks them.

The store: a Chroma PersistentClient collection in a temporary folder (cosine space) of
--chunks synthetic chunks, 10 a document, each a 500-character window cut by character offsets
from a document of random words of a fixed vocabulary (an exact substring, its ``doc_id`` and
``start_index`` in its metadata), with random unit 384-d vectors: embedding 100,000 chunks with
MiniLM would take an hour or more on 2 cores, and what is timed does not depend on what the
vectors mean. The questions (--questions synthetic texts) are embedded by the adapter's model,
the packaged all-MiniLM-L6-v2, as a team's store would embed them.

Printed, for each --k (100, score.depth's default, and 10):
1. the store's own loop: questions/s, and the part of it spent embedding and in Chroma;
2. goldenset's loop (store_loader + ask_store through the registered chroma adapter, an empty
   cache): questions/s and its time as a ratio of (1): the adapter, the Hit conversion and the
   cache;
3. the same questions again from the cache, as a re-run of score reads them: the cache file
   written, opened again and asked, the store never opened;
4. locating: foreign_chunking over the answers, then over the answers and every listed chunk
   (listed_chunks: all of the store's chunks), seconds, passages/s and how each was placed.
Both loops first answer 64 warm-up questions (the client opened, the model loaded, the index
read), timed apart. Building the collection is timed apart too and is in no ratio.

PYTHONPATH=src python benchmarks/bench_stores.py [--chunks 100000 --questions 1000 --k 100 10]
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from goldenset.retrieval.locate import place_passages
from goldenset.retrieval.retrievers.base import RETRIEVERS
from goldenset.retrieval.stores.base import Hit, ask_store, listed_chunks, query_encoder
from goldenset.retrieval.stores.chroma import INCLUDED, ChromaParams
from goldenset.scoring.store_chunking import _distinct, foreign_chunking

DIM, CHUNK_CHARS, PER_DOCUMENT = 384, 500, 10
COLLECTION, BATCH, WARM_UP = "bench", 64, 64
VOCABULARY, SEED = 5000, 0
NAME = "chroma"


def vocabulary(rng: np.random.Generator) -> np.ndarray:
    """Pronounceable made-up words of 2 to 5 syllables: the tokenizer splits them as it would
    rare real words."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    words = {"".join(rng.choice(syllables, size=rng.integers(2, 6))) for _ in range(VOCABULARY * 2)}
    return np.array(sorted(words)[:VOCABULARY])


def documents(n_chunks: int, words: np.ndarray, rng: np.random.Generator) -> dict[str, str]:
    """Documents of random words, PER_DOCUMENT windows of CHUNK_CHARS each (the last one
    fewer when n_chunks is not a multiple)."""
    texts = {}
    for number, first in enumerate(range(0, n_chunks, PER_DOCUMENT)):
        length = min(PER_DOCUMENT, n_chunks - first) * CHUNK_CHARS
        text = " ".join(rng.choice(words, size=length // 5))  # ~7 characters a word
        while len(text) < length:
            text += " " + " ".join(rng.choice(words, size=64))
        texts[f"doc{number:06d}"] = text[:length]
    return texts


def chunks(texts: dict[str, str]) -> list[tuple[str, str, int]]:
    """(doc_id, text, start) of each window, an exact substring of its document."""
    return [
        (doc_id, text[start : start + CHUNK_CHARS], start)
        for doc_id, text in texts.items()
        for start in range(0, len(text), CHUNK_CHARS)
    ]


def questions(n: int, words: np.ndarray, rng: np.random.Generator) -> list[str]:
    """Distinct questions of 6 to 14 words."""
    asked: dict[str, None] = {}
    while len(asked) < n:
        said = " ".join(rng.choice(words, size=rng.integers(6, 15)))
        asked[f"What does {said} say?"] = None
    return list(asked)


def build(folder: Path, cut: list[tuple[str, str, int]], rng: np.random.Generator) -> float:
    """The collection, added in the client's largest batches; its seconds."""
    import chromadb
    from chromadb.config import Settings

    started = time.perf_counter()
    client = chromadb.PersistentClient(
        path=str(folder), settings=Settings(anonymized_telemetry=False)
    )
    collection = client.create_collection(
        COLLECTION, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
    )
    size = min(client.get_max_batch_size(), 5000)
    for first in range(0, len(cut), size):
        part = cut[first : first + size]
        vectors = rng.standard_normal((len(part), DIM), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        collection.add(
            ids=[f"c{first + i:07d}" for i in range(len(part))],
            embeddings=vectors,
            documents=[text for _, text, _ in part],
            metadatas=[{"doc_id": doc_id, "start_index": start} for doc_id, _, start in part],
        )
    return time.perf_counter() - started


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(started: tuple[float, float]) -> tuple[float, float]:
    """(wall seconds, process CPU seconds) since ``started``."""
    return time.perf_counter() - started[0], time.process_time() - started[1]


class OwnLoop:
    """The store's own client loop: the model and the collection opened once, then each batch
    embedded and queried."""

    def __init__(self, folder: Path, model: str) -> None:
        import chromadb
        from chromadb.config import Settings

        client = chromadb.PersistentClient(
            path=str(folder), settings=Settings(anonymized_telemetry=False)
        )
        self.collection = client.get_collection(COLLECTION, embedding_function=None)
        self.encode = query_encoder(model)
        self.embedding = self.querying = 0.0

    def ask(self, texts: list[str], k: int) -> int:
        """Every question's k results; how many came back."""
        found = 0
        for first in range(0, len(texts), BATCH):
            started = time.perf_counter()
            vectors = self.encode(texts[first : first + BATCH])
            embedded = time.perf_counter()
            answer = self.collection.query(query_embeddings=vectors, n_results=k, include=INCLUDED)
            self.querying += time.perf_counter() - embedded
            self.embedding += embedded - started
            found += sum(len(ids) for ids in answer["ids"])
        return found


class TimedEncoder:
    """An encode function and the seconds spent in it."""

    def __init__(self, encode) -> None:
        self.encode, self.seconds = encode, 0.0

    def __call__(self, texts: list[str]) -> np.ndarray:
        started = time.perf_counter()
        vectors = self.encode(texts)
        self.seconds += time.perf_counter() - started
        return vectors


def line(label: str, seconds: tuple[float, float], rate: str = "", ratio: str = "") -> None:
    wall, cpu = seconds
    print(f"{label:<52} {wall:8.2f} s {cpu:8.2f} s CPU  {rate:<22} {ratio}".rstrip())


def per_second(count: int, wall: float, unit: str) -> str:
    return f"{count / wall:10,.0f} {unit}/s"


def compare(args, folder: Path, cache: Path, texts: list[str], warm: list[str], k: int):
    """(1), (2) and (3) for one k; goldenset's answers and its open source."""
    n = len(texts)
    print(f"\n-- k={k}: {n:,} questions, {BATCH} a call")
    started = clock()
    own = OwnLoop(folder, ChromaParams().model)
    own.ask(warm, k)
    line("the store's own loop: open, load model, warm-up", since(started))
    own.embedding = own.querying = 0.0
    started = clock()
    found = own.ask(texts, k)
    baseline = since(started)
    line("(1) the store's own loop (baseline)", baseline, per_second(n, baseline[0], "questions"))
    print(
        f"    embedding {own.embedding:.2f} s, collection.query {own.querying:.2f} s; "
        f"{found:,} results"
    )

    settings = ChromaParams(
        enabled=True, path=str(folder), collection=COLLECTION, cache_dir=str(cache / f"k{k}")
    )
    load = RETRIEVERS[NAME].load
    started = clock()
    source = load(settings)
    ask_store(NAME, source, warm, k)
    line("goldenset: store_loader, open, load model, warm-up", since(started))
    encoder = TimedEncoder(source.store._encode)  # instruments only: the same function, timed
    source.store._encode = encoder
    started = clock()
    answers = ask_store(NAME, source, texts, k)
    ours = since(started)
    line(
        "(2) goldenset: ask_store, chroma adapter",
        ours,
        per_second(n, ours[0], "questions"),
        f"{ours[0] / baseline[0]:.2f}x the time of (1)",
    )
    rest = ours[0] - encoder.seconds
    print(
        f"    embedding {encoder.seconds:.2f} s, the rest {rest:.2f} s "
        f"({rest / own.querying:.2f}x the collection.query time of (1)); "
        f"{sum(map(len, answers)):,} hits"
    )
    hits = [hit for found in answers for hit in found]
    started = time.perf_counter()
    rows = [hit.row() for hit in hits]
    as_rows = time.perf_counter() - started
    started = time.perf_counter()
    [Hit.of_row(row) for row in rows]
    of_rows = time.perf_counter() - started
    print(
        f"    of the rest, measured apart: Hit.row {as_rows:.2f} s, Hit.of_row {of_rows:.2f} s "
        f"for its {len(hits):,} hits"
    )

    started = clock()
    source.cache.save()
    written = since(started)
    size = source.cache.path.stat().st_size
    line("    cache file written", written, f"{size / 2**20:10,.1f} MiB")
    started = clock()
    again = load(settings)  # a re-run of score: a new source on the same cache file
    opened = since(started)
    line("    cache file opened (read, parsed)", opened)
    runs = []
    for _ in range(3):  # a full garbage collection may fall in one: the best of three
        started = clock()
        cached = ask_store(NAME, again, texts, k)
        runs.append(since(started))
    from_cache = min(runs)
    assert again._store is None, "the store was opened"
    assert cached == answers, "the cache answered otherwise"
    line(
        "(3) again from the cache: ask_store, best of 3",
        from_cache,
        per_second(n, from_cache[0], "questions"),
        f"{baseline[0] / from_cache[0]:,.0f}x faster than (1)",
    )
    print("    the three: " + ", ".join(f"{wall:.2f} s" for wall, _ in runs))
    total = (opened[0] + from_cache[0], opened[1] + from_cache[1])
    line(
        "    with the file's opening",
        total,
        per_second(n, total[0], "questions"),
        f"{baseline[0] / total[0]:,.0f}x faster than (1)",
    )
    return answers, source


def locating(texts: dict[str, str], asked: list[str], answers, source) -> None:
    """(4): the answers placed, then the answers with every chunk the store lists."""
    answered = dict(zip(asked, answers, strict=True))
    started = clock()
    listed = listed_chunks(NAME, source)
    seconds = since(started)
    assert listed is not None
    line(
        "listed_chunks: every chunk of the store",
        seconds,
        per_second(len(listed), seconds[0], "chunks"),
    )
    source.close()
    for label, chunked in (("answers", None), ("answers + listed chunks", listed)):
        started = clock()
        chunking = foreign_chunking(texts, answered, chunked, f"retrievers.{NAME}")
        seconds = since(started)
        placement = chunking.placement
        placed = len(placement.spans)
        line(f"(4) foreign_chunking, {label}", seconds, per_second(placed, seconds[0], "passages"))
        print(f"    {placement.lines()[0]}; {len(chunking.chunks):,} chunks")
        distinct = _distinct([*(chunked or []), *(hit for hits in answers for hit in hits)])
        started = clock()
        place_passages(texts, distinct)
        alone = since(started)
        line(
            "    of which place_passages",
            alone,
            per_second(len(distinct), alone[0], "passages"),
            f"{alone[0] / seconds[0]:.0%} of foreign_chunking",
        )
        assert placement.share == 1.0, "a passage was not located"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000, help="chunks in the store")
    parser.add_argument("--questions", type=int, default=1_000, help="questions asked")
    parser.add_argument(
        "--k", type=int, nargs="+", default=[100, 10], help="results asked a question"
    )
    args = parser.parse_args()
    print("$ PYTHONPATH=src python " + shlex.join(["benchmarks/bench_stores.py", *sys.argv[1:]]))
    import torch

    print(
        f"{args.chunks:,} chunks x {args.questions:,} questions, k {args.k}; "
        f"{os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    rng = np.random.default_rng(SEED)
    words = vocabulary(rng)
    started = clock()
    texts = documents(args.chunks, words, rng)
    cut = chunks(texts)
    every = questions(args.questions + WARM_UP, words, rng)
    asked, warm = every[: args.questions], every[args.questions :]
    line(f"synthetic: {len(texts):,} documents, {len(cut):,} chunks", since(started))
    with tempfile.TemporaryDirectory(prefix="bench_stores.") as temporary:
        folder, cache = Path(temporary) / "chroma", Path(temporary) / "cache"
        built = build(folder, cut, rng)
        print(
            f"{'collection built (not in any ratio)':<52} {built:8.2f} s{'':15}"
            f"{per_second(len(cut), built, 'chunks')}"
        )
        for k in args.k:
            answers, source = compare(args, folder, cache, asked, warm, k)
            locating(texts, asked, answers, source)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f} (other processes skew wall times)")


if __name__ == "__main__":
    main()
