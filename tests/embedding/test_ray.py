"""embed.engine: ray on a real local Ray cluster (2 CPUs), with the real MiniLM model: the same
vectors as in process, and a model worker killed mid-run loses and duplicates nothing."""

from __future__ import annotations

import gzip
import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from goldenset.core.params import EmbedParams
from goldenset.embedding.cache import EmbeddingCache
from goldenset.embedding.encoder import embed_texts, load_encoder, model_identity
from tests.conftest import ROOT

ray = pytest.importorskip("ray", reason="embed.engine ray needs the ray extra")
from goldenset.embedding.ray import ray_encoder, start_ray  # noqa: E402

pytestmark = pytest.mark.slow
PARAMS = EmbedParams(engine="ray", ray={"actors": 1})


@pytest.fixture(scope="module")
def local_ray():
    # one small local cluster for the module: Ray takes a while to start on 2 cores
    start_ray(None, num_cpus=2, object_store_memory=256 * 2**20)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    with gzip.open(ROOT / "data/docs/scifact-sample.jsonl.gz", "rt") as sample:
        texts = [json.loads(line)["text"] for line in sample]
    parts = [part.strip() for text in texts for part in text.split(". ") if part.strip()]
    return list(dict.fromkeys(parts))[:1200]


def in_process(texts: list[str], folder: Path) -> np.ndarray:
    encode, dimension = load_encoder(PARAMS)
    cache = EmbeddingCache(folder)
    return embed_texts(texts, encode, cache, model_identity(PARAMS), dimension=dimension)


def on_ray(texts: list[str], folder: Path, **options) -> np.ndarray:
    _, dimension = load_encoder(PARAMS)
    cache = EmbeddingCache(folder)
    return embed_texts(
        texts,
        lambda batch: pytest.fail("the local encoder must not run"),
        cache,
        model_identity(PARAMS),
        dimension=dimension,
        encode_missing=ray_encoder(PARAMS, **options),
    )


def model_workers() -> list[int]:
    """Pids of Ray Data's model actors (Ray names the process after the actor class)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"MapWorker" in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def stored_rows(cache: Path) -> int:
    """Vectors in the cache's segments (each written whole, then renamed into place)."""
    return sum(np.load(segment)["keys"].shape[0] for segment in cache.glob("*.npz"))


def test_ray_vectors_equal_in_process_and_only_misses_are_sent(local_ray, sentences, tmp_path):
    texts = sentences[:300]
    expected = in_process(texts, tmp_path / "local")
    cache = tmp_path / "ray"
    in_process(texts[:100], cache)  # already cached: Ray gets only the other 200
    got = on_ray(texts + texts[:10], cache)  # repeats come from the cache too
    np.testing.assert_allclose(got[:300], expected, atol=1e-6, rtol=0)
    np.testing.assert_array_equal(got[300:], got[:10])
    sizes = sorted(np.load(segment)["keys"].shape[0] for segment in cache.glob("*.npz"))
    assert sizes == [100, 200]  # the in-process segment, then the 200 misses Ray encoded


def test_a_worker_killed_mid_run_loses_and_duplicates_no_vector(local_ray, sentences, tmp_path):
    texts = sentences
    cache = tmp_path / "ray"
    result: dict[str, np.ndarray] = {}
    worker = threading.Thread(
        target=lambda: result.update(vectors=on_ray(texts, cache, flush_every=64))
    )
    worker.start()
    killed, at_kill, replacements = None, 0, set()
    deadline = time.monotonic() + 300
    while worker.is_alive() and time.monotonic() < deadline:
        pids = model_workers()
        if killed is None and pids and list(cache.glob("*.npz")):  # mid-run: some vectors in
            at_kill, alive = stored_rows(cache), set(pids)
            killed = pids[0]
            os.kill(killed, signal.SIGKILL)
        elif killed is not None:
            replacements.update(set(pids) - alive)
        time.sleep(0.05)
    worker.join(timeout=600)
    assert killed is not None, "the run ended before a model worker could be killed"
    assert killed not in model_workers()
    assert 0 < at_kill < len(texts)  # the kill cut the run short: work was left to do
    assert replacements, "no new model worker took over after the kill"

    vectors = result["vectors"]
    assert vectors.shape == (len(texts), 384)
    assert stored_rows(cache) == len(texts)  # every vector stored exactly once
    np.testing.assert_allclose(vectors, in_process(texts, tmp_path / "local"), atol=1e-6, rtol=0)
