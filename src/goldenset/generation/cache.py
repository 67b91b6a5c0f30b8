"""Content-addressed cache of LLM answers: written atomically one by one, packed into segments.

The key hashes everything that shapes the answer (provider identity with model and sampling
settings, prompt template, the full request, question index, attempt), so an unchanged passage is
never paid for twice, on any machine that shares `cache/llm` through a DVC remote.

Each answer is written at once as a small JSON file (sharded by the key's first two hex digits),
so a run killed at any point keeps every answer that arrived. `pack()` (the generate stage calls
it at the end of a run) moves the loose answers into one new append-only segment,
`seg-<hash>.jsonl.gz`, written atomically, and only then deletes them: DVC pushes and pulls one
object per file, and 20,000 loose answers take minutes to push where one segment takes a second
(benchmarks/cache_push_bench.py). A crash mid-pack leaves the loose files (packed again, no
duplicates kept) or a `.tmp` file (removed when the cache is next opened).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import logging
import threading
from pathlib import Path

from goldenset.generation.interface import Completion
from goldenset.tables import write_atomically

log = logging.getLogger("goldenset")


def answer_key(
    identity: dict,
    prompt_sha: str,
    system: str,
    messages: list[dict[str, str]],
    *,
    question_index: int,
    attempt: int,
) -> str:
    request = {
        "identity": identity,
        "prompt_sha": prompt_sha,
        "system": system,
        "messages": messages,
        "question_index": question_index,
        "attempt": attempt,
    }
    encoded = json.dumps(request, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


SEGMENT_GLOB = "seg-*.jsonl.gz"


class AnswerCache:
    """Answers by key: packed segments root/seg-*.jsonl.gz, plus loose root/<2 hex>/<key>.json
    files not packed yet. Safe to share between threads and processes."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._packed: dict[str, dict] = {}
        self._segments: set[str] = set()
        self._lock = threading.Lock()
        if self.root.exists():
            for leftover in self.root.glob(".seg-*.tmp"):  # a pack cut short by a crash
                leftover.unlink(missing_ok=True)
        self._load_new_segments()

    def path(self, key: str) -> Path:
        """Where put() writes the answer before it is packed."""
        return self.root / key[:2] / f"{key}.json"

    def contains(self, key: str) -> bool:
        return self._record(key) is not None

    def get(self, key: str) -> Completion | None:
        record = self._record(key)
        if record is None:
            return None
        try:
            return Completion(
                text=record["text"],
                input_tokens=int(record["input_tokens"]),
                output_tokens=int(record["output_tokens"]),
                truncated=bool(record["truncated"]),
            )
        except (ValueError, KeyError, TypeError) as error:
            # only a hand-edited or foreign file gets here (writes are atomic): ask again
            log.warning("ignoring unreadable cached answer %s (%s)", key, error)
            return None

    def put(self, key: str, completion: Completion, *, provider: str, model: str) -> None:
        record = {
            "provider": provider,
            "model": model,
            "text": completion.text,
            "input_tokens": completion.input_tokens,
            "output_tokens": completion.output_tokens,
            "truncated": completion.truncated,
        }
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(record, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        write_atomically(path, data)

    def __len__(self) -> int:
        self._load_new_segments()
        loose = {path.stem for path in self._loose_files()}
        return len(self._packed.keys() | loose)

    def pack(self) -> int:
        """Move every loose answer into one new segment; returns how many were packed."""
        self._load_new_segments()
        loose = self._loose_files()
        fresh: dict[str, dict] = {}
        for path in loose:
            if path.stem not in self._packed and (record := self._read_loose(path)) is not None:
                fresh[path.stem] = record
        if fresh:
            lines = "".join(
                json.dumps({"key": key, **fresh[key]}, ensure_ascii=False, sort_keys=True) + "\n"
                for key in sorted(fresh)
            )
            # mtime=0: the same answers make the same bytes, so DVC sees the same object
            data = gzip.compress(lines.encode("utf-8"), mtime=0)
            name = f"seg-{hashlib.sha256(data).hexdigest()[:24]}.jsonl.gz"
            write_atomically(self.root / name, data)
            with self._lock:
                self._packed.update(fresh)
                self._segments.add(name)
        # only now, with every answer safe in a segment, the loose copies may go
        for path in loose:
            if path.stem in self._packed:
                path.unlink(missing_ok=True)
        for shard in {path.parent for path in loose}:
            with contextlib.suppress(OSError):  # not empty: another process wrote meanwhile
                shard.rmdir()
        return len(fresh)

    def _record(self, key: str) -> dict | None:
        record = self._packed.get(key)
        if record is None:
            record = self._read_loose(self.path(key))
        if record is None and self._load_new_segments():  # packed meanwhile by another process
            record = self._packed.get(key)
        return record

    def _read_loose(self, path: Path) -> dict | None:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            log.warning("ignoring unreadable cached answer %s (%s)", path, error)
            return None
        return record if isinstance(record, dict) else None

    def _loose_files(self) -> list[Path]:
        return sorted(self.root.glob("??/*.json")) if self.root.exists() else []

    def _load_new_segments(self) -> bool:
        if not self.root.exists():
            return False
        new = [p for p in sorted(self.root.glob(SEGMENT_GLOB)) if p.name not in self._segments]
        for path in new:
            records = {}
            for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines():
                record = json.loads(line)
                records[record.pop("key")] = record
            with self._lock:
                self._packed.update(records)
                self._segments.add(path.name)
        return bool(new)
