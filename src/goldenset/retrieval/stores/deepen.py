"""A store asked deep enough: goldenset's own retrievers rank ``depth`` distinct documents and
texts a question (a document at its best chunk), so a store, which returns passages, is asked
again deeper when its answer names fewer (goldenset.core.cover.deepen)."""

from __future__ import annotations

from goldenset.core.cover import deepen, short_answer
from goldenset.retrieval.stores.base import Hit, StoreSource, ask_store


def ask_deep(
    name: str, source: StoreSource, texts: list[str], depth: int, most: int
) -> tuple[list[list[Hit]], int]:
    """Each question's passages, asked deeper while a full answer names fewer than ``depth``
    distinct documents or texts, up to ``most``; with the count of questions still short.
    Every depth asked is cached, so a re-run asks nothing."""

    def ask(rows: list[int], k: int) -> list[list[Hit]]:
        return ask_store(name, source, [texts[row] for row in rows], k)

    return deepen(ask, len(texts), depth, most, lambda hits, asked: _short(hits, depth, asked))


def _short(hits: list[Hit], depth: int, asked: int) -> bool:
    """goldenset.core.cover.short_answer of a store's passages; a passage without a document id
    is a document of its own."""
    documents = {("doc", hit.doc_id) if hit.doc_id else ("text", hit.text) for hit in hits}
    return short_answer(len(hits), len(documents), len({hit.text for hit in hits}), depth, asked)
