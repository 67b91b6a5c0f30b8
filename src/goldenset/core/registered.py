"""A params value that must be the name of a registry's entry: a question writer
(generate.provider), a chunking strategy (chunk.strategy).

The names are read from the registry (goldenset.core.registry) when a value is validated, not
when the params model is defined, so defining the model imports no entry code, and an entry
registered from outside (a plugin, a test's toy) before or after is accepted. The error and the
JSON schema list the names, as a Literal's would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import PydanticCustomError, core_schema

from goldenset.core.registry import Registry


@dataclass(frozen=True)
class RegisteredName:
    """Annotated[str, RegisteredName(REGISTRY)]: the value is one of the registry's names."""

    registry: Registry

    def check(self, value: str) -> str:
        names = self.registry.names()
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
        json_schema["enum"] = self.registry.names()
        return json_schema
