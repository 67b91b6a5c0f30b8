"""The reader: the bundled model reads the evidence sentence and the question once, and says
two things of the pair.

- answer_margin: log P("Yes") - log P("No") for "does the sentence itself state the answer?",
  the criterion "answered" asked outright;
- writer_likelihood: the mean log-probability of the question's tokens after the sentence, how
  naturally the sentence calls for this question (a question adding a premise, or asking what
  the sentence does not say, is an unlikely one).

One forward pass per question: the fixed instruction is evaluated once and kept (llama.cpp's
prefix); each question pays for its sentence, itself and the closing words, and the output
layer runs for the rows read only (about 0.9 s a question on 2 cores:
benchmarks/bench_reader.py). The judge's weights were fitted with this model and prompt, so the
reader always runs the bundled GGUF, whatever generate.local.model_path says.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from goldenset.core.errors import GoldensetError
from goldenset.core.files import read_json_cache, write_json
from goldenset.core.install import install_command
from goldenset.generation.providers.local_model import MODEL_SHA256, default_model_path

# the instruction comes first so that only the sentence, the query and ASK are paid per pair;
# each form of query (generation.prompt.Form) is asked what the strict rule asks of it
INSTRUCTIONS = {
    "question": (
        "<|im_start|>system\nYou check whether a sentence answers a question. Reply Yes when the "
        "sentence itself states the answer, with no premise it does not give and no why or how it "
        "does not explain; otherwise reply No.<|im_end|>\n<|im_start|>user\n"
    ),
    "claim": (
        "<|im_start|>system\nYou check whether a sentence states a claim. Reply Yes when the "
        "sentence itself states the claim, adding nothing it does not say and no certainty it "
        "does not have; otherwise reply No.<|im_end|>\n<|im_start|>user\n"
    ),
    "keywords": (
        "<|im_start|>system\nYou check whether a sentence answers a keyword search. Reply Yes "
        "when the sentence itself gives what the search looks for; otherwise reply No."
        "<|im_end|>\n<|im_start|>user\n"
    ),
}
QUERY_AFTER = {"question": "\nQuestion: ", "claim": "\nClaim: ", "keywords": "\nSearch: "}
ASK = "<|im_end|>\n<|im_start|>assistant\n"
CONTEXT_TOKENS = 1024  # a sentence and a question; longer sentences are cut to fit
SENTENCE_TOKENS = 600


class Reader:
    def __init__(self, n_threads: int | None = None) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise GoldensetError(
                f"the judge reads questions with the bundled model: {install_command('local')}, "
                "or set audit.judge_sample: 0 to audit without it"
            ) from None
        self._cpp: Any = llama_cpp
        self._llm: Any = llama_cpp.Llama(
            model_path=str(default_model_path()),
            n_ctx=CONTEXT_TOKENS,
            n_batch=CONTEXT_TOKENS,  # a pair is always one batch
            n_threads=n_threads,
            n_threads_batch=n_threads,
            verbose=False,
        )
        self._batch = llama_cpp.llama_batch_init(CONTEXT_TOKENS, 0, 1)
        self._evaluated: list[int] = []  # the instruction whose keys and values the context holds
        self._yes = self._first_tokens("Yes", "yes")
        self._no = self._first_tokens("No", "no")

    def __del__(self) -> None:
        if getattr(self, "_batch", None) is not None:
            self._cpp.llama_batch_free(self._batch)

    def _first_tokens(self, *words: str) -> list[int]:
        return [self._tokens(word)[0] for word in words]

    def _tokens(self, text: str, special: bool = False) -> list[int]:
        return self._llm.tokenize(text.encode(), add_bos=False, special=special)

    def read(self, sentence: str, question: str, form: str = "question") -> tuple[float, float]:
        """(answer_margin, writer_likelihood) of one pair; `question` is a query of `form`."""
        instruction = self._tokens(INSTRUCTIONS[form], special=True)
        head = instruction + self._tokens("Sentence: " + sentence)[:SENTENCE_TOKENS]
        head += self._tokens(QUERY_AFTER[form])
        asked = self._tokens(question.strip())[:100] or self._tokens("?")
        tail = self._tokens(ASK, special=True)
        tokens = head + asked + tail
        # the logits after token i predict token i + 1: the question's rows, and the last row
        rows = [*range(len(head) - 1, len(head) + len(asked) - 1), len(tokens) - 1]
        log_probs = _log_softmax(self._logits(tokens, rows, len(instruction)))
        writer_likelihood = float(log_probs[np.arange(len(asked)), asked].mean())
        last = log_probs[-1]
        margin = float(np.logaddexp.reduce(last[self._yes]) - np.logaddexp.reduce(last[self._no]))
        return margin, writer_likelihood

    def _logits(self, tokens: list[int], rows: list[int], shared: int) -> np.ndarray:
        """The logits after each of `rows` of `tokens` (rows past the first `shared`). Those (the
        instruction) are evaluated on their own and kept for the next call; the rest in one
        batch, the output layer for `rows` only (it is a sixth of the work of a token). llama.cpp's
        numbers move with the batch a token is evaluated in: so evaluated, a reading is the same
        whatever was read before it."""
        if self._evaluated != tokens[:shared]:
            self._decode(tokens[:shared], 0, set())
            self._evaluated = tokens[:shared]
        self._decode(tokens[shared:], shared, set(rows))
        ctx, vocabulary = self._llm.ctx, self._llm.n_vocab()
        return np.array(
            [
                np.ctypeslib.as_array(
                    self._cpp.llama_get_logits_ith(ctx, row - shared), (vocabulary,)
                )
                for row in rows
            ],
            dtype=np.float64,
        )

    def _decode(self, tokens: list[int], start: int, wanted: set[int]) -> None:
        """Evaluate `tokens` at positions from `start` on, after dropping what the context held
        there; logits for the positions in `wanted`."""
        cpp, ctx, batch = self._cpp, self._llm.ctx, self._batch
        cpp.llama_memory_seq_rm(cpp.llama_get_memory(ctx), 0, start, -1)
        batch.n_tokens = len(tokens)
        for slot, token in enumerate(tokens):
            batch.token[slot] = token
            batch.pos[slot] = start + slot
            batch.n_seq_id[slot] = 1
            batch.seq_id[slot][0] = 0
            batch.logits[slot] = start + slot in wanted
        if cpp.llama_decode(ctx, batch) != 0:
            raise GoldensetError("the judge's reader could not evaluate a question; run it again")


READINGS_FILE = "readings.json"  # in a cache folder: what the reader said of each pair
# what a reading depends on besides its pair: the prompt and the model file
READER_VERSION = hashlib.sha256(
    json.dumps([INSTRUCTIONS, QUERY_AFTER, ASK, SENTENCE_TOKENS, MODEL_SHA256]).encode()
).hexdigest()[:16]


def cached_read(folder: Path, n_threads: int | None = None):
    """A Read that answers from the readings kept in `folder` and asks the reader (loaded on the
    first pair it lacks) for the others, each new reading kept at once: a re-run of the audit
    with the same questions loads no model."""
    path = folder / READINGS_FILE
    kept: dict[str, list[float]] = read_json_cache(path, "the bundled model's readings")
    reader: list[Reader] = []

    def read(sentence: str, question: str, form: str = "question") -> tuple[float, float]:
        key = hashlib.sha256(
            "\x1f".join([READER_VERSION, form, sentence, question]).encode()
        ).hexdigest()
        if key not in kept:
            if not reader:
                reader.append(Reader(n_threads))
            kept[key] = list(reader[0].read(sentence, question, form))
            folder.mkdir(parents=True, exist_ok=True)
            write_json(path, kept, indent=0)
        margin, likelihood = kept[key]
        return margin, likelihood

    return read


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    top = logits.max(axis=1, keepdims=True)
    return logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
