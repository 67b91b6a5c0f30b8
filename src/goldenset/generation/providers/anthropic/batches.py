"""generate.batch for provider anthropic: every question the cache lacks goes to Anthropic's
Message Batches API, at half the price, instead of one request each.

Rounds: walk every passage exactly as the synchronous loop does, answering from the cache, and
collect the first request each passage still needs (a later question or retry depends on the
answer before it). Submit those as batches (split at the API's limits), record the batch ids on
disk *before* polling (and the request ids of each batch before it is created), poll until each
batch ends, and put every succeeded result into the per-answer cache as it is read. The next
walk validates those answers; an invalid one yields its retry (with the correction turn) for the
next round, so the cache ends up holding exactly the answers the synchronous path would have
asked for. Errored, canceled and expired requests are sent again in the next round, up to
generate.max_retries times (an invalid request: never), then rejected with the reason. A run
killed while it waits resumes by polling the recorded batches: nothing is submitted twice. A run
killed while a batch was being created (its id not yet on disk) finds it in the list of recent
batches: created since the recorded request ids were written, with as many requests. It adopts
it, and keeps only results with those ids.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tqdm import tqdm

from goldenset.core.files import write_atomically
from goldenset.generation.interface import Completion
from goldenset.generation.passages import Passage
from goldenset.generation.providers.anthropic import completion_of
from goldenset.generation.session import Session

log = logging.getLogger("goldenset")

# the Message Batches API's limits per batch
MAX_BATCH_REQUESTS = 100_000
MAX_BATCH_BYTES = 256 * 1_000_000
PENDING_FILE = "batches-pending.json"  # beside the answers; gone once every batch is read
# error types worth sending again; any other (an invalid request) would fail the same way
RETRYABLE_ERRORS = {"api_error", "overloaded_error", "rate_limit_error", "timeout_error"}
# a batch created this long before the recorded intent to create it is still a candidate: the
# API's clock and ours may differ
CLOCK_SKEW = timedelta(minutes=10)


def run_batches(session: Session, passages: list[Passage], progress: bool) -> None:
    """Fill the cache through batches, and session.failed with what the API gave up on; then a
    walk that asks nothing (session.ask_nothing: a miss waits for a later run) builds the golden
    set from the cache."""
    BatchRunner(session, passages, session.params.batch_poll_s, progress).run()


def split_requests(requests: list[dict]) -> list[list[dict]]:
    """Requests in batches within the API's count and size limits, in order."""
    batches: list[list[dict]] = []
    current: list[dict] = []
    size = 0
    for request in requests:
        length = len(json.dumps(request, ensure_ascii=False).encode("utf-8")) + 2
        if current and (len(current) >= MAX_BATCH_REQUESTS or size + length > MAX_BATCH_BYTES):
            batches.append(current)
            current, size = [], 0
        current.append(request)
        size += length
    if current:
        batches.append(current)
    return batches


class BatchRunner:
    """The rounds of one run, through the run's session (provider, cache, budget)."""

    def __init__(
        self, session: Session, passages: list[Passage], poll_s: float, progress: bool
    ) -> None:
        self.session = session
        self.passages = passages
        self.poll_s = poll_s
        self.progress = progress
        self.pending_path = Path(session.params.cache_dir) / PENDING_FILE
        self.failed = session.failed  # the session's: key -> (reason code, detail), filled here
        self.tries: dict[str, int] = {}
        self.reserved: dict[str, float] = {}

    @property
    def client(self):
        """The provider's SDK client, built only when a batch is sent or polled (a run answered
        from the cache needs no key)."""
        return self.session.provider.client()

    def run(self) -> None:
        for batch_id in self._read_pending():  # a run killed while it waited: poll, never resubmit
            log.info("generate: resuming batch %s", batch_id)
        self._adopt_orphans()
        self._finish_pending()
        while True:
            requests = self._reserve(self._needed())
            if not requests:  # all answered, rejected, or the budget is reached
                return
            ids = []
            for part in split_requests(requests):
                # on disk before the batch exists: a run killed before its id is written finds
                # the batch by these ids, never submits them again
                intent = {"since": _now().isoformat(), "custom_ids": [r["custom_id"] for r in part]}
                self._write_pending(self._read_pending(), intent)
                batch = self.client.messages.batches.create(requests=part)
                ids.append(batch.id)
                # on disk before any wait: a killed run resumes these, never submits them again
                self._write_pending(self._read_pending() + [batch.id])
            log.info("generate: %d requests in %d batches %s", len(requests), len(ids), ids)
            self._finish_pending()

    def _adopt_orphans(self) -> None:
        """Read the batch a killed run created but did not record: one created since its
        intent was written, with as many requests, that is not recorded already."""
        intent = self._read_state().get("submitting")
        if intent is None:
            return
        since = datetime.fromisoformat(intent["since"]) - CLOCK_SKEW
        expected = set(intent["custom_ids"])
        known = set(self._read_pending())
        for batch in self.client.messages.batches.list(limit=100):  # newest first
            if batch.created_at < since:
                break
            counts = batch.request_counts
            total = counts.processing + counts.succeeded + counts.errored
            total += counts.canceled + counts.expired
            if batch.id in known or total != len(expected):
                continue
            log.info("generate: adopting batch %s, created by a run killed meanwhile", batch.id)
            self._wait(batch.id)
            self._read_results(batch.id, only=expected)
        self._write_pending(self._read_pending())

    def _needed(self) -> dict[str, list[dict[str, str]]]:
        """The first uncached request of every passage, found by the run's own walk, with each
        cache miss recorded for the next batch instead of asked."""
        needed: dict[str, list[dict[str, str]]] = {}

        def record(
            key: str, messages: list[dict[str, str]], attempt: int, steer: object = None
        ) -> Completion | None:
            needed[key] = messages
            return None

        for passage in self.passages:
            self.session.ask_passage(passage, record)
        return needed

    def _reserve(self, needed: dict[str, list[dict[str, str]]]) -> list[dict]:
        """The batch requests that fit in generate.max_usd, each reserved until its result is
        read (the same reservation as a synchronous request's, without waiting)."""
        requests = []
        for key, messages in needed.items():
            reservation = self.session.reserve(messages, wait=False)
            if reservation is None:
                log.warning("generate: generate.max_usd reached; the rest waits for a later run")
                break
            self.reserved[key] = reservation
            params = self.session.provider.request(self.session.system, messages)
            requests.append({"custom_id": key, "params": params})
        return requests

    def _finish_pending(self) -> None:
        for batch_id in self._read_pending():
            self._wait(batch_id)
            self._read_results(batch_id)
            self._write_pending([b for b in self._read_pending() if b != batch_id])
        self.pending_path.unlink(missing_ok=True)

    def _wait(self, batch_id: str) -> None:
        bar = tqdm(desc=f"batch {batch_id[-8:]}", unit="req", file=sys.stderr,
                   disable=not self.progress, dynamic_ncols=True)  # fmt: skip
        shown = None
        with bar:
            while True:
                batch = self.client.messages.batches.retrieve(batch_id)
                counts = batch.request_counts
                status = (
                    f"{batch.processing_status}: {counts.processing} processing, "
                    f"{counts.succeeded} succeeded, {counts.errored} errored, "
                    f"{counts.canceled} canceled, {counts.expired} expired"
                )
                if status != shown:
                    bar.total = counts.processing + counts.succeeded + counts.errored
                    bar.total += counts.canceled + counts.expired
                    bar.n = bar.total - counts.processing
                    bar.set_postfix_str(status)
                    if not self.progress:
                        log.info("generate: batch %s %s", batch_id, status)
                    shown = status
                if batch.processing_status == "ended":
                    return
                time.sleep(self.poll_s)

    def _read_results(self, batch_id: str, only: set[str] | None = None) -> None:
        """Cache every succeeded result (of the ids in `only`, when given)."""
        session, budget = self.session, self.session.budget
        for item in self.client.messages.batches.results(batch_id):
            key, result = item.custom_id, item.result
            if only is not None and key not in only:  # another client's batch
                continue
            reservation = self.reserved.pop(key, None)
            if result.type == "succeeded":
                message = result.message
                completion = completion_of(message)
                # half price: the budget's price is the batch price
                if reservation is None:  # submitted by a run that was killed: not reserved
                    budget.charge(completion.input_tokens, completion.output_tokens)
                else:
                    budget.settle(reservation, completion.input_tokens, completion.output_tokens)
                session.cache.put(key, completion, provider="anthropic", model=message.model)
                continue
            if reservation is not None:
                budget.release(reservation)
            self._failed_once(key, result)

    def _failed_once(self, key: str, result) -> None:
        if result.type == "errored":
            error = getattr(result.error, "error", result.error)
            code = getattr(error, "type", "api_error")
            detail = f"batch request errored: {code}: {getattr(error, 'message', '')}"
            retryable = code in RETRYABLE_ERRORS
        else:  # canceled or expired (not processed within 24 hours)
            code, detail, retryable = f"batch_{result.type}", f"batch request {result.type}", True
        self.tries[key] = self.tries.get(key, 0) + 1
        if not retryable or self.tries[key] > self.session.params.max_retries:
            reason = code if code.startswith("batch_") else f"batch_{code}"
            self.failed[key] = (reason, f"{detail} (tried {self.tries[key]} times)")
        else:
            log.info("generate: %s, sent again in the next round", detail)

    def _read_pending(self) -> list[str]:
        return self._read_state().get("batches", [])

    def _read_state(self) -> dict:
        """{"batches": ids to poll, "submitting": the batch being created, if any}."""
        try:
            return json.loads(self.pending_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}

    def _write_pending(self, ids: list[str], submitting: dict | None = None) -> None:
        state: dict = {"batches": ids}
        if submitting is not None:
            state["submitting"] = submitting
        self.pending_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.pending_path, json.dumps(state) + "\n")


def _now() -> datetime:
    return datetime.now(timezone.utc)
