"""Content-addressed cache of LLM answers: written atomically one by one, packed into segments.

The key hashes everything that shapes the answer (provider identity with model and sampling
settings, prompt template, the full request, question index, attempt), so an unchanged passage is
never paid for twice, on any machine that shares `cache/llm` through a DVC remote.

Each answer is written at once as a small JSON file (sharded by the key's first two hex digits),
so a run killed at any point keeps every answer that arrived. `pack()` (the generate stage calls
it at the end of a run) moves the loose answers into one new append-only segment,
`seg-<hash>.pack`, written atomically, and only then deletes them: DVC pushes and pulls one
object per file, and 20,000 loose answers take minutes to push where one segment takes a second
(benchmarks/cache_push_bench.py). A crash mid-pack leaves the loose files (packed again, no
duplicates kept) or a `.tmp` file (removed when the cache is next opened).

A segment is read through its index, never whole: opening a cache costs 16 bytes per answer
(an 8-byte hash prefix and an offset), and a look-up reads and inflates one answer. Each answer
is deflated on its own against a dictionary of the segment's first answers (stored in the
segment), which keeps most of whole-file compression. Segments of similar size are merged once
MERGE_FANOUT of them pile up (size-tiered), so a run writes its own small segment plus, now and
then, one merge of small ones: large segments are rewritten rarely, and a push stays small.
Segments of the first format, `seg-<hash>.jsonl.gz` (read whole), are still read, and the next
pack folds them into the new one.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import heapq
import json
import logging
import math
import os
import struct
import sys
import threading
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from pathlib import Path

from goldenset.core.errors import GoldensetError
from goldenset.core.files import write_atomically
from goldenset.generation.interface import Completion

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


SEGMENT_GLOB = "seg-*.pack"
LEGACY_GLOB = "seg-*.jsonl.gz"  # the first format: one gzip stream, read whole
MERGE_FANOUT = 8  # this many segments of one size tier are merged into one of the next tier
_MAGIC = b"GSANSW1\n"
_FOOTER = struct.Struct("<QQ8s")  # index offset, answers, magic
_FOOTER_MAGIC = b"GSINDEX1"
_DICT_BYTES = 32 * 1024  # deflate's window: a longer dictionary is never used


def key_prefix(key: str) -> int:
    """The 8-byte hash of a key that a segment's index sorts and searches by."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")


def _little_endian(values: array) -> bytes:
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _from_little_endian(data: bytes) -> array:
    values = array("Q")
    values.frombytes(data)
    if sys.byteorder == "big":
        values.byteswap()
    return values


class _Segment:
    """One packed segment, open for look-ups: its index in memory, its answers on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            size = os.fstat(self._fd).st_size
            header = os.pread(self._fd, len(_MAGIC) + 4, 0)
            footer = os.pread(self._fd, _FOOTER.size, max(size - _FOOTER.size, 0))
            footer = footer if len(footer) == _FOOTER.size else bytes(_FOOTER.size)
            index_at, count, magic = _FOOTER.unpack(footer)
            if header[: len(_MAGIC)] != _MAGIC or magic != _FOOTER_MAGIC:
                raise GoldensetError(
                    f"{path} is not an answer segment (damaged?): delete it, or `dvc pull` "
                    "the cache again (generate.cache_dir)"
                )
            dict_length = struct.unpack("<I", header[len(_MAGIC) :])[0]
            self._zdict = os.pread(self._fd, dict_length, len(_MAGIC) + 4)
            self.prefixes = _from_little_endian(os.pread(self._fd, 8 * count, index_at))
            # count + 1 offsets: answer i is the bytes offsets[i]:offsets[i + 1]
            self._offsets = _from_little_endian(
                os.pread(self._fd, 8 * (count + 1), index_at + 8 * count)
            )
        except BaseException:
            os.close(self._fd)
            raise

    def __len__(self) -> int:
        return len(self.prefixes)

    def __del__(self) -> None:
        with contextlib.suppress(AttributeError, OSError):
            os.close(self._fd)

    def get(self, key: str, prefix: int) -> dict | None:
        index = bisect_left(self.prefixes, prefix)
        while index < len(self.prefixes) and self.prefixes[index] == prefix:
            record = json.loads(self._line(index))
            if record.pop("key") == key:
                return record
            index += 1  # another key with the same 8-byte prefix
        return None

    def entries(self) -> Iterator[tuple[int, str, bytes]]:
        """(prefix, key, JSON line) of every answer, in index order."""
        for index, prefix in enumerate(self.prefixes):
            line = self._line(index)
            yield prefix, json.loads(line)["key"], line

    def _line(self, index: int) -> bytes:
        start, end = self._offsets[index], self._offsets[index + 1]
        inflate = zlib.decompressobj(-zlib.MAX_WBITS, zdict=self._zdict)
        return inflate.decompress(os.pread(self._fd, end - start, start)) + inflate.flush()


def segment_bytes(entries: Iterable[tuple[int, str, bytes]]) -> bytes:
    """A segment of (prefix, key, JSON line) entries sorted by (prefix, key), one per key.
    The same answers make the same bytes, so DVC sees the same object."""
    entries = iter(entries)
    first: list[tuple[int, str, bytes]] = []
    size = 0
    for entry in entries:
        first.append(entry)
        size += len(entry[2])
        if size >= _DICT_BYTES:
            break
    zdict = b"".join(line for _, _, line in first)[-_DICT_BYTES:]
    parts = [_MAGIC, struct.pack("<I", len(zdict)), zdict]
    offset = sum(len(part) for part in parts)
    prefixes, offsets = array("Q"), array("Q", [offset])
    for prefix, _, line in (*first, *entries):
        deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS, zdict=zdict)
        packed = deflate.compress(line) + deflate.flush()
        parts.append(packed)
        offset += len(packed)
        prefixes.append(prefix)
        offsets.append(offset)
    parts += [_little_endian(prefixes), _little_endian(offsets)]
    parts.append(_FOOTER.pack(offset, len(prefixes), _FOOTER_MAGIC))
    return b"".join(parts)


def _line_of(key: str, record: dict) -> bytes:
    return (json.dumps({"key": key, **record}, ensure_ascii=False, sort_keys=True) + "\n").encode()


def _unique(entries: Iterable[tuple[int, str, bytes]]) -> Iterator[tuple[int, str, bytes]]:
    """Sorted entries with each key once (a crash mid-merge leaves a key in two segments)."""
    last = None
    for entry in entries:
        if entry[:2] != last:
            last = entry[:2]
            yield entry


def size_tier(answers: int) -> int:
    """Segments whose answer counts are within a factor MERGE_FANOUT share a tier."""
    return int(math.log(max(answers, 1), MERGE_FANOUT))


class AnswerCache:
    """Answers by key: packed segments root/seg-*.pack (and root/seg-*.jsonl.gz of the first
    format), plus loose root/<2 hex>/<key>.json files not packed yet. Safe to share between
    threads and processes."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._segments: dict[str, _Segment] = {}
        self._legacy: dict[str, dict] = {}  # answers of first-format segments, read whole
        self._legacy_names: set[str] = set()
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
        """Distinct answers (keys told apart by their 8-byte prefix)."""
        self._load_new_segments()
        with self._lock:
            keys = {p for segment in self._segments.values() for p in segment.prefixes}
            keys.update(key_prefix(key) for key in self._legacy)
        keys.update(key_prefix(path.stem) for path in self._loose_files())
        return len(keys)

    def pack(self) -> int:
        """Move every loose answer (and any first-format segment) into one new segment, merge
        segments that piled up; returns how many loose answers were packed."""
        self._load_new_segments()
        loose = self._loose_files()
        fresh = {}
        for path in loose:
            if self._packed(path.stem) is None and (record := self._read_loose(path)) is not None:
                fresh[path.stem] = record
        legacy = {**self._legacy, **fresh}
        if fresh or self._legacy_names:
            entries = sorted((key_prefix(k), k, _line_of(k, r)) for k, r in legacy.items())
            self._write_segment(_unique(entries), drop=[])
            for name in self._legacy_names:  # folded into the new segment
                (self.root / name).unlink(missing_ok=True)
            with self._lock:
                self._legacy, self._legacy_names = {}, set()
        # only now, with every answer safe in a segment, the loose copies may go
        for path in loose:
            if self._packed(path.stem) is not None:
                path.unlink(missing_ok=True)
        for shard in {path.parent for path in loose}:
            with contextlib.suppress(OSError):  # not empty: another process wrote meanwhile
                shard.rmdir()
        self._merge()
        return len(fresh)

    def _merge(self) -> None:
        """Merge MERGE_FANOUT segments of one size tier into one, smallest tier first, until no
        tier holds that many."""
        while True:
            tiers: dict[int, list[_Segment]] = {}
            for segment in self._segments.values():
                tiers.setdefault(size_tier(len(segment)), []).append(segment)
            full = sorted(tier for tier, members in tiers.items() if len(members) >= MERGE_FANOUT)
            if not full:
                return
            members = sorted(tiers[full[0]], key=lambda segment: segment.path.name)
            merged = heapq.merge(*(segment.entries() for segment in members))
            self._write_segment(_unique(merged), drop=members)

    def _write_segment(self, entries: Iterable[tuple[int, str, bytes]], drop: list) -> None:
        data = segment_bytes(entries)
        name = f"seg-{hashlib.sha256(data).hexdigest()[:24]}.pack"
        write_atomically(self.root / name, data)
        segment = _Segment(self.root / name)
        with self._lock:
            self._segments[name] = segment
            for old in drop:
                if old.path.name != name:
                    del self._segments[old.path.name]
        for old in drop:  # their answers are safe in the new segment
            if old.path.name != name:
                old.path.unlink(missing_ok=True)

    def _packed(self, key: str) -> dict | None:
        prefix = key_prefix(key)
        with self._lock:
            segments = list(self._segments.values())
            record = self._legacy.get(key)
        if record is None:
            for segment in segments:
                if (record := segment.get(key, prefix)) is not None:
                    break
        return record

    def _record(self, key: str) -> dict | None:
        record = self._packed(key)
        if record is None:
            record = self._read_loose(self.path(key))
        if record is None and self._load_new_segments():  # packed meanwhile by another process
            record = self._packed(key)
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
        """Open segments written since, forget those merged away; True when any is new."""
        if not self.root.exists():
            return False
        names = {path.name for path in self.root.glob(SEGMENT_GLOB)}
        opened = {}
        for name in sorted(names - self._segments.keys()):
            with contextlib.suppress(FileNotFoundError):  # merged away meanwhile
                opened[name] = _Segment(self.root / name)
        legacy = [
            p for p in sorted(self.root.glob(LEGACY_GLOB)) if p.name not in self._legacy_names
        ]
        records = {}
        for path in legacy:
            for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines():
                record = json.loads(line)
                records[record.pop("key")] = record
        with self._lock:
            for name in self._segments.keys() - names:  # an open file stays readable till here
                del self._segments[name]
            self._segments.update(opened)
            self._legacy.update(records)
            self._legacy_names.update(path.name for path in legacy)
        return bool(opened or legacy)
