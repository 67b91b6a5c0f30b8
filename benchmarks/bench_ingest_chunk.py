"""Time ingest and every chunking strategy on the SciFact corpus (5,183 abstracts, 7.8 M chars).

PYTHONPATH=src python benchmarks/bench_ingest_chunk.py [../shared/datasets/scifact/corpus.jsonl.gz]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from goldenset.chunking.configured import chunk_documents
from goldenset.chunking.params import ChunkParams
from goldenset.core.packaged_models import resolve_model_path
from goldenset.corpus.documents import documents_frame
from goldenset.corpus.ingest import ingest

DEFAULT = Path(__file__).resolve().parents[2] / "shared/datasets/scifact/corpus.jsonl.gz"


def timed(label: str, action):
    started = time.perf_counter()
    value = action()
    print(f"{label:<28} {time.perf_counter() - started:7.2f} s")
    return value


def main(corpus: Path) -> None:
    result = timed("ingest", lambda: ingest(corpus, max_file_mb=20))
    docs = documents_frame(result.documents)
    print(f"  {result.summary()}")
    for strategy in ["none", "chars", "sentences", "paragraphs", "markdown"]:
        params = ChunkParams(strategy=strategy, max_size=600, overlap=100)
        chunks = timed(f"chunk {strategy} 600/100", lambda p=params: chunk_documents(docs, p))
        print(f"  {len(chunks):,} chunks")
    from transformers import AutoTokenizer

    name = "sentence-transformers/all-MiniLM-L6-v2"
    tokenizer = timed(
        "load tokenizer", lambda: AutoTokenizer.from_pretrained(resolve_model_path(name))
    )
    params = ChunkParams(strategy="tokens", max_size=128, overlap=16)
    chunks = timed("chunk tokens 128/16", lambda: chunk_documents(docs, params, tokenizer))
    print(f"  {len(chunks):,} chunks")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
