"""A store built by the team's own ``module:function`` (the langchain and llamaindex adapters):
its params section, and the import and call of that function, each failure one line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from goldenset.core.errors import GoldensetError
from goldenset.scoring.retrievers.external import CodeFolder
from goldenset.scoring.stores.base import StoreSection, needs

SPEC = r"^[\w.]+:\w+$"  # module:function


class CallableSection(StoreSection):
    """A store built by the team's own ``module:function``, imported from ``folder`` as
    retrievers.external imports its callable."""

    callable: str | None = Field(
        None, pattern=SPEC, description="module:function returning the retriever"
    )
    folder: CodeFolder = "external"
    chunks: str | None = Field(
        None,
        pattern=SPEC,
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
        from goldenset.scoring.query_cache import folder_digest

        return {**super().identity_fields(), "code": folder_digest(Path(self.folder))}


def user_function(name: str, field: str, spec: str, folder: str) -> Callable:
    """The team's ``module:function`` (retrievers.<name>.<field>), imported from ``folder``."""
    from goldenset.scoring.retrievers.external import load_callable

    return load_callable(spec, folder, f"retrievers.{name}", field)


def user_object(name: str, field: str, spec: str, folder: str) -> Any:
    """What the team's ``module:function`` returns, called with no arguments; one line when it
    cannot be imported or fails."""
    function = user_function(name, field, spec, folder)
    try:
        return function()
    except Exception as error:  # the team's code, or the store it opens: any error
        reason = (str(error).strip().splitlines() or [""])[0][:300]
        raise GoldensetError(
            f"retrievers.{name}.{field}: {spec} failed ({type(error).__name__}: {reason})"
        ) from error


def not_a(name: str, spec: str, found: object, wanted: str, hint: str = "") -> GoldensetError:
    """One line for a callable that returned the wrong kind of object."""
    return GoldensetError(
        f"retrievers.{name}.callable: {spec} returned {type(found).__name__}, not {wanted}"
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
