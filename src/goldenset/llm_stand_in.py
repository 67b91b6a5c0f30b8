"""A stand-in for the Anthropic Messages API and OpenAI chat completions on the loopback.

The real `anthropic` and `openai` SDKs talk to it over HTTP, so the tests exercise their real
retry, timeout and error handling: a test scripts what the server does next (a 429 with
retry-after, a 500, a 529 overloaded_error, a stall, a malformed reply) and reads back what it
was asked: every request is logged with a hash of its prompt, so tests can prove "nothing paid
twice" and "resume asks only for what is missing". The batch API's stand-in
(tests/support/batch_server.py) and the benchmark (benchmarks/generate_bench.py) build on it.
Nothing in the pipeline imports this module, and importing goldenset does not import it.

It also runs on its own, so that a page of the docs can show a run with Claude where no key can
reach the API (every answer is a toy query in the form asked: "What should I know about
<word>?", "Much is known today about <word>." or "<word> facts")::

    eval "$(python -m goldenset.llm_stand_in start)"   # sets *_BASE_URL and *_API_KEY
    eval "$(python -m goldenset.llm_stand_in stop)"    # stops it, unsets them
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from goldenset.generation.prompt import CLAIM, KEYWORDS

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class Fault:
    """Answer with an HTTP error; retry_after (seconds) becomes a `retry-after` header."""

    status: int
    retry_after: float | None = None


@dataclass(frozen=True)
class Stall:
    """Wait this long before answering normally (a client with a shorter timeout gives up)."""

    seconds: float


@dataclass(frozen=True)
class Reply:
    """Answer 200 with exactly this text; truncated marks it as stopped at max_tokens."""

    text: str
    truncated: bool = False


Action = Fault | Stall | Reply


@dataclass
class Hit:
    """One request the server received."""

    time: float
    api: str  # "anthropic" | "openai"
    prompt: str  # hash of the system prompt and messages: equal prompts, equal hashes
    passage: str  # without the target marks
    status: int
    retry_count: int  # the SDK's x-stainless-retry-count: 0 for a first try
    delivered: bool  # False when the client had hung up (timed out) before the answer
    last_turn: str  # the text of the last message: the passage, or a correction on a retry


_PASSAGE = re.compile(r"<passage>\n?(.*?)\n?</passage>", re.DOTALL)
_TARGET = re.compile(r"<target>(.*?)</target>", re.DOTALL)
_TARGET_TAG = re.compile(r"</?target>")

_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def question_for(sentence: str) -> str:
    """A valid question about a sentence, built from its longest word: it shares half of its
    content words ("know" and that word) with the document, as a real query typically does."""
    return f"What should I know about {_longest_word(sentence)}?"


def query_for(sentence: str, request_text: str) -> str:
    """A valid query about a sentence in the form the prompt asks for (the reply line of
    goldenset.generation.prompt's forms): a question, a claim or a keyword search."""
    if CLAIM.reply in request_text:
        return f"Much is known today about {_longest_word(sentence)}."
    if KEYWORDS.reply in request_text:
        return f"{_longest_word(sentence)} facts"
    return question_for(sentence)


def _longest_word(sentence: str) -> str:
    words = sorted(
        {w.lower() for w in re.findall(r"[A-Za-z]{4,}", sentence)}, key=lambda w: (-len(w), w)
    )
    return (words + ["this"])[0]


def valid_answer(passage: str, request_text: str) -> str:
    """The default behaviour: a query about the marked target sentence, in the form asked, that
    passes validation."""
    last_passage = request_text.rsplit("<passage>", 1)[-1]
    targets = _TARGET.findall(last_passage)
    return query_for(targets[0] if targets else passage, request_text)


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""


class LoopbackServer:
    """An HTTP server on 127.0.0.1 in a daemon thread, started and stopped as a context manager.

    Subclasses give the request handler in ``_handler_class`` and call ``_listen()`` last in
    their ``__init__``.
    """

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def _listen(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        """Base URL (the anthropic SDK appends /v1/messages)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"


class LoopbackLLM(LoopbackServer):
    """Both APIs on 127.0.0.1 (a free port), served from a background thread; a context manager.

    latency: seconds every answer takes. api_key: the key clients must send (None: any).
    models: model names it serves (None: any). answer(passage, request_text) -> reply text.
    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        api_key: str | None = "test-key",
        models: set[str] | None = None,
        answer: Callable[[str, str], str] = valid_answer,
    ) -> None:
        self.latency = latency
        self.api_key = api_key
        self.models = models
        self.answer = answer
        self.hits: list[Hit] = []
        self.received = 0  # counted on arrival, before any answer (for polling mid-run)
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: deque[Action] = deque()
        self._per_passage: list[tuple[str, deque[Action]]] = []
        self._lock = threading.Lock()
        self._listen()

    @property
    def openai_url(self) -> str:
        """Base URL for the openai SDK (it appends /chat/completions)."""
        return self.url + "/v1"

    # -- scripting
    def script(self, *actions: Action) -> None:
        """What the next requests get, in order, whatever they ask."""
        with self._lock:
            self._queue.extend(actions)

    def script_for(self, passage_part: str, *actions: Action) -> None:
        """What the next requests about a passage containing `passage_part` get, in order."""
        with self._lock:
            self._per_passage.append((passage_part, deque(actions)))

    def _next_action(self, passage: str) -> Action | None:
        with self._lock:
            for part, queue in self._per_passage:
                if part in passage and queue:
                    return queue.popleft()
            return self._queue.popleft() if self._queue else None

    # -- what was asked
    @property
    def requests(self) -> int:
        return len(self.hits)

    def answered(self) -> Counter:
        """Answers (200) delivered, per prompt hash: what a paid API would have billed."""
        with self._lock:
            return Counter(hit.prompt for hit in self.hits if hit.status == 200 and hit.delivered)

    def by_prompt(self) -> Counter:
        with self._lock:
            return Counter(hit.prompt for hit in self.hits)

    def _record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)

    # -- HTTP
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in separate writes: without this, Nagle's algorithm and
            # the client's delayed ACK add ~40 ms to every answer
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path == ANTHROPIC_PATH:
                    server._serve(self, "anthropic", body)
                elif self.path == OPENAI_PATH:
                    server._serve(self, "openai", body)
                else:
                    _send(self, 404, {"error": {"message": f"no route {self.path}"}})

        return Handler

    def _serve(self, handler: BaseHTTPRequestHandler, api: str, body: dict) -> None:
        arrived = time.monotonic()
        system, messages = self._prompt_of(api, body)
        request_text = system + "\n".join(_text_of(m.get("content")) for m in messages)
        passages = _PASSAGE.findall(_text_of(messages[-1].get("content")) if messages else "")
        passages = passages or _PASSAGE.findall(request_text)
        passage = _TARGET_TAG.sub("", passages[-1]) if passages else ""  # the document's text
        prompt = hashlib.sha256(json.dumps([system, messages], sort_keys=True).encode()).hexdigest()
        retry_count = int(handler.headers.get("x-stainless-retry-count", 0) or 0)

        last_turn = _text_of(messages[-1].get("content")) if messages else ""
        with self._lock:
            self.received += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            status, payload, headers = self._respond(handler, api, body, passage, request_text)
            if status == 200:
                time.sleep(self.latency)
            # recorded before the answer goes out: a test reading hits after its call returns
            # must see every request that call made
            hit = Hit(arrived, api, prompt, passage, status, retry_count, True, last_turn)
            self._record(hit)
            if not _send(handler, status, payload, headers):
                with self._lock:
                    hit.delivered = False
        finally:
            with self._lock:
                self.in_flight -= 1

    def _respond(
        self, handler: BaseHTTPRequestHandler, api: str, body: dict, passage: str, request_text: str
    ) -> tuple[int, dict, dict]:
        if self.api_key is not None and self._key_of(handler, api) != self.api_key:
            return _error(api, 401, "invalid x-api-key")
        model = body.get("model", "")
        if self.models is not None and model not in self.models:
            return _error(api, 404, f"model: {model}")
        action = self._next_action(passage)
        if isinstance(action, Fault):
            return _error(api, action.status, "injected fault", action.retry_after)
        if isinstance(action, Stall):
            time.sleep(action.seconds)
        reply = action if isinstance(action, Reply) else Reply(self.answer(passage, request_text))
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or 4096
        text, truncated = reply.text, reply.truncated
        if len(text) > max_tokens * CHARS_PER_TOKEN:
            text, truncated = text[: max_tokens * CHARS_PER_TOKEN], True
        usage = (len(request_text) // CHARS_PER_TOKEN + 1, len(text) // CHARS_PER_TOKEN + 1)
        return 200, _success(api, model, text, truncated, usage), {}

    @staticmethod
    def _prompt_of(api: str, body: dict) -> tuple[str, list[dict]]:
        messages = list(body.get("messages", []))
        if api == "anthropic":
            return _text_of(body.get("system", "")), messages
        system = "".join(_text_of(m.get("content")) for m in messages if m.get("role") == "system")
        return system, [m for m in messages if m.get("role") != "system"]

    @staticmethod
    def _key_of(handler: BaseHTTPRequestHandler, api: str) -> str | None:
        bearer = handler.headers.get("authorization", "")
        if bearer.lower().startswith("bearer "):
            return bearer[7:]
        return handler.headers.get("x-api-key") if api == "anthropic" else None


def _success(api: str, model: str, text: str, truncated: bool, usage: tuple[int, int]) -> dict:
    if api == "anthropic":
        return {
            "id": "msg_loopback",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if truncated else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "length" if truncated else "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }


def _error(
    api: str, status: int, message: str, retry_after: float | None = None
) -> tuple[int, dict, dict]:
    headers = {} if retry_after is None else {"retry-after": f"{retry_after:g}"}
    if api == "anthropic":
        kind = _ANTHROPIC_ERRORS.get(status, "api_error")
        return status, {"type": "error", "error": {"type": kind, "message": message}}, headers
    code = "model_not_found" if status == 404 else None
    return (
        status,
        {"error": {"message": message, "type": "error", "param": None, "code": code}},
        headers,
    )


def _send(
    handler: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None
) -> bool:
    data = json.dumps(payload).encode("utf-8")
    if _peer_gone(handler.connection):
        return False  # the client gave up (timed out) before the answer came
    try:
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
        handler.wfile.flush()
        return True
    except OSError:
        return False  # the client gave up (timeout) before the answer came


def _peer_gone(connection: socket.socket) -> bool:
    """True when the client closed the connection (a write could still seem to succeed)."""
    readable, _, _ = select.select([connection], [], [], 0)
    if not readable:
        return False
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


KEY = "test-key"  # what the stand-in started by `start` asks clients to send
APIS, PARTS = ("ANTHROPIC", "OPENAI"), ("BASE_URL", "API_KEY")
PID_VARIABLE = "GOLDENSET_STAND_IN_PID"


def serve() -> None:
    """Serve both APIs until stopped; the first line on stdout is the base URL."""
    with LoopbackLLM(api_key=KEY) as server:
        print(server.url, flush=True)
        # the `start` that reads that line exits: nothing more may go to its pipe
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        stopped = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stopped.set())
        stopped.wait()


def start() -> list[str]:
    """Start a stand-in in the background: the shell lines that point both SDKs at it."""
    child = subprocess.Popen(
        [sys.executable, "-m", "goldenset.llm_stand_in", "serve"],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    url = child.stdout.readline().strip() if child.stdout else ""
    if not url:
        raise SystemExit("the stand-in did not start")
    variables = {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": KEY,
        "OPENAI_BASE_URL": f"{url}/v1",
        "OPENAI_API_KEY": KEY,
        PID_VARIABLE: str(child.pid),
    }
    return [f"export {name}={value}" for name, value in variables.items()] + [
        f"echo 'a stand-in for the Anthropic and OpenAI APIs answers at {url}'"
    ]


def main(argv: list[str]) -> int:
    command = argv[:1]
    if command == ["serve"]:
        serve()
    elif command == ["start"]:
        print("\n".join(start()))
    elif command == ["stop"] and os.environ.get(PID_VARIABLE):
        with contextlib.suppress(ProcessLookupError):  # stopped already
            os.kill(int(os.environ[PID_VARIABLE]), signal.SIGTERM)
        names = [PID_VARIABLE, *(f"{api}_{part}" for api in APIS for part in PARTS)]
        print("unset " + " ".join(names))
    else:
        print(__doc__.split("::")[-1].rstrip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
