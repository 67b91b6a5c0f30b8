"""SDK errors told clearly: `translate` turns an exception of a vendor SDK (anthropic, openai) into
one GoldensetError line naming what to fix, in the words of the provider's ServiceContext
(goldenset.generation.interface, beside SdkProvider).

Both SDKs share the same exception hierarchy (by name), so one mapping serves both. By the time
an error gets here the SDK has already retried what is worth retrying (429, 5xx, 529, timeouts).
"""

from __future__ import annotations

from types import ModuleType

from goldenset.core.errors import GoldensetError
from goldenset.generation.interface import ServiceContext

MAX_SERVER_MESSAGE = 200


def _server_message(error: Exception, secret: str | None) -> str:
    message = str(getattr(error, "message", "") or error)
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            message = inner["message"]
    message = " ".join(message.split())
    if secret:
        message = message.replace(secret, "***")
    return message[:MAX_SERVER_MESSAGE]


def translate(sdk: ModuleType, error: Exception, ctx: ServiceContext) -> GoldensetError:
    """The GoldensetError for an SDK exception (the caller raises it `from None`)."""
    retries = f"after {ctx.max_retries} retries (generate.max_retries)"
    detail = _server_message(error, ctx.secret)
    if isinstance(error, sdk.APITimeoutError):
        return GoldensetError(
            f"{ctx.service} at {ctx.url} gave no answer within generate.request_timeout="
            f"{ctx.timeout:g}s, {retries}: raise generate.request_timeout or check the server"
        )
    if isinstance(error, sdk.APIConnectionError):
        return GoldensetError(
            f"cannot reach {ctx.service} at {ctx.url}: set {ctx.url_hint} to a running server"
        )
    if isinstance(error, sdk.AuthenticationError):
        return GoldensetError(f"{ctx.service} rejected the API key (401): check {ctx.key_variable}")
    if isinstance(error, sdk.PermissionDeniedError):
        return GoldensetError(
            f"{ctx.service} refused access (403) to model {ctx.model!r}: check {ctx.key_variable} "
            f"or set generate.model ({detail})"
        )
    if isinstance(error, sdk.NotFoundError):
        hint = "set generate.model to a model it serves"
        if ctx.url_hint.startswith("generate."):
            hint += f" and check {ctx.url_hint} (usually ends in /v1)"
        return GoldensetError(f"{ctx.service} has no model {ctx.model!r} (404: {detail}): {hint}")
    if isinstance(error, sdk.RateLimitError):
        return GoldensetError(
            f"{ctx.service} still rate-limits us (429) {retries}: lower generate.concurrency "
            "or raise generate.max_retries"
        )
    if isinstance(error, sdk.APIStatusError) and error.status_code >= 500:
        return GoldensetError(
            f"{ctx.service} failed with HTTP {error.status_code} ({detail}) {retries}: "
            "try again later (answers so far are cached) or raise generate.max_retries"
        )
    if isinstance(error, sdk.BadRequestError):
        return GoldensetError(
            f"{ctx.service} rejected the request (400: {detail}): check generate.model, "
            "generate.max_tokens and generate.temperature"
        )
    if isinstance(error, sdk.APIStatusError):
        return GoldensetError(f"{ctx.service} answered HTTP {error.status_code}: {detail}")
    return GoldensetError(f"{ctx.service} call failed: {type(error).__name__}: {detail}")
