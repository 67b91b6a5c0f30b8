"""What the store tests share: their questions, a fault read as one line, the sections of a team
whose callable is in this folder, and the checks every collection adapter (Chroma, Qdrant) and
every callable adapter (LangChain, LlamaIndex) passes alike."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from goldenset.core.errors import GoldensetError
from goldenset.retrieval.retrievers.base import RETRIEVERS, stores
from goldenset.retrieval.stores.base import StoreSection, ask_store, listed_chunks
from tests.retrieval.stores.team_corpus import embed

HERE = Path(__file__).parent
# asked of the collections (Chroma, Qdrant) the team's paragraphs fill
PARAGRAPH_QUESTIONS = [
    "What makes a volcano erupt explosively?",
    "Why does sourdough bread taste sour?",
    "What causes spring tides?",
    "How do eruptions cool the planet?",
]
# asked of the team's own retrievers (LangChain, LlamaIndex)
TEAM_QUESTIONS = [
    "What makes a volcano erupt explosively?",
    "Why does sourdough bread taste sour?",
    "What causes spring tides and neap tides?",
    "How do scientists predict eruptions?",
]


def one_line(call: Callable[[], Any]) -> str:
    """The GoldensetError ``call`` raises, whose message is one line."""
    with pytest.raises(GoldensetError) as raised:
        call()
    message = str(raised.value)
    assert "\n" not in message
    return message


def listed(hits: list) -> list[tuple]:
    return sorted((h.chunk_id, h.doc_id, h.text, h.start) for h in hits)


def exact_ranking(chunks: Sequence[tuple], questions: list[str], k: int) -> list[list[tuple]]:
    """Each question's k best chunks, (id, cosine), by a cosine computed here with numpy (unit
    vectors); a chunk is (id, doc_id, text, start)."""
    similarity = np.array(embed(questions)) @ np.array(embed([c[2] for c in chunks])).T
    return [
        [(chunks[i][0], float(row[i])) for i in np.argsort(-row, kind="stable")[:k]]
        for row in similarity
    ]


def assert_registered_off_by_default(name: str, params: type[StoreSection]) -> None:
    entry = RETRIEVERS[name]
    assert name in stores() and entry.model_free and entry.params is params
    assert not params().enabled


def assert_one_place_and_collection(
    params: type[StoreSection], place: dict, other: dict, alone: dict
) -> None:
    """Enabled, a section names exactly one of ``place`` and ``other`` (neither, or both, is an
    error naming ``place`` first) and a collection (``alone`` has none)."""
    first = f"exactly one of {next(iter(place))}"
    with pytest.raises(ValidationError, match=first):
        params(enabled=True, collection="docs")
    with pytest.raises(ValidationError, match=first):
        params(enabled=True, **place, **other, collection="docs")
    with pytest.raises(ValidationError, match="set collection"):
        params(enabled=True, **alone)


def team_sections(
    params: type[StoreSection], team: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Any]:
    """The sections of a team whose code is in this folder (module ``team``); its cache in
    tmp_path."""

    def section(function: str = "retriever", **fields: Any) -> Any:
        return params(
            enabled=True,
            callable=f"{team}:{function}",
            folder=str(HERE),
            cache_dir=str(tmp_path / "cache"),
            **fields,
        )

    return section


def asked_one_line(name: str, section: StoreSection) -> str:
    """The one line that asking the store of ``section`` two chunks a question fails with."""
    source = RETRIEVERS[name].load(section)
    return one_line(lambda: ask_store(name, source, TEAM_QUESTIONS, 2))


def assert_answers_come_from_the_cache(name: str, section: Callable[..., Any]) -> tuple[Any, Any]:
    """A second load of ``section()`` answers and lists from the cache, its store never opened;
    gives the first answers and a load of a new version, for the caller to ask."""
    load = RETRIEVERS[name].load
    source = load(section())
    first = ask_store(name, source, TEAM_QUESTIONS, 3)
    chunks = listed_chunks(name, source)
    source.cache.save()
    again = load(section())
    assert ask_store(name, again, TEAM_QUESTIONS, 3) == first
    assert listed_chunks(name, again) == chunks
    assert again._store is None  # never opened: the retriever was not asked
    return first, load(section(version="2"))


def assert_module_that_does_not_import_is_one_line(
    name: str, section: StoreSection, opener: Callable[[Any], Any]
) -> str:
    """Opening ``section`` with a callable whose module is not there: one line naming it."""
    nowhere = f"{__package__}.nothing_here"
    changed = section.model_copy(update={"callable": f"{nowhere}:make"})
    message = one_line(lambda: opener(changed))
    assert message.startswith(f"retrievers.{name}.callable: cannot import '{nowhere}'")
    return message


def assert_unreachable_store_is_one_line(name: str, section: StoreSection, label: str) -> None:
    """The team's ``unreachable_store``, asked: one line naming the store and the refusal."""
    message = asked_one_line(name, section)
    assert f"{label} Unreachable of" in message
    assert "ConnectionError: connection refused: localhost:6333" in message


def assert_identity_is_what_changes_an_answer(
    settings: StoreSection, same: dict, changes: Sequence[dict]
) -> None:
    """``same`` (how it asks) keeps the section's identity; each of ``changes`` changes it."""
    assert settings.model_copy(update=same).identity_fields() == settings.identity_fields()
    for change in changes:
        assert settings.model_copy(update=change).identity_fields() != settings.identity_fields()


def assert_params_do_not_import(module: str, params: str, client: str) -> None:
    """Reading the params of goldenset.retrieval.stores.``module`` leaves ``client`` unimported."""
    code = (
        f"import sys, goldenset.retrieval.stores.{module} as m; m.{params}(); "
        f"assert {client!r} not in sys.modules, '{client} imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
