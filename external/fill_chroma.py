"""Fill a persistent Chroma folder the way a team's indexing job would, for
`retrievers.chroma: {path: chroma-db, collection: scifact}`:

    python external/fill_chroma.py chroma-db scifact

Chunks of 500 characters with 50 of overlap (LangChain's RecursiveCharacterTextSplitter), their
MiniLM vectors, and metadata doc_id and start_index: what goldenset reads to place each result.
"""

from __future__ import annotations

import sys

import chromadb
import pandas as pd
from chromadb.config import Settings
from langchain_text_splitters import RecursiveCharacterTextSplitter
from sentence_transformers import SentenceTransformer

from goldenset.core.packaged_models import resolve_model_path


def main(folder: str, name: str) -> None:
    documents = pd.read_parquet("data/documents.parquet", columns=["doc_id", "text"])
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=500, chunk_overlap=50, add_start_index=True
    )
    chunks = splitter.create_documents(
        documents["text"].tolist(), [{"doc_id": doc_id} for doc_id in documents["doc_id"]]
    )
    model = SentenceTransformer(resolve_model_path("sentence-transformers/all-MiniLM-L6-v2"))
    texts = [chunk.page_content for chunk in chunks]
    vectors = model.encode(texts, normalize_embeddings=True, batch_size=64)
    client = chromadb.PersistentClient(folder, settings=Settings(anonymized_telemetry=False))
    collection = client.get_or_create_collection(
        name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    for start in range(0, len(chunks), 1000):
        batch = slice(start, start + 1000)
        collection.add(
            ids=[f"c{number}" for number in range(len(chunks))][batch],
            embeddings=vectors[batch].tolist(),
            documents=texts[batch],
            metadatas=[chunk.metadata for chunk in chunks][batch],
        )
    print(f"{name}: {collection.count()} chunks in {folder}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
