"""params.yaml `retrievers:`: a section per retriever of goldenset.retrieval.retrievers.

Derived from the registry when this module is imported, not when the retrievers package is: an
entry added from outside (a plugin, a test's toy) is registered before any stage reads params.
"""

from __future__ import annotations

from pydantic import Field, create_model, model_validator

from goldenset.core.params import Section
from goldenset.retrieval.retrievers import RETRIEVERS, fusable, fused_sections


class RetrieversSection(Section):
    """params.yaml `retrievers:`: one field per entry of goldenset.retrieval.retrievers."""

    @model_validator(mode="after")
    def _fused_retrievers_enabled(self) -> RetrieversSection:
        for name, fuse in fused_sections(self).items():
            if not getattr(self, name).enabled:
                continue
            unknown = [other for other in fuse if other not in fusable()]
            if unknown:
                raise ValueError(
                    f"{name}.fuse: {unknown} cannot be fused; fuse some of {fusable()}"
                )
            off = [other for other in fuse if not getattr(self, other).enabled]
            if off:
                raise ValueError(f"{name}.fuse names disabled retrievers {off}: enable them")
            if len(set(fuse)) != len(fuse):
                raise ValueError(f"{name}.fuse names a retriever twice: {fuse}")
        return self


def retrievers_model() -> type[RetrieversSection]:
    """The `retrievers:` section, a field per registered retriever, in registry order."""
    fields: dict = {
        name: (entry.params, Field(default_factory=entry.params))
        for name, entry in RETRIEVERS.items()
    }
    return create_model("RetrieversParams", __base__=RetrieversSection, **fields)


RetrieversParams = retrievers_model()
