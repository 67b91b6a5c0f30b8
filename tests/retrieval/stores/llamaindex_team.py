"""A team's LlamaIndex code, as the llamaindex adapter's tests import it (retrievers.llamaindex
.callable and .chunks): a VectorStoreIndex of MiniLM vectors over the documents of team_corpus,
cut by SentenceSplitter (offline: its tokenizer and NLTK data ship with llama-index-core)."""

from __future__ import annotations

from functools import cache
from typing import Any

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import BaseNode, QueryBundle, TextNode

from tests.retrieval.stores.team_corpus import DOCUMENTS, embed


class MiniLM(BaseEmbedding):
    def _get_query_embedding(self, query: str) -> list[float]:
        return embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return embed(texts)


def splitter() -> SentenceSplitter:
    return SentenceSplitter(chunk_size=128, chunk_overlap=20)


def documents() -> list[Document]:
    """The corpus's ids in each Document's metadata; its own id (ref_doc_id) another."""
    return [
        Document(text=text, id_=f"file-{doc}", metadata={"doc_id": doc})
        for doc, text in DOCUMENTS.items()
    ]


@cache
def index() -> VectorStoreIndex:
    return VectorStoreIndex.from_documents(
        documents(), embed_model=MiniLM(), transformations=[splitter()]
    )


def retriever() -> BaseRetriever:
    return index().as_retriever()


def chunks() -> list[BaseNode]:
    return list(index().docstore.docs.values())


@cache
def orphan_index() -> VectorStoreIndex:
    """Nodes made by hand: no Document, so no ref_doc_id, and no doc_id in their metadata."""
    nodes = [TextNode(text=text, metadata={"title": doc}) for doc, text in DOCUMENTS.items()]
    return VectorStoreIndex(nodes, embed_model=MiniLM())


def orphan_retriever() -> BaseRetriever:
    return orphan_index().as_retriever()


def the_index() -> VectorStoreIndex:
    """A common slip: the index, not its retriever (holds nothing: no model)."""
    return VectorStoreIndex([], embed_model=MiniLM())


def unreachable_store() -> BaseRetriever:
    return Unreachable()


def fails_to_connect() -> Any:
    raise ConnectionError("connection refused: localhost:6333\nretrying would not help")


class Unreachable(BaseRetriever):
    """A retriever whose store is down."""

    def _retrieve(self, query_bundle: QueryBundle) -> list:
        raise ConnectionError("connection refused: localhost:6333\nsecond line")
