"""The real `anthropic` and `openai` SDKs over HTTP against a loopback server that speaks their
protocols: retries (and their timing), timeouts, truncation, and one clear line per setup error."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from goldenset.core.errors import GoldensetError
from goldenset.generation.params import GenerateParams
from goldenset.generation.pricing import price_for
from goldenset.generation.prompt import SYSTEM, build_messages, mark_target
from goldenset.generation.providers.anthropic import AnthropicProvider
from goldenset.generation.providers.openai import OpenAIProvider
from goldenset.generation.providers.registry import make_provider, provider_entry
from goldenset.llm_stand_in import Fault, LoopbackLLM, Reply, Stall
from goldenset.params import parse_params

APIS = ["anthropic", "openai"]
KEY = "test-key"
PASSAGE = "The backup job runs nightly at two. Restores need a ticket to the storage team."
MESSAGES = build_messages(mark_target(PASSAGE, 36, len(PASSAGE)))


def settings(api: str, **overrides) -> GenerateParams:
    values = dict(provider=api, max_retries=3, request_timeout=5.0)
    if api == "openai":
        values["model"] = "loopback-model"
    values.update(overrides)
    return GenerateParams(**values)


def provider_for(api: str, server: LoopbackLLM, key: str = KEY, **overrides):
    params = settings(api, **overrides)
    if api == "anthropic":
        return AnthropicProvider(params, api_key=key, base_url=server.url)
    return OpenAIProvider(params, api_key=key, base_url=server.openai_url)


def ask(provider):
    return provider.complete(SYSTEM, MESSAGES, attempt=0)


@pytest.fixture
def server():
    with LoopbackLLM() as running:
        yield running


@pytest.mark.parametrize("api", APIS)
def test_answer_and_usage_come_back(api, server):
    completion = ask(provider_for(api, server))
    assert completion.text == "What should I know about restores?"
    assert completion.input_tokens > 100 and completion.output_tokens > 5
    assert not completion.truncated
    (hit,) = server.hits
    assert hit.api == api and hit.passage == PASSAGE


@pytest.mark.parametrize("api", APIS)
def test_429_waits_as_long_as_retry_after_says(api, server):
    server.script(Fault(429, retry_after=0.7))
    ask(provider_for(api, server))
    refused, answered = server.hits
    assert (refused.status, answered.status) == (429, 200)
    assert answered.retry_count == 1
    # the SDK's own first backoff is at most 0.5 s: waiting 0.7 s means retry-after was obeyed
    assert answered.time - refused.time >= 0.7


@pytest.mark.parametrize("api", APIS)
def test_500_and_529_back_off_with_jitter_then_succeed(api, server):
    server.script(Fault(500), Fault(529))
    completion = ask(provider_for(api, server))
    assert completion.text
    first, second, third = server.hits
    assert [h.status for h in server.hits] == [500, 529, 200]
    # exponential backoff from 0.5 s, jitter takes off up to a quarter (upper bounds are loose:
    # a busy machine only ever delays the retry)
    assert 0.5 * 0.75 - 0.02 <= second.time - first.time <= 0.5 + 1.5
    assert 1.0 * 0.75 - 0.02 <= third.time - second.time <= 1.0 + 1.5
    assert server.answered().total() == 1


@pytest.mark.parametrize("api", APIS)
def test_a_slow_answer_times_out_and_is_asked_again(api, server):
    server.script(Stall(1.5))
    completion = ask(provider_for(api, server, request_timeout=0.4))
    assert completion.text
    assert server.received == 2
    assert server.answered().total() == 1  # the stalled answer never reached the client


@pytest.mark.parametrize("api", APIS)
def test_truncated_answer_is_flagged(api, server):
    server.script(Reply('{"question": "What is the', truncated=True))
    assert ask(provider_for(api, server)).truncated
    server.script(Reply("x" * 400))
    assert ask(provider_for(api, server, max_tokens=50)).truncated  # cut by the server


@pytest.mark.parametrize("api", APIS)
def test_retries_exhausted_names_the_param(api, server):
    server.script(*[Fault(500)] * 3)
    with pytest.raises(GoldensetError, match=r"HTTP 500.*after 1 retries.*generate\.max_retries"):
        ask(provider_for(api, server, max_retries=1))
    assert server.received == 2


@pytest.mark.parametrize("api", APIS)
def test_rate_limit_exhausted_suggests_less_concurrency(api, server):
    server.script(Fault(429, retry_after=0.05), Fault(429, retry_after=0.05))
    with pytest.raises(GoldensetError, match=r"429.*generate\.concurrency"):
        ask(provider_for(api, server, max_retries=1))


@pytest.mark.parametrize("api", APIS)
def test_timeouts_exhausted_names_request_timeout(api, server):
    server.script(Stall(1.0))
    with pytest.raises(GoldensetError, match=r"generate\.request_timeout=0\.3s"):
        ask(provider_for(api, server, request_timeout=0.3, max_retries=0))


@pytest.mark.parametrize(
    ("api", "variable"), [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")]
)
def test_wrong_key_names_the_variable_and_never_prints_the_key(api, variable, server):
    secret = "sk-very-secret-value-123"
    with pytest.raises(GoldensetError) as caught:
        ask(provider_for(api, server, key=secret))
    message = str(caught.value)
    assert "401" in message and variable in message
    assert secret not in message
    assert server.received == 1  # a 401 is not retried


@pytest.mark.parametrize("api", APIS)
def test_unknown_model_names_generate_model(api):
    expected = r"no model 'ghost-model'.*generate\.model"
    with (
        LoopbackLLM(models={"served-model"}) as server,
        pytest.raises(GoldensetError, match=expected),
    ):
        ask(provider_for(api, server, model="ghost-model"))


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_unreachable_servers_name_what_to_set():
    anthropic = AnthropicProvider(
        settings("anthropic", max_retries=0), api_key=KEY, base_url=closed_port_url()
    )
    with pytest.raises(GoldensetError, match="cannot reach Anthropic API.*ANTHROPIC_BASE_URL"):
        ask(anthropic)
    openai = OpenAIProvider(
        settings("openai", max_retries=0), api_key=KEY, base_url=closed_port_url() + "/v1"
    )
    with pytest.raises(GoldensetError, match=r"cannot reach .*generate\.openai\.base_url"):
        ask(openai)


def test_missing_keys_are_one_clear_line(monkeypatch):
    for variable in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ]:
        monkeypatch.delenv(variable, raising=False)
    # building needs no key (a run answered from the cache never asks); the first request does
    anthropic, openai = make_provider(settings("anthropic")), make_provider(settings("openai"))
    with pytest.raises(GoldensetError, match="ANTHROPIC_API_KEY is not set"):
        ask(anthropic)
    with pytest.raises(GoldensetError, match="OPENAI_API_KEY is not set.*generate.openai.base_url"):
        ask(openai)


def test_keyless_local_openai_server_and_env_proxy_work(monkeypatch):
    for variable in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_AUTH_TOKEN"]:
        monkeypatch.delenv(variable, raising=False)
    with LoopbackLLM(api_key=None) as server:
        provider = make_provider(settings("openai", openai={"base_url": server.openai_url}))
        assert isinstance(provider, OpenAIProvider) and not provider.paid
        assert ask(provider).text
        # the anthropic SDK's own ANTHROPIC_BASE_URL is how proxies are used
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        provider = make_provider(settings("anthropic"))
        assert isinstance(provider, AnthropicProvider) and provider.model == "claude-haiku-4-5"
        assert ask(provider).text
        assert [hit.api for hit in server.hits] == ["openai", "anthropic"]


def test_identity_holds_what_changes_answers():
    with LoopbackLLM() as server:
        anthropic = provider_for("anthropic", server, max_tokens=300)
        openai = provider_for("openai", server, temperature=0.5, seed=7)
    assert anthropic.identity() == {
        "provider": "anthropic",
        "model": "claude-haiku-4-5",
        "max_tokens": 300,
    }
    assert openai.identity() == {
        "provider": "openai",
        "model": "loopback-model",
        "max_tokens": 48,
        "temperature": 0.5,
        "retry_temperature": 0.7,  # retries sample at it when temperature is 0
        "seed": 7,
    }


def test_providers_are_found_in_their_modules_without_loading_an_sdk(tmp_path):
    # an entry registered from outside before params are read is accepted like the package's own
    script = """
import sys
from goldenset.generation.providers.registry import PROVIDERS, ProviderEntry
PROVIDERS.register("mine", ProviderEntry(lambda params: None))
from goldenset.params import parse_params
parse_params({"generate": {"provider": "mine"}})
parse_params({"generate": {"provider": "anthropic"}})
print(PROVIDERS.names())
print(sorted(m for m in sys.modules if m.split(".")[0] in {"anthropic", "openai", "llama_cpp"}))
"""
    process = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    names, sdks = process.stdout.splitlines()
    # the package's own first, in module order, then the others
    assert names == "['anthropic', 'local', 'openai', 'mine']"
    assert sdks == "[]"


def test_an_unknown_provider_names_the_registered_ones():
    with pytest.raises(GoldensetError, match="generate.provider: Input should be 'anthropic', "):
        parse_params({"generate": {"provider": "antropic"}})
    assert provider_entry("local").requires == "llama_cpp"
    assert price_for("gpt-4o-mini-2024-07-18") == provider_entry("openai").prices["gpt-4o-mini"]


@pytest.mark.parametrize("first", ["openai", "local", "anthropic"])
def test_a_providers_own_section_derives_from_its_entry_whatever_is_imported_first(first):
    # generate.openai and generate.local are the sections their entries declare: importing a
    # provider's module before the params (as a test or a plugin does) must not lose one
    script = f"""
import goldenset.generation.providers.{first}
from goldenset.generation.params import GenerateParams
from goldenset.generation.providers.registry import PROVIDERS
print(sorted(name for name, entry in PROVIDERS.items() if entry.params is not None))
print(sorted(set(GenerateParams.model_fields) & set(PROVIDERS)))
"""
    process = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    declared, sections = process.stdout.splitlines()
    assert declared == sections == "['local', 'openai']"
    with pytest.raises(GoldensetError, match=r"generate.openai.base: Extra inputs"):
        parse_params({"generate": {"openai": {"base": "http://localhost"}}})
