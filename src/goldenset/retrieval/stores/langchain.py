"""langchain: a team's LangChain retriever (any langchain_core ``BaseRetriever``: a vector store's
``as_retriever()``, an ensemble, a reranking pipeline), built by the team's own
``module:function`` and scored with its own chunks.

Each result is a ``Document``: its text, its document id from ``metadata[doc_id_key]``, its
offset from ``metadata[start_key]`` (what ``RecursiveCharacterTextSplitter(add_start_index=True)``
adds) and ``Document.id`` as its chunk id. LangChain retrievers give no scores: results rank by
place.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.retrievers.base import RETRIEVERS
from goldenset.retrieval.stores.base import (
    Hit,
    offset,
    required,
    store_entry,
)
from goldenset.retrieval.stores.callable import CallableSection, user_object, user_retriever


class LangChainParams(CallableSection):
    """retrievers.langchain: a callable store's fields, and where its chunks' offsets are."""

    start_key: str | None = Field(
        "start_index",
        description="the metadata key of a chunk's offset in its document (what "
        "RecursiveCharacterTextSplitter(add_start_index=True) adds); none: placed by its text",
    )


class LangChainStore:
    """A LangChain retriever, asked a batch of questions at a time (``retriever.batch``)."""

    name = "langchain"

    def __init__(self, settings: LangChainParams, retriever: Any) -> None:
        self.settings, self.retriever = settings, retriever
        self.described = f"LangChain {type(retriever).__name__} of {settings.callable}"

    def search(self, texts: list[str], k: int) -> list[list[Hit]]:
        # a vector store's retriever returns search_kwargs["k"] results (4 unless set): ask for
        # k; any other retriever returns what it was built to return
        if isinstance(getattr(self.retriever, "search_kwargs", None), dict):
            self.retriever.search_kwargs = {**self.retriever.search_kwargs, "k": k}
        answers = self.retriever.batch(texts)
        return [[self._hit(document) for document in answer[:k]] for answer in answers]

    def chunks(self) -> list[Hit] | None:
        if self.settings.chunks is None:
            return None
        listed = user_object(self.name, "chunks", self.settings.chunks, self.settings.folder)
        return [self._hit(document) for document in listed]

    def _hit(self, document: Any) -> Hit:
        from langchain_core.documents import Document

        if not isinstance(document, Document):
            raise GoldensetError(
                f"retrievers.{self.name}: {self.described} gave a {type(document).__name__}, "
                "not a langchain_core Document"
            )
        metadata, text = document.metadata, document.page_content
        doc_id = required(metadata, self.settings.doc_id_key, self.name, self.described)
        start = offset(metadata, self.settings.start_key)
        end = None if start is None else start + len(text)
        return Hit(doc_id, text, start, end, None, document.id)


def open_langchain(settings: LangChainParams) -> LangChainStore:
    """The team's retriever, built by its callable."""
    retriever = user_retriever(
        "langchain", settings, "langchain_core.retrievers", "langchain", "LangChain"
    )
    return LangChainStore(settings, retriever)


RETRIEVERS.register("langchain", store_entry(LangChainParams, open_langchain, "langchain"))
