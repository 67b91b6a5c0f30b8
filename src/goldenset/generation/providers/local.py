"""The in-process local provider: llama-cpp-python running a GGUF model, deterministic by design.

Determinism: decoding is greedy on the first attempt (seeded sampling on retries), and every
prompt is evaluated in the same pieces, whatever was asked before: the fixed prefix (system prompt
and few-shot turns), then the first question's prompt (the passage turn), then the rest (a retry's
rejected answer and correction). The llama.cpp state after each piece is saved, and restored byte
for byte when a later prompt starts with it. A question therefore never depends on which passages
were processed before it, in this process or another.

Speed: answers are one line (the question), so decoding stops at the first line break, and prompt
evaluation dominates the time of a request. The saved states make a retry of the same passage pay
only for what follows the passage: a resample (the same prompt, another seed) evaluates one token,
a correction only the rejected answer and the correction.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import Field

from goldenset.core.errors import GoldensetError
from goldenset.core.params import Section
from goldenset.generation.interface import RETRY_TEMPERATURE, Completion, attempt_temperature
from goldenset.generation.prompt import FORMS, few_shot_turns
from goldenset.generation.providers.local_model import (
    INSTALL_HINT,
    MODEL_SHA256,
    default_model_path,
)
from goldenset.generation.providers.registry import PROVIDERS, ProviderEntry, require_installed

if TYPE_CHECKING:
    from goldenset.generation.fields import GenerateFields
    from goldenset.generation.steering import Decoded, Steer

REPEAT_PENALTY = 1.1
RETRY_TOP_K, RETRY_TOP_P, RETRY_MIN_P = 40, 0.95, 0.05
_SEED_SPACE = 0xFFFFFFFF  # llama.cpp reads 0xFFFFFFFF as "random seed": stay below it
STATES_KEPT = 4  # the few-shot prefix and the passages in flight (one question at a time)

# Used only when the GGUF carries no chat template; Qwen and most instruct models carry one.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


class LocalProvider:
    """Provider for `generate.provider: local`. Not thread-safe: run it with one worker.

    The model loads lazily on the first `complete` (or an explicit `load`), so a run whose
    answers all come from the cache never pays the load time or memory.
    """

    name = "local"
    steers = True  # its own token loop holds each answer to the query's rules (steering.py)
    max_concurrency = 1  # one llama.cpp context; calls are serialised by a lock anyway

    def __init__(self, params: GenerateFields) -> None:
        require_installed(self.name)
        self._params = params
        self.model_path = _resolve_model_path(params.local.model_path)
        self.model = self.model_path.name
        self._n_threads = params.local.n_threads or _available_cpus()
        self._lock = threading.Lock()
        self._llm: Any = None
        self._template: Any = None
        self._prefix_template: Any = None
        self._add_bos = False
        # llama.cpp states after a prompt's leading pieces, most recently used last
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self.evaluated_tokens = 0  # prompt tokens evaluated (not restored from a saved state)
        self._spellings: dict[str, list[tuple[int, ...]]] = {}  # word -> how it is written

    def identity(self) -> dict:
        local = self._params.local
        if local.model_path is None:
            model_id: dict = {"model_sha256": MODEL_SHA256}
        else:  # hashing a user's GGUF on every run costs seconds; name and size identify it
            model_id = {"model_size": self.model_path.stat().st_size}
        # imported here: this module registers the provider, and the docs build imports it
        # without the numerical stack
        from goldenset.generation.steering import steering_key

        return {
            "provider": self.name,
            "model": self.model,
            **model_id,
            "n_ctx": local.n_ctx,
            "max_tokens": self._params.max_tokens,
            "temperature": self._params.temperature,
            "retry_temperature": RETRY_TEMPERATURE,
            "retry_top_k": RETRY_TOP_K,
            "retry_top_p": RETRY_TOP_P,
            "retry_min_p": RETRY_MIN_P,
            "repeat_penalty": REPEAT_PENALTY,
            "seed": self._params.seed,
            "stop": "a whole query, or the first line break",
            # the decoder's rules and echo penalty (steering.py) change the answers
            "steer": {
                "rules": steering_key(),
                "echo_penalty": self._params.echo_penalty,
                **({"subject_boost": boost} if (boost := self._params.subject_boost) else {}),
            },
        }

    def load(self) -> None:
        """Load the model now (otherwise the first `complete` does)."""
        with self._lock:
            self._ensure_loaded()

    def close(self) -> None:
        with self._lock:
            if self._llm is not None:
                self._llm.close()
            self._llm = None
            self._states.clear()

    def complete(
        self,
        system: str,
        messages: list[dict[str, str]],
        *,
        attempt: int,
        steer: Steer | None = None,
    ) -> Completion:
        """steer: the rules and echo penalty the decoder holds this answer to (steering.py);
        None decodes freely, stopping at the first line break."""
        if not messages or messages[-1].get("role") != "user":
            raise ValueError("messages must end with the user turn to answer")
        with self._lock:
            started, evaluated = time.perf_counter(), self.evaluated_tokens
            self._ensure_loaded()
            chat = ([{"role": "system", "content": system}] if system else []) + list(messages)
            prompt = self._tokenize(self._template(messages=chat).prompt)
            self._check_fits(len(prompt))
            suffix = self._restore_pieces(prompt, self._piece_ends(chat, prompt))
            self._evaluate(suffix)
            decoded = self._decode(len(prompt), attempt, steer)
        return Completion(
            text=decoded.text.strip().split("\n", 1)[0],
            input_tokens=len(prompt),
            output_tokens=len(decoded.tokens),
            truncated=decoded.truncated,
            evaluated_tokens=self.evaluated_tokens - evaluated,
            steered_tokens=decoded.steered,
            seconds=time.perf_counter() - started,
        )

    def _ensure_loaded(self) -> None:
        if self._llm is not None:
            return
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        local = self._params.local
        try:
            llm = llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=local.n_ctx,
                n_threads=self._n_threads,
                n_threads_batch=self._n_threads,
                use_mmap=False,  # with mmap the file's pages stay resident beside the weights
                verbose=False,
            )
        except ValueError:  # llama-cpp-python's "Failed to load model from file"
            raise GoldensetError(
                f"generate.local.model_path: llama.cpp cannot load {self.model_path} "
                "(a damaged GGUF file, or an architecture this llama-cpp-python does not know)"
            ) from None
        template = llm.metadata.get("tokenizer.chat_template") or CHATML_TEMPLATE
        eos, bos = _token_text(llm, llm.token_eos()), _token_text(llm, llm.token_bos())
        self._template = Jinja2ChatFormatter(template, eos, bos, add_generation_prompt=True)
        self._prefix_template = Jinja2ChatFormatter(template, eos, bos, add_generation_prompt=False)
        # A GGUF template writes its own BOS token; the ChatML fallback lets the tokenizer add one.
        self._add_bos = template == CHATML_TEMPLATE
        self._llm = llm

    def _piece_ends(self, chat: list[dict[str, str]], prompt: list[int]) -> list[int]:
        """Where the prompt's saved pieces end: after the fixed prefix, and before the last token
        of the first question's prompt (a resample of that prompt then evaluates one token, which
        refreshes the logits to sample from)."""
        fixed_turns = _fixed_turns(chat)  # always fewer turns than the chat
        fixed = self._render(fixed_turns, generation_prompt=False)
        # the first question's prompt: the fixed turns and the passage turn after them
        first = self._render(chat[: len(fixed_turns) + 1], generation_prompt=True)[:-1]
        # a piece the prompt does not start with (a template or tokenizer quirk) is not reused
        ends = {
            len(p) for p in (fixed, first) if 0 < len(p) < len(prompt) and prompt[: len(p)] == p
        }
        return sorted(ends)

    def _render(self, turns: list[dict[str, str]], *, generation_prompt: bool) -> list[int]:
        if not turns:
            return []
        template = self._template if generation_prompt else self._prefix_template
        try:
            return self._tokenize(template(messages=turns).prompt)
        except Exception:  # a template may refuse a partial chat: that only costs the reuse
            return []

    def _tokenize(self, text: str) -> list[int]:
        return self._llm.tokenize(text.encode("utf-8"), add_bos=self._add_bos, special=True)

    def _check_fits(self, prompt_tokens: int) -> None:
        n_ctx, max_tokens = self._params.local.n_ctx, self._params.max_tokens
        if prompt_tokens + max_tokens > n_ctx:
            raise GoldensetError(
                f"a prompt of {prompt_tokens} tokens plus generate.max_tokens={max_tokens} exceeds "
                f"generate.local.n_ctx={n_ctx}: raise generate.local.n_ctx or lower "
                "generate.passage_size"
            )

    def _restore_pieces(self, prompt: list[int], ends: list[int]) -> list[int]:
        """Put the context right after the prompt's last piece; return the tokens still to
        evaluate.

        Each piece is evaluated on top of the one before, and the state after it saved, so a
        piece's state is the same whether it was computed now or restored.
        """
        llm = self._llm
        restored = max((end for end in ends if tuple(prompt[:end]) in self._states), default=0)
        if restored:
            key = tuple(prompt[:restored])
            self._states.move_to_end(key)
            _load_context(llm, self._states[key])
            llm.input_ids[:restored] = prompt[:restored]
            llm.n_tokens = restored
        else:
            llm.reset()
        for end in (end for end in ends if end > restored):
            self._evaluate(prompt[llm.n_tokens : end])
            self._states[tuple(prompt[:end])] = _save_context(llm)
            while len(self._states) > STATES_KEPT:
                self._states.popitem(last=False)
        return prompt[llm.n_tokens :]

    def _evaluate(self, tokens: list[int]) -> None:
        self._llm.eval(tokens)
        self.evaluated_tokens += len(tokens)

    def _decode(self, prompt_tokens: int, attempt: int, steer: Steer | None) -> Decoded:
        """Decode after the evaluated prompt: greedy on the first attempt, sampled (seeded by
        the attempt) on retries, until a whole query, max_tokens or request_timeout (a rare
        stall of the CPU backend: given up on, like an API timeout)."""
        from goldenset.generation.steering import Sampling, Steer, decode

        sampling = Sampling(
            temperature=attempt_temperature(self._params.temperature, attempt),
            top_k=RETRY_TOP_K,
            top_p=RETRY_TOP_P,
            min_p=RETRY_MIN_P,
            repeat_penalty=REPEAT_PENALTY,
            seed=(self._params.seed + attempt) % _SEED_SPACE,
        )
        model = _LlamaTokens(self._llm, prompt_tokens, self._word_tokens)
        deadline = time.monotonic() + self._params.request_timeout
        return decode(model, steer or Steer(None), sampling, self._params.max_tokens, deadline)

    def _word_tokens(self, word: str) -> list[tuple[int, ...]]:
        """The token sequences that write `word` as the model would: after a space or not,
        lower-case or capitalised."""
        if word not in self._spellings:
            forms = (f" {word}", f" {word.capitalize()}", word, word.capitalize())
            self._spellings[word] = sorted(
                {
                    tuple(self._llm.tokenize(form.encode("utf-8"), add_bos=False, special=False))
                    for form in forms
                }
            )
        return self._spellings[word]


class _LlamaTokens:
    """steering.TokenModel over a llama.cpp context positioned after an evaluated prompt."""

    def __init__(self, llm: Any, prompt_tokens: int, word_tokens: Any) -> None:
        import llama_cpp

        self._llm = llm
        self._prompt_tokens = prompt_tokens
        self._vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self.word_tokens = word_tokens

    def logits(self) -> np.ndarray:
        import llama_cpp

        scores = llama_cpp.llama_get_logits_ith(self._llm.ctx, -1)
        return np.ctypeslib.as_array(scores, shape=(self._llm.n_vocab(),))

    def advance(self, token: int) -> None:
        self._llm.eval([token])

    def rewind(self, generated: int) -> None:
        # the next eval drops the cache entries past n_tokens
        self._llm.n_tokens = self._prompt_tokens + generated

    def text(self, tokens: Sequence[int]) -> str:
        # a character split across tokens shows once whole
        return self._llm.detokenize(list(tokens)).decode("utf-8", errors="ignore")

    def is_end(self, token: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self._vocab, token))


def _fixed_turns(chat: list[dict[str, str]]) -> list[dict[str, str]]:
    """The leading turns every request shares: the system prompt and the few-shot turns.

    Their state is saved once and restored for every request; whatever follows (passage,
    rejected answers, corrections) is evaluated on top. For a chat without the few-shot turns,
    everything before the turn to answer.
    """
    start = 1 if chat and chat[0]["role"] == "system" else 0
    for form in FORMS.values():
        for titled in (False, True):
            fixed = few_shot_turns(form, titled=titled)
            if chat[start : start + len(fixed)] == fixed and len(chat) > start + len(fixed):
                return chat[: start + len(fixed)]
    return chat[:-1]


def _resolve_model_path(model_path: str | None) -> Path:
    if model_path is None:
        return default_model_path()
    path = Path(model_path).expanduser()
    if not path.is_file():
        raise GoldensetError(f"generate.local.model_path: {path} is not a file")
    with path.open("rb") as handle:
        magic = handle.read(4)
    if magic != b"GGUF":
        raise GoldensetError(f"generate.local.model_path: {path} is not a GGUF model file")
    return path


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _token_text(llm: Any, token: int) -> str:
    """A special token's text, as Llama itself hands it to chat templates."""
    import llama_cpp

    if token < 0:
        return ""
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    return llama_cpp.llama_vocab_get_text(vocab, token).decode("utf-8")


def _save_context(llm: Any) -> bytes:
    """The context's KV cache and logits.

    Not Llama.save_state: that also copies n_batch x n_vocab scores (300 MB) on every save and load.
    """
    import llama_cpp

    size = llama_cpp.llama_state_get_size(llm.ctx)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_get_data(llm.ctx, buffer, size)
    return ctypes.string_at(buffer, written)


def _load_context(llm: Any, state: bytes) -> None:
    import llama_cpp

    buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    if llama_cpp.llama_state_set_data(llm.ctx, buffer, len(state)) != len(state):
        raise RuntimeError("llama.cpp refused to restore the saved prefix state")


class LocalModelParams(Section):
    """generate.local: the GGUF file and how llama.cpp runs it."""

    model_path: str | None = None
    n_ctx: int = Field(4096, gt=0)
    n_threads: int | None = None


PROVIDERS.register(
    "local",
    ProviderEntry(
        LocalProvider,
        requires="llama_cpp",
        install_hint=INSTALL_HINT,
        params=LocalModelParams,
    ),
)
