"""embed: the local engine (in process, the baseline) against embed.engine ray, in one process.

Both embed the same SciFact abstracts with the configured model into empty caches; Ray runs a
local cluster with `--actors` model actors (one GPU each when the machine has GPUs). Prints
texts per second for each and the ratio. Needs the ray extra.

    PYTHONPATH=src python benchmarks/embed_ray_bench.py [--texts 2000] [--actors 1]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from goldenset.core.params import EmbedParams  # noqa: E402
from goldenset.corpus.beir import document_text  # noqa: E402
from goldenset.embedding.cache import EmbeddingCache  # noqa: E402
from goldenset.embedding.encoder import embed_texts, load_encoder, model_identity  # noqa: E402
from goldenset.embedding.ray import ray_encoder, start_ray  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--actors", type=int, default=1)
    parser.add_argument("--num-cpus", type=int, default=None, help="local Ray CPUs (all)")
    args = parser.parse_args()
    with gzip.open(ROOT / "data/docs/scifact-sample.jsonl.gz", "rt") as sample:
        texts = [document_text(d["title"], d["text"]) for d in map(json.loads, sample)]
    texts = [f"{texts[i % len(texts)]} ({i})" for i in range(args.texts)]  # all distinct
    params = EmbedParams(engine="ray", ray={"actors": args.actors})
    identity = model_identity(params)
    encode, dimension = load_encoder(params)

    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        embed_texts(texts, encode, EmbeddingCache(Path(scratch, "local")), identity,
                    dimension=dimension, batch_size=params.batch_size)  # fmt: skip
        local_s = time.perf_counter() - started

        started = time.perf_counter()
        start_ray(None, num_cpus=args.num_cpus)
        ray_start_s = time.perf_counter() - started
        started = time.perf_counter()
        embed_texts(texts, encode, EmbeddingCache(Path(scratch, "ray")), identity,
                    dimension=dimension, encode_missing=ray_encoder(params))  # fmt: skip
        ray_s = time.perf_counter() - started

    print(f"local: {args.texts} texts in {local_s:.1f} s, {args.texts / local_s:.0f} texts/s")
    print(
        f"  ray: {args.texts} texts in {ray_s:.1f} s, {args.texts / ray_s:.0f} texts/s "
        f"({args.actors} actors; cluster start {ray_start_s:.1f} s not counted)"
    )
    print(f"ray against local: {local_s / ray_s:.2f}x")


if __name__ == "__main__":
    main()
