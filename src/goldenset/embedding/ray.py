"""embed.engine: ray — texts the cache lacks, encoded by a pool of model actors on a Ray cluster.

Ray Data streams the missing texts through `map_batches` to an actor pool; each actor holds one
sentence-transformers model (on one GPU when the cluster has GPUs). Every row carries its cache
key, so results may arrive in any order and land in the same content-addressed cache as the
local engine's; `embed_texts` then reads them back in input order. A worker that dies mid-run
is restarted and its batch re-run by Ray; a vector computed twice is stored once (the cache is
keyed), and a run killed outright resumes from the segments already flushed.
"""

from __future__ import annotations

import logging

import numpy as np
from tqdm import tqdm

from goldenset.core.errors import GoldensetError
from goldenset.core.install import install_command
from goldenset.core.params import EmbedParams
from goldenset.embedding.cache import EmbeddingCache
from goldenset.embedding.encoder import MissingEncoder

log = logging.getLogger("goldenset")

# texts per cache segment, as the local engine: a crash re-embeds at most this many
FLUSH_EVERY = 2048


class EncoderActor:
    """One model per actor, loaded once; Ray calls it with batches of {key, text} columns."""

    def __init__(self, params: EmbedParams) -> None:
        from goldenset.embedding.encoder import load_encoder

        self.encode, _ = load_encoder(params, device=None)  # GPU when Ray assigned one

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vectors = self.encode([str(text) for text in batch["text"]])
        return {"key": batch["key"], "vector": vectors}


def start_ray(address: str | None, **local_options: object) -> None:
    """Connect to the cluster at address, or start a local Ray when address is None."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False, **local_options)


def ray_encoder(params: EmbedParams, *, flush_every: int = FLUSH_EVERY) -> MissingEncoder:
    """An `embed_texts(encode_missing=...)` hook that encodes on the Ray cluster."""
    try:
        import ray.data  # noqa: F401
    except ModuleNotFoundError:
        raise GoldensetError(
            f"embed.engine is ray but Ray is not installed: {install_command('ray')}, "
            "or set embed.engine to local"
        ) from None

    def encode_missing(
        missing: list[tuple[bytes, str]], cache: EmbeddingCache, prefix: str
    ) -> None:
        import ray
        import ray.data

        start_ray(params.ray.address)
        gpus = int(ray.cluster_resources().get("GPU", 0))
        actors = params.ray.actors or max(gpus, 1)
        log.info(
            "embed: %d texts on Ray, %d actors (%s)",
            len(missing),
            actors,
            f"1 GPU each of {gpus}" if gpus else "CPU",
        )
        rows = [{"key": key.hex(), "text": prefix + text} for key, text in missing]
        blocks = max(1, len(rows) // 256)
        dataset = ray.data.from_items(rows, override_num_blocks=blocks).map_batches(
            EncoderActor,
            fn_constructor_args=(params,),
            batch_size=params.batch_size,
            concurrency=actors,
            num_gpus=1 if gpus else 0,
            num_cpus=0 if gpus else 1,
            # a dead worker is restarted and its batch re-run, as often as it takes
            max_restarts=-1,
            max_task_retries=-1,
        )
        with tqdm(total=len(rows), desc="embed (ray)", unit="text") as progress:
            for batch in dataset.iter_batches(batch_size=flush_every, batch_format="numpy"):
                keys = [bytes.fromhex(str(key)) for key in batch["key"]]
                cache.add(keys, np.asarray(batch["vector"], dtype=np.float32))
                progress.update(len(keys))

    return encode_missing
