"""``module:function``, the one way a setting names code (the team's retriever, a store's
builder, a provider's batch runner): its pattern for params, and its parts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

PATTERN = r"^[\w.]+:\w+$"

# a params field naming code: the description says what the function returns
FunctionSpec = Annotated[str, Field(pattern=PATTERN)]


@dataclass(frozen=True)
class FunctionName:
    module: str  # dotted
    function: str

    @property
    def top(self) -> str:
        """The module's top package (or the module itself): what is looked up in a folder."""
        return self.module.split(".")[0]


def parse_spec(spec: str) -> FunctionName:
    """``module:function`` as its parts; ValueError when it is not one."""
    if not re.match(PATTERN, spec):
        raise ValueError(f"{spec!r} is not module:function")
    module, _, function = spec.partition(":")
    return FunctionName(module, function)
