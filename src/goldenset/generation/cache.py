"""Content-addressed cache of LLM answers: one small JSON file per answer, written atomically.

The key hashes everything that shapes the answer (provider identity with model and sampling
settings, prompt template, the full request, question index, attempt), so an unchanged passage is
never paid for twice, on any machine that shares `cache/llm` through a DVC remote. Files are
sharded by the key's first two hex digits so a small change re-uploads a small part.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

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


class AnswerCache:
    """Answers by key under root/<2 hex>/<key>.json; safe to share between threads and processes."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        path = self.path(key)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            return Completion(
                text=record["text"],
                input_tokens=int(record["input_tokens"]),
                output_tokens=int(record["output_tokens"]),
                truncated=bool(record["truncated"]),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as error:
            # only a hand-edited or foreign file gets here (writes are atomic): ask again
            log.warning("ignoring unreadable cached answer %s (%s)", path, error)
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
        return sum(1 for _ in self.root.glob("??/*.json")) if self.root.exists() else 0


def write_atomically(path: Path, text: str) -> None:
    """Write text to path so that a reader, or a crash, sees the old file or the whole new one."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
