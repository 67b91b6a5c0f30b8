"""Where each token of a document starts, by one fixed offline tokenizer (score.tokenizer).

The context-budget view counts tokens with this tokenizer whatever embed.model is, so a budget
means the same amount of text for every model under test.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from goldenset.core.errors import GoldensetError
from goldenset.core.packaged_models import resolve_model_path


def budget_tokenizer(name: str):
    """The fast tokenizer of a packaged or local model folder (a tokenizers.Tokenizer)."""
    from tokenizers import Tokenizer

    path = Path(resolve_model_path(name)) / "tokenizer.json"
    if not path.is_file():
        raise GoldensetError(
            f"score.tokenizer: no tokenizer.json for {name!r} offline; name a packaged model "
            "(sentence-transformers/all-MiniLM-L6-v2) or a model folder holding tokenizer.json"
        )
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()  # whole documents: every token counts
    tokenizer.no_padding()
    return tokenizer


def token_starts(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Sorted character offsets where each text's tokens start (no special tokens)."""
    encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
    return [sorted({start for start, _ in encoding.offsets}) for encoding in encodings]


def document_token_starts(tokenizer_name: str, documents: pd.DataFrame) -> dict[str, list[int]]:
    """Where each document's tokens start (doc_id, text), by the fixed tokenizer score.tokenizer."""
    starts = token_starts(budget_tokenizer(tokenizer_name), documents["text"].tolist())
    return dict(zip(documents["doc_id"], starts, strict=True))
