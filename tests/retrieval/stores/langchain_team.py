"""A team's LangChain code, as the langchain adapter's tests import it (retrievers.langchain
.callable and .chunks): an in-memory vector store of MiniLM vectors over the documents of
team_corpus, cut by RecursiveCharacterTextSplitter with start offsets."""

from __future__ import annotations

from functools import cache
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore

from tests.retrieval.stores.team_corpus import DOCUMENTS, embed


class MiniLM(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return embed([text])[0]


def split() -> list[Document]:
    """The team's chunking, each chunk with an id of its own."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=1000, chunk_overlap=200, add_start_index=True
    )
    documents = [Document(text, metadata={"doc_id": doc}) for doc, text in DOCUMENTS.items()]
    chunks = splitter.split_documents(documents)
    for number, chunk in enumerate(chunks):
        chunk.id = f"{chunk.metadata['doc_id']}#{number}"
    return chunks


@cache
def vector_store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(MiniLM())
    store.add_documents(split())
    return store


def retriever() -> BaseRetriever:
    return vector_store().as_retriever()


def chunks() -> list[Document]:
    return split()


def the_store() -> InMemoryVectorStore:
    """A common slip: the vector store, not its retriever (embeds nothing: no model)."""
    return InMemoryVectorStore(MiniLM())


def a_list() -> list:
    return []


def unreachable_store() -> BaseRetriever:
    return Unreachable()


def fails_to_connect() -> Any:
    raise ConnectionError("connection refused: localhost:6333\nretrying would not help")


class Unreachable(BaseRetriever):
    """A retriever whose store is down."""

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        raise ConnectionError("connection refused: localhost:6333\nsecond line")
