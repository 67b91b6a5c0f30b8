"""A question writer without a model: it asks about the longest word of the passage's target
sentence (the next longest on each retry), offline and free. Its own settings are generate.toy."""

from __future__ import annotations

import re

from goldenset.core.params import Section
from goldenset.generation.interface import Completion
from goldenset.generation.prompt import TARGET_CLOSE, TARGET_OPEN
from goldenset.generation.providers.registry import PROVIDERS, ProviderEntry


class ToyWriterParams(Section):
    opening: str = "What is known about"


class ToyWriter:
    name = "toy"
    model = "toy-writer"
    max_concurrency = None
    paid = False

    def __init__(self, params) -> None:
        self.opening = params.toy.opening

    def identity(self) -> dict:
        return {"provider": self.name, "model": self.model}

    def complete(self, system: str, messages: list[dict[str, str]], *, attempt: int) -> Completion:
        # the passage turn: the last with a target (a retry's correction comes after it)
        turn = next(m["content"] for m in reversed(messages) if TARGET_OPEN in m["content"])
        target = turn[turn.index(TARGET_OPEN) + len(TARGET_OPEN) : turn.index(TARGET_CLOSE)]
        words = sorted(set(re.findall(r"[^\W\d_]{4,}", target)), key=lambda w: (-len(w), w))
        text = f"{self.opening} {words[attempt % len(words)] if words else 'it'}?"
        return Completion(text, input_tokens=len(turn) // 4, output_tokens=12, truncated=False)


PROVIDERS.register("toy", ProviderEntry(ToyWriter, params=ToyWriterParams))
