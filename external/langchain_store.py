"""A team's LangChain retriever, for `retrievers.langchain.callable:
external.langchain_store:retriever` (and `chunks: external.langchain_store:chunks`).

Its own chunking, not goldenset's: RecursiveCharacterTextSplitter at 1,000 characters with 200 of
overlap (LangChain's usual setting), start offsets kept, MiniLM vectors in an in-memory store.
Replace `vector_store` with the store your team ships (`Chroma(...)`, `PGVector(...)`, ...):
goldenset asks `retriever()` its questions and places what it returns by `doc_id` and
`start_index`.
"""

from __future__ import annotations

from functools import cache

import pandas as pd
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import RecursiveCharacterTextSplitter


class MiniLM(Embeddings):
    """all-MiniLM-L6-v2 from its offline package, unit vectors."""

    def __init__(self) -> None:
        from sentence_transformers import SentenceTransformer

        from goldenset.core.packaged_models import resolve_model_path

        name = resolve_model_path("sentence-transformers/all-MiniLM-L6-v2")
        self.model = SentenceTransformer(name, device="cpu")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.encode(texts, normalize_embeddings=True, batch_size=64).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@cache
def chunks() -> list[Document]:
    """The team's chunking of the project's documents, each chunk with an id."""
    documents = pd.read_parquet("data/documents.parquet", columns=["doc_id", "text"])
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=1000, chunk_overlap=200, add_start_index=True
    )
    cut = splitter.split_documents(
        [Document(row.text, metadata={"doc_id": row.doc_id}) for row in documents.itertuples()]
    )
    for number, chunk in enumerate(cut):
        chunk.id = f"lc-{number}"
    return cut


@cache
def vector_store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(MiniLM())
    store.add_documents(chunks())
    return store


def retriever() -> BaseRetriever:
    return vector_store().as_retriever()
