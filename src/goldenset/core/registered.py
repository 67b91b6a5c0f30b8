"""A params value that must be a registered name: a question writer (generate.provider), a
chunking strategy (chunk.strategy).

Those extension points declare their entries beside their code (goldenset.generation.providers,
goldenset.chunking.strategies), which the params models must not import when they are defined:
the names are read from a "module:function" when a value is validated. So an entry registered
from outside (a plugin, a test's toy), before or after the params are imported, is accepted. The
error and the JSON schema list the names, as a Literal's would.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import PydanticCustomError, core_schema


@dataclass(frozen=True)
class RegisteredName:
    """Annotated[str, RegisteredName("module:function")]: the value is one of the names the
    function returns."""

    names: str  # "module:function" returning the registered names

    def registered(self) -> list[str]:
        module, _, function = self.names.partition(":")
        return list(getattr(importlib.import_module(module), function)())

    def check(self, value: str) -> str:
        names = self.registered()
        if value not in names:
            quoted = [repr(name) for name in names]
            expected = " or ".join(
                [", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted
            )
            raise PydanticCustomError(
                "literal_error", "Input should be {expected}", {"expected": expected}
            )
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: Any, handler: GetJsonSchemaHandler) -> Any:
        json_schema = handler(schema)
        json_schema["enum"] = self.registered()
        return json_schema
