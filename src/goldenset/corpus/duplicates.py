"""Exact and near-duplicate documents: which to drop, and the kept twin each one maps to.

Exact duplicates have the same normalised text (Unicode NFKC, case folded, whitespace
collapsed). Near-duplicates share at least `threshold` of their word 5-shingles (Jaccard):
MinHash LSH (datasketch) proposes candidate pairs, the exact Jaccard of the shingle sets
decides, so a reported similarity is never an estimate.

The first document in ingest order is kept; a later one is dropped when it duplicates a kept
document (never a dropped one, so near-duplicates do not chain: A~B and B~C keep C when A and C
differ enough).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from goldenset.core.stats import jaccard

SHINGLE_WORDS = 5
NUM_PERM = 128  # MinHash permutations: the LSH candidate filter only; exact Jaccard decides
EXACT = "exact"
NEAR = "near"
_WORDS = re.compile(r"\w+")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Duplicate:
    doc_id: str  # the dropped document
    kept: str  # its kept twin
    kind: str  # EXACT or NEAR
    similarity: float  # 1.0 for exact duplicates, else the Jaccard of the shingle sets

    def line(self) -> str:
        if self.kind == EXACT:
            return f"dropped {self.doc_id}: duplicate of {self.kept}"
        return f"dropped {self.doc_id}: near-duplicate ({self.similarity:.2f}) of {self.kept}"


def normalised(text: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def text_key(text: str) -> str:
    """sha256 of the normalised text: equal keys, same document for every reader."""
    return hashlib.sha256(normalised(text).encode("utf-8")).hexdigest()


def _shingles_of_normalised(text: str, words: int = SHINGLE_WORDS) -> set[str]:
    """Word n-grams of a normalised text; a text shorter than n words is one shingle."""
    tokens = _WORDS.findall(text)
    if len(tokens) <= words:
        return {" ".join(tokens)} if tokens else set()
    return {" ".join(tokens[i : i + words]) for i in range(len(tokens) - words + 1)}


def find_duplicates(
    doc_ids: Sequence[str], texts: Sequence[str], threshold: float | None
) -> list[Duplicate]:
    """Documents to drop, in input order; `threshold` None looks for exact duplicates only."""
    # imported here: the stages that read text_key alone (score, audit) start 0.4 s sooner
    from datasketch import MinHash, MinHashLSH

    duplicates: list[Duplicate] = []
    first_with_key: dict[str, str] = {}
    lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM) if threshold is not None else None
    kept_text: dict[str, tuple[int, str]] = {}  # kept document -> (position, normalised text)
    # one set of permutations for every signature; crc32 is a stable 32-bit shingle hash,
    # 20x cheaper than datasketch's default sha1
    template = MinHash(num_perm=NUM_PERM, seed=1, hashfunc=zlib.crc32)
    for doc_id, text in zip(doc_ids, texts, strict=True):
        plain = normalised(text)
        key = hashlib.sha256(plain.encode("utf-8")).hexdigest()
        if key in first_with_key:
            duplicates.append(Duplicate(doc_id, first_with_key[key], EXACT, 1.0))
            continue
        first_with_key[key] = doc_id
        if lsh is None:
            continue
        own = _shingles_of_normalised(plain)
        signature = template.copy()
        signature.update_batch([s.encode("utf-8") for s in own])
        twin = _nearest(own, lsh.query(signature), kept_text, threshold)
        if twin is not None:
            duplicates.append(Duplicate(doc_id, twin[0], NEAR, round(twin[1], 4)))
            continue
        lsh.insert(doc_id, signature)
        kept_text[doc_id] = (len(kept_text), plain)
    return duplicates


def _nearest(
    own: set[str], candidates: list[str], kept_text: dict[str, tuple[int, str]], threshold: float
) -> tuple[str, float] | None:
    """The most similar kept candidate at or above the threshold (ties: the earliest kept)."""
    best: tuple[str, float] | None = None
    for doc_id in sorted(candidates, key=lambda d: kept_text[d][0]):
        similarity = jaccard(own, _shingles_of_normalised(kept_text[doc_id][1]))
        if similarity >= threshold and (best is None or similarity > best[1]):
            best = (doc_id, similarity)
    return best


def duplicate_rows(duplicates: list[Duplicate]) -> list[dict]:
    """data/duplicates.json: each dropped document, the one kept, how alike they are."""
    return [
        {"doc_id": d.doc_id, "kept": d.kept, "kind": d.kind, "similarity": d.similarity}
        for d in duplicates
    ]
