"""Ids derived from content: the same content gives the same id on every machine and run."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection


def content_id(prefix: str, content: dict, taken: Collection[str] = ()) -> str:
    """`prefix` and 16 hex digits of the content's hash; salted away from the ids of `taken` on
    a clash (a document id, or an id already issued)."""
    salt = 0
    while True:
        encoded = json.dumps({**content, "salt": salt}, sort_keys=True, ensure_ascii=False)
        made = prefix + hashlib.sha256(encoded.encode("utf-8")).hexdigest()[:16]
        if made not in taken:
            return made
        salt += 1
