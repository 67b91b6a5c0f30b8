"""A loopback server that speaks Anthropic's Message Batches API (create, retrieve, list newest
first, results as JSONL), for the real `anthropic` SDK. It answers each request as
goldenset.llm_stand_in's Messages endpoint would (same text, same usage), counts every submission,
and can hold batches in progress (to kill a client while it polls), stall a create after the
batch exists (to kill a client before it learns the batch id), or script errored / expired results.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter, deque
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from goldenset.llm_stand_in import (
    _PASSAGE,
    CHARS_PER_TOKEN,
    LoopbackServer,
    Reply,
    _success,
    _text_of,
    valid_answer,
)

BATCHES_PATH = "/v1/messages/batches"
_BATCH_ROUTE = re.compile(r"^/v1/messages/batches/([A-Za-z0-9_]+)(/results)?$")
ERRORED = "errored"  # a retryable server error inside the batch (overloaded_error)
INVALID = "invalid_request"  # an errored result that sending again cannot fix
EXPIRED = "expired"


class LoopbackBatches(LoopbackServer):
    """`with LoopbackBatches() as server:`; base URL in server.url, for ANTHROPIC_BASE_URL."""

    def __init__(self, api_key: str = "test-key", polls_before_end: int = 1) -> None:
        self.api_key = api_key
        self.polls_before_end = polls_before_end
        self.hold = threading.Event()  # while set, every batch stays in progress
        # while set, a create makes the batch, then does not answer until it is cleared
        self.stall_create = threading.Event()
        self.batches: dict[str, dict] = {}
        self.submitted: Counter = Counter()  # custom_id -> times it came in a new batch
        self.creates = 0
        self.retrieves = 0
        self.lists = 0
        self.result_reads = 0
        self._per_passage: list[tuple[str, deque]] = []
        self._lock = threading.Lock()
        self._listen()

    def script_for(self, passage_part: str, *outcomes: str | Reply) -> None:
        """What the next results about a passage containing passage_part are, in order."""
        with self._lock:
            self._per_passage.append((passage_part, deque(outcomes)))

    # -- the API
    def _create(self, body: dict) -> tuple[int, dict]:
        with self._lock:
            self.creates += 1
            batch_id = f"msgbatch_{self.creates:04d}"
            results = [self._result(request) for request in body["requests"]]
            self.submitted.update(request["custom_id"] for request in body["requests"])
            self.batches[batch_id] = {"polls": 0, "results": results, "created": _now()}
            answer = self._batch_json(batch_id)
        while self.stall_create.is_set():  # the batch exists; its creator does not know its id
            time.sleep(0.01)
        return 200, answer

    def _list(self, query: dict[str, list[str]]) -> tuple[int, dict]:
        """A page of batches, newest first; after_id pages to older ones, as the API does."""
        with self._lock:
            self.lists += 1
            ids = sorted(self.batches, reverse=True)
            if "after_id" in query:
                ids = [i for i in ids if i < query["after_id"][0]]
            if "before_id" in query:
                ids = [i for i in ids if i > query["before_id"][0]]
            limit = int(query.get("limit", ["20"])[0])
            page = ids[:limit]
            return 200, {
                "data": [self._batch_json(batch_id) for batch_id in page],
                "has_more": len(ids) > limit,
                "first_id": page[0] if page else None,
                "last_id": page[-1] if page else None,
            }

    def _retrieve(self, batch_id: str) -> tuple[int, dict]:
        with self._lock:
            self.retrieves += 1
            if batch_id not in self.batches:
                return 404, _error("not_found_error", f"no batch {batch_id}")
            self.batches[batch_id]["polls"] += 1
            return 200, self._batch_json(batch_id)

    def _ended(self, batch_id: str) -> bool:
        batch = self.batches[batch_id]
        return not self.hold.is_set() and batch["polls"] > self.polls_before_end

    def _batch_json(self, batch_id: str) -> dict:
        batch = self.batches[batch_id]
        ended = self._ended(batch_id)
        counts = Counter(result["result"]["type"] for result in batch["results"])
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(batch["results"]),
                "succeeded": counts["succeeded"] if ended else 0,
                "errored": counts["errored"] if ended else 0,
                "canceled": counts["canceled"] if ended else 0,
                "expired": counts["expired"] if ended else 0,
            },
            "created_at": batch["created"],
            "expires_at": _now(timedelta(days=1)),
            "ended_at": _now() if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}{BATCHES_PATH}/{batch_id}/results" if ended else None,
        }

    def _results(self, batch_id: str) -> tuple[int, bytes]:
        with self._lock:
            self.result_reads += 1
            if batch_id not in self.batches or not self._ended(batch_id):
                body = _error("invalid_request_error", f"batch {batch_id} has not ended")
                return 400, json.dumps(body).encode()
            lines = [json.dumps(result) for result in self.batches[batch_id]["results"]]
            return 200, ("\n".join(lines) + "\n").encode()

    def _result(self, request: dict) -> dict:
        params = request["params"]
        messages = params["messages"]
        system = _text_of(params.get("system", ""))
        request_text = system + "\n".join(_text_of(m.get("content")) for m in messages)
        # the passage as the Messages endpoint of goldenset.llm_stand_in finds it
        last = _text_of(messages[-1]["content"])
        found = _PASSAGE.findall(last) or _PASSAGE.findall(request_text)
        passage = found[-1] if found else ""
        outcome = self._next_outcome(passage)
        custom_id = request["custom_id"]
        if outcome == EXPIRED:
            return {"custom_id": custom_id, "result": {"type": "expired"}}
        if outcome in (ERRORED, INVALID):
            kind = "overloaded_error" if outcome == ERRORED else "invalid_request_error"
            errored = {"type": "errored", "error": _error(kind, outcome)}
            return {"custom_id": custom_id, "result": errored}
        text = outcome.text if isinstance(outcome, Reply) else valid_answer(passage, request_text)
        usage = (len(request_text) // CHARS_PER_TOKEN + 1, len(text) // CHARS_PER_TOKEN + 1)
        message = _success("anthropic", params["model"], text, False, usage)
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": message}}

    def _next_outcome(self, passage: str) -> str | Reply | None:
        for part, queue in self._per_passage:
            if part in passage and queue:
                return queue.popleft()
        return None

    # -- HTTP
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def _authorised(self) -> bool:
                bearer = self.headers.get("authorization", "")
                key = bearer[7:] if bearer.lower().startswith("bearer ") else None
                if (key or self.headers.get("x-api-key")) == server.api_key:
                    return True
                self._send(401, json.dumps(_error("authentication_error", "bad key")).encode())
                return False

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self._authorised():
                    return
                if self.path != BATCHES_PATH:
                    self._send(404, json.dumps(_error("not_found_error", self.path)).encode())
                    return
                status, payload = server._create(body)
                try:
                    self._send(status, json.dumps(payload).encode())
                except OSError:  # the client was killed while the create stalled
                    self.close_connection = True

            def do_GET(self) -> None:  # noqa: N802
                if not self._authorised():
                    return
                url = urlsplit(self.path)
                route = _BATCH_ROUTE.match(url.path)
                if url.path == BATCHES_PATH:
                    status, payload = server._list(parse_qs(url.query))
                    self._send(status, json.dumps(payload).encode())
                elif not route:
                    self._send(404, json.dumps(_error("not_found_error", self.path)).encode())
                elif route.group(2):
                    status, data = server._results(route.group(1))
                    self._send(status, data, "application/binary")
                else:
                    status, payload = server._retrieve(route.group(1))
                    self._send(status, json.dumps(payload).encode())

            def _send(self, status: int, data: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

        return Handler


def _error(kind: str, message: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _now(later: timedelta = timedelta(0)) -> str:
    return (datetime.now(timezone.utc) + later).isoformat()
