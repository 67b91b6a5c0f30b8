"""Close calls: the groups of configurations a user actually chooses among.

A grid padded with a broken model agrees with anything; the decisions that matter are among
good configurations (chunkings x retrievers for one good model, or two good models). A group
names its models by their label as calibrate prints it (`all-MiniLM-L6-v2`, `all-MiniLM-L6-v2
max_seq_length 16`), so two settings of one model are told apart; a retriever that reads no
embedding (model `-`) belongs to every group that names it.
"""

from __future__ import annotations

from dataclasses import dataclass

from goldenset.calibrate.params import GroupParams
from goldenset.core.errors import GoldensetError

MODEL_FREE = "-"  # the model label of a retriever that reads no embedding
STORE_CHUNKING = "its own chunks"  # the chunking label of a store: one configuration


@dataclass(frozen=True)
class Configuration:
    name: str
    chunking: str
    model: str
    retriever: str


def check_labels(groups: dict[str, GroupParams], chunkings: list[str], models: list[str]) -> None:
    """Every label a group names is in the grid, or a GoldensetError that lists the grid's (before
    any configuration runs)."""
    for name, group in groups.items():
        for field, wanted, known in [
            ("models", group.models or [], models),
            ("chunkings", group.chunkings or [], chunkings),
        ]:
            unknown = [label for label in wanted if label not in known]
            if unknown:
                raise GoldensetError(
                    f"calibrate.groups.{name}.{field}: {', '.join(unknown)} not in the grid; "
                    f"use some of: {', '.join(known)}"
                )


def members(
    group: GroupParams, configurations: list[Configuration], retrievers: list[str] | None = None
) -> list[str]:
    """The names of the group's configurations, in grid order; a group naming no retriever takes
    those of ``retrievers`` (calibrate.retrievers: not the variants; None: every one)."""
    wanted = group.retrievers or retrievers
    return [
        c.name
        for c in configurations
        if (group.models is None or c.model in group.models or c.model == MODEL_FREE)
        and (group.chunkings is None or c.chunking in group.chunkings)
        and (wanted is None or c.retriever in wanted)
    ]


def variant_chunkings(label: str, groups: dict[str, GroupParams]) -> list[str] | None:
    """The chunking labels a variant is scored at: those of the groups that name it (None:
    every chunking, when one of them names none; none when no group names it)."""
    naming = [group for group in groups.values() if label in (group.retrievers or [])]
    if any(group.chunkings is None for group in naming):
        return None
    return list(dict.fromkeys(chunking for group in naming for chunking in group.chunkings or []))
