"""A team's LlamaIndex retriever, for `retrievers.llamaindex.callable:
external.llamaindex_store:retriever` (and `chunks: external.llamaindex_store:chunks`).

Its own chunking: SentenceSplitter at 256 tokens with 32 of overlap (its tokenizer ships with
llama-index-core, so it works offline), MiniLM vectors in a VectorStoreIndex. Each Document's
id is the project's doc_id, so each node's ref_doc_id names its document; start_char_idx places
it. Replace `index` with your own (loaded from its storage, a vector store, ...).
"""

from __future__ import annotations

from functools import cache

import pandas as pd
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import BaseNode


class MiniLM(BaseEmbedding):
    """all-MiniLM-L6-v2 from its offline package (LlamaIndex's default embeddings call OpenAI)."""

    def _model(self):
        from sentence_transformers import SentenceTransformer

        from goldenset.core.packaged_models import resolve_model_path

        if not hasattr(self, "_loaded"):
            name = resolve_model_path("sentence-transformers/all-MiniLM-L6-v2")
            object.__setattr__(self, "_loaded", SentenceTransformer(name, device="cpu"))
        return self._loaded

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return self._model().encode(texts, normalize_embeddings=True, batch_size=64).tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


@cache
def chunks() -> list[BaseNode]:
    documents = pd.read_parquet("data/documents.parquet", columns=["doc_id", "text"])
    splitter = SentenceSplitter(chunk_size=256, chunk_overlap=32)
    return splitter.get_nodes_from_documents(
        [Document(text=row.text, id_=row.doc_id) for row in documents.itertuples()]
    )


@cache
def index() -> VectorStoreIndex:
    return VectorStoreIndex(chunks(), embed_model=MiniLM())


def retriever() -> BaseRetriever:
    return index().as_retriever(similarity_top_k=10)
