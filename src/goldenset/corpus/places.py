"""Where a piece of a document's text came from: the page of a PDF, the heading path of a Word
file. Kept beside the text as the character offsets where each page or section starts, so an
evidence span or a chunk, itself offsets into the text, finds its page by one bisection.

The documents table holds them as JSON (`places` column): {"pages": [[start, page], ...]} or
{"headings": [[start, "Setup > Cables"], ...]}, or {} for a document with neither.
"""

from __future__ import annotations

import bisect
import json
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

PAGE, HEADING = "page", "heading"  # the fields they add to a golden-set row
PLACE = "place"  # the column of data/chunks.parquet: where a chunk is ("p. 12-13", "§ A > B")


@dataclass(frozen=True)
class Places:
    pages: tuple[tuple[int, int], ...] = ()  # (first character, page number), by offset
    headings: tuple[tuple[int, str], ...] = ()  # (first character, "Heading > Subheading")
    _starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        marks = self.pages or self.headings
        object.__setattr__(self, "_starts", tuple(start for start, _ in marks))

    def __bool__(self) -> bool:
        return bool(self.pages or self.headings)

    def _index(self, offset: int) -> int | None:
        index = bisect.bisect_right(self._starts, offset) - 1
        return index if index >= 0 else None

    def page_at(self, offset: int) -> int | None:
        index = self._index(offset) if self.pages else None
        return None if index is None else self.pages[index][1]

    def heading_at(self, offset: int) -> str | None:
        index = self._index(offset) if self.headings else None
        return None if index is None else self.headings[index][1]

    def fields_at(self, offset: int) -> dict[str, int | str]:
        """The named fields of the text at `offset`: {"page": 12}, {"heading": "A > B"} or {}."""
        page, heading = self.page_at(offset), self.heading_at(offset)
        return {PAGE: page} if page is not None else {HEADING: heading} if heading else {}

    def pages_of(self, start: int, end: int) -> str:
        """The pages text[start:end] spans: "12", "12-13", or "" when there are none."""
        first, last = self.page_at(start), self.page_at(max(start, end - 1))
        if first is None or last is None:
            return ""
        return str(first) if first == last else f"{first}-{last}"

    def to_json(self) -> str:
        if self.pages:
            return json.dumps({"pages": [list(p) for p in self.pages]})
        if self.headings:
            return json.dumps({"headings": [list(h) for h in self.headings]}, ensure_ascii=False)
        return "{}"

    @classmethod
    def from_json(cls, text: str | None) -> Places:
        data = json.loads(text) if text else {}
        return cls(
            pages=tuple((int(s), int(p)) for s, p in data.get("pages", [])),
            headings=tuple((int(s), str(h)) for s, h in data.get("headings", [])),
        )


def place_label(fields: Mapping) -> str:
    """How a person reads a place: "p. 12", "§ Setup > Cables", or "" (a row's fields, or a
    table row where the missing ones are NaN)."""
    page, heading = fields.get(PAGE), fields.get(HEADING)
    # a table's page is a numpy number (int64, or float64 beside NaN), not an int
    if isinstance(page, numbers.Real) and page == page:  # NaN != NaN
        return f"p. {int(page)}"
    return f"§ {heading}" if isinstance(heading, str) and heading else ""


def with_places(rows: list[dict], places: Mapping[str, Places]) -> list[dict]:
    """Golden-set rows with the page or heading of their evidence, where the document has one."""
    return [
        {**row, **places[row["doc_id"]].fields_at(row["evidence_start"])}
        if row["doc_id"] in places
        else row
        for row in rows
    ]


def chunk_places(
    places: Mapping[str, Places], doc_ids: Sequence[str], starts: Sequence[int], ends: Sequence[int]
) -> list[str]:
    """Each chunk's place: the pages it spans ("p. 12-13") or the heading where it starts."""
    labels = []
    for doc_id, start, end in zip(doc_ids, starts, ends, strict=True):
        doc_places = places.get(doc_id, NOWHERE)
        pages = doc_places.pages_of(int(start), int(end))
        labels.append(f"p. {pages}" if pages else place_label(doc_places.fields_at(int(start))))
    return labels


def places_by_document(doc_ids: Iterable[str], encoded: Iterable[str | None]) -> dict[str, Places]:
    """The documents table's places column, decoded; documents without places left out."""
    decoded = (
        (doc_id, Places.from_json(text)) for doc_id, text in zip(doc_ids, encoded, strict=True)
    )
    return {doc_id: places for doc_id, places in decoded if places}


NOWHERE = Places()


def read_places(path: Path) -> dict[str, Places]:
    """The page or heading offsets of the documents that have them (PDF and Word files)."""
    if "places" not in pq.read_schema(path).names:  # ingested before places were kept
        return {}
    frame = pd.read_parquet(path, columns=["doc_id", "places"])
    return places_by_document(frame["doc_id"].astype(str), frame["places"])
