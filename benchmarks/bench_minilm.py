"""The default embedding model's vectors (sentence-transformers/all-MiniLM-L6-v2, embed.model),
every candidate way to compute them here, side by side on the same texts in one process (one at
a time: two model jobs at once run 5-10x slower).

Baseline: sentence-transformers as the embed stage runs it (float32, batches of 64 texts, which
it sorts by length). Candidates: the same float32 model through this script's own batches and
mean pooling (the control: it must match the baseline), the model with torch's dynamic int8
linear layers (`torch.ao.quantization.quantize_dynamic`, weights per channel), and ONNX
Runtime on the model exported in float32 (only when the `onnx` package is installed), both
through the same tokenizer, batches and mean pooling. Printed per candidate: tokens/s, the
ratio to the baseline's, and the lowest and the 1st-percentile cosine of its vectors to the
baseline's.

Texts: as benchmarks/bench_e5.py (`--chunks` sample chunks and the golden questions).

    PYTHONPATH=src python benchmarks/bench_minilm.py --chunks 600
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import torch
from bench_e5 import compare, exported_forward, sample_texts

from goldenset.core.params import EmbedParams
from goldenset.embedding.encoder import load_encoder, resolve_model_path

Encode = Callable[[list[str]], np.ndarray]
BATCH = 64


def pooled_encoder(model, forward) -> Encode:
    """sentence-transformers' tokenizer, length-sorted batches and mean pooling around another
    forward function (ids, mask) -> hidden states; unit vectors."""

    def encode(texts: list[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), model.get_sentence_embedding_dimension()), np.float32)
        order = np.argsort([len(text) for text in texts])
        for start in range(0, len(texts), BATCH):
            rows = order[start : start + BATCH]
            features = model.tokenize([texts[row] for row in rows])
            mask = features["attention_mask"]
            with torch.inference_mode():
                hidden = forward(features["input_ids"], mask)
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1)
            vectors[rows] = torch.nn.functional.normalize(pooled, dim=1).numpy()
        return vectors

    return encode


def main() -> None:
    from sentence_transformers import SentenceTransformer

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=600)
    texts = sample_texts(parser.parse_args().chunks, prefixed=False)
    params = EmbedParams()
    model = SentenceTransformer(resolve_model_path(params.model), device="cpu")
    tokens = int(model.tokenize(texts)["attention_mask"].sum())  # padding left out
    print(f"{len(texts)} texts, {tokens} tokens, torch threads {torch.get_num_threads()}")
    bert = model[0].auto_model
    per_channel = torch.ao.quantization.per_channel_dynamic_qconfig
    int8 = torch.ao.quantization.quantize_dynamic(bert, {torch.nn.Linear: per_channel})

    def hidden_of(module):
        return lambda ids, mask: module(input_ids=ids, attention_mask=mask).last_hidden_state

    candidates: dict[str, Callable[[], Encode | None]] = {
        "sentence-transformers (baseline)": lambda: load_encoder(params)[0],
        "float32, the same pooling (control)": lambda: pooled_encoder(model, hidden_of(bert)),
        "torch int8 dynamic, per channel": lambda: pooled_encoder(model, hidden_of(int8)),
        "ONNX Runtime float32": lambda: (
            None if (forward := exported_forward(bert)) is None else pooled_encoder(model, forward)
        ),
    }
    compare(candidates, texts, tokens)


if __name__ == "__main__":
    main()
