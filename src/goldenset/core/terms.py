"""How a text becomes its terms for lexical matching: bm25s' tokenizer, a stop list and a
stemmer. The bm25 retriever ranks with them, and the audit's rarest-word share counts them, so
both read a text alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# the stop lists bm25s ships, by the code it knows them by
STOP_LISTS = ("en", "de", "nl", "fr", "es", "pt", "it", "ru", "sv", "no", "zh", "tr", "ko", "da")


@dataclass(frozen=True)
class Analyzer:
    """How a text becomes its terms: bm25s' tokenizer (lower case, words of two characters or
    more), less a stop list, through a Snowball stemmer (PyStemmer)."""

    stopwords: str | tuple[str, ...] | None = "en"  # a code of STOP_LISTS, the words, or none
    stemmer: str | None = None  # a Snowball language (english, french...), or none

    def tokenize(self, texts: Sequence[str], return_ids: bool = True) -> Any:
        import bm25s

        stemmer = None
        if self.stemmer is not None:
            import Stemmer

            stemmer = Stemmer.Stemmer(self.stemmer)
        stopwords = list(self.stopwords) if isinstance(self.stopwords, tuple) else self.stopwords
        return bm25s.tokenize(
            list(texts),
            stopwords=stopwords,
            stemmer=stemmer,
            return_ids=return_ids,
            show_progress=False,
        )


DEFAULT_ANALYZER = Analyzer()  # bm25's by default: English stop words, no stemmer
