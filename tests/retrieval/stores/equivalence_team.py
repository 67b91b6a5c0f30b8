"""A team's LangChain store filled with goldenset's own chunks (the equivalence test fills
CHUNKS): its retriever, and its whole chunking for the chunk view."""

from __future__ import annotations

from functools import cache

from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore

from tests.retrieval.stores.langchain_team import MiniLM

CHUNKS: list[Document] = []  # set by the test: goldenset's chunks with doc_id and start_index


@cache
def vector_store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(MiniLM())
    store.add_documents(CHUNKS)
    return store


def retriever() -> BaseRetriever:
    return vector_store().as_retriever()


def chunks() -> list[Document]:
    return CHUNKS
