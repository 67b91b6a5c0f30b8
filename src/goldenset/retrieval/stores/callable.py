"""A store built by the team's own ``module:function`` (the langchain and llamaindex adapters):
its params section, and the checks of what that function returns, each failure one line. The
function comes in through the one door for the team's code, goldenset.retrieval.team_code."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from goldenset.core.errors import GoldensetError
from goldenset.core.specs import FunctionSpec
from goldenset.retrieval.stores.base import StoreSection, needs
from goldenset.retrieval.team_code import CodeFolder, code_identity, team_object


class CallableSection(StoreSection):
    """A store built by the team's own ``module:function``, imported from ``folder`` (as
    retrievers.external's callable: goldenset.retrieval.team_code)."""

    callable: FunctionSpec | None = Field(
        None, description="module:function returning the retriever"
    )
    folder: CodeFolder = "external"
    chunks: FunctionSpec | None = Field(
        None,
        description="module:function returning every chunk of the store (its whole chunking), "
        "for the chunk view; none: the chunk view is left out",
    )

    @model_validator(mode="after")
    def _callable_set(self) -> CallableSection:
        if self.enabled and self.callable is None:
            raise ValueError("set callable (module:function returning the retriever)")
        return self

    def identity_fields(self) -> dict[str, Any]:
        """The folder's files too: a change to the team's code is a new retriever."""
        return {**super().identity_fields(), "code": code_identity(self.folder)}


def user_object(name: str, field: str, spec: str, folder: str) -> Any:
    """What the team's ``module:function`` (retrievers.<name>.<field>) returns."""
    return team_object(f"retrievers.{name}", field, spec, folder)


def not_a(name: str, spec: str, returned: object, wanted: str, hint: str = "") -> GoldensetError:
    """One line for a callable that returned the wrong kind of object."""
    return GoldensetError(
        f"retrievers.{name}.callable: {spec} returned {type(returned).__name__}, not {wanted}"
        + (f" ({hint})" if hint else "")
    )


def user_retriever(name: str, settings: CallableSection, module: str, extra: str, kind: str) -> Any:
    """The team's retriever, built by its callable: a ``BaseRetriever`` of ``module`` (the client
    library, of the ``extra``), else one line saying what it returned."""
    assert settings.callable is not None  # the section's validator
    retrievers = needs(module, extra, name)
    retriever = user_object(name, "callable", settings.callable, settings.folder)
    if not isinstance(retriever, retrievers.BaseRetriever):
        hint = "call .as_retriever() on it" if hasattr(retriever, "as_retriever") else ""
        raise not_a(name, settings.callable, retriever, f"a {kind} BaseRetriever", hint)
    return retriever
