"""The closed list of tool error codes and the one error envelope every host returns.

A failed tool call is a result with ``isError: true`` whose text content is the JSON envelope
``{error, code, retryable, outcome_unknown, details?}`` and which carries no ``structuredContent`` (clients built on
the TypeScript SDK check structuredContent against the tool's success outputSchema even on errors). Protocol faults
(malformed JSON, unknown tools, frames over the limit) are JSON-RPC errors instead and never use these codes.

:class:`BeeError` is the one coded exception: domain code anywhere in Bee raises it (or maps its own exceptions to
it in one place per package), and hosts and CLI commands turn it into the envelope or a message.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NotRequired, TypedDict


class ErrorCode(StrEnum):
    """Every code a Bee tool may return. Adding one changes the contract digest."""

    INVALID_ARGUMENT = "invalid_argument"
    NOT_FOUND = "not_found"
    OUTSIDE_ROOT = "outside_root"
    HASH_MISMATCH = "hash_mismatch"
    BUDGET_EXCEEDED = "budget_exceeded"
    RESULT_TOO_LARGE = "result_too_large"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    NOT_INITIALIZED = "not_initialized"
    BRIDGE_NOT_CONFIGURED = "bridge_not_configured"
    BINDING_NOT_LIVE = "binding_not_live"
    CONFLICT = "conflict"
    BUSY = "busy"
    UNAVAILABLE = "unavailable"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    BLOCKED = "blocked"
    UNSUPPORTED = "unsupported"
    INTERNAL = "internal"


@dataclass(frozen=True)
class CodeInfo:
    """What a code means and whether retrying the same call can succeed."""

    summary: str
    retryable: bool


CODES: dict[ErrorCode, CodeInfo] = {
    ErrorCode.INVALID_ARGUMENT: CodeInfo(
        "An argument is malformed or out of range; the message says what to change.", False
    ),
    ErrorCode.NOT_FOUND: CodeInfo("The named file, symbol, artifact, task or other object does not exist.", False),
    ErrorCode.OUTSIDE_ROOT: CodeInfo(
        "A path leaves the host's root (`..`, absolute, a symlink out) or names what is never served (`.git`, "
        "`.bee`, the instance root).",
        False,
    ),
    ErrorCode.HASH_MISMATCH: CodeInfo(
        "Content does not match the pinned or recorded sha256 (or the size recorded with it).", False
    ),
    ErrorCode.BUDGET_EXCEEDED: CodeInfo(
        "The complete answer does not fit budgetBytes; nothing partial was delivered.", False
    ),
    ErrorCode.RESULT_TOO_LARGE: CodeInfo(
        "The complete answer exceeds the 256 KiB result limit, or a remote server's answer exceeds what Bee reads "
        "of one (`remoteAnswerMaxBytes`); nothing partial was delivered.",
        False,
    ),
    ErrorCode.DEADLINE_EXCEEDED: CodeInfo("The call ran past its deadline; nothing partial was delivered.", True),
    ErrorCode.NOT_INITIALIZED: CodeInfo("No Bee instance is initialised here; run `bee init`.", False),
    ErrorCode.BRIDGE_NOT_CONFIGURED: CodeInfo("No skill bridge is configured for this instance.", False),
    ErrorCode.BINDING_NOT_LIVE: CodeInfo("The checkout's collaboration binding is missing or expired.", False),
    ErrorCode.CONFLICT: CodeInfo("The object changed since the revision given (compare-and-swap failed).", False),
    ErrorCode.BUSY: CodeInfo("The host is at its admission limit; retry after a short wait.", True),
    ErrorCode.UNAVAILABLE: CodeInfo(
        "A service the call depends on (a skill provider, a tracker) could not be reached or did not answer in "
        "time; the message names it. Retry later.",
        True,
    ),
    ErrorCode.UNAUTHORIZED: CodeInfo("No valid credentials were presented.", False),
    ErrorCode.FORBIDDEN: CodeInfo("The caller may not do this (for example, release another actor's claim).", False),
    ErrorCode.BLOCKED: CodeInfo("The task is blocked by a dependency, open children or a gate.", False),
    ErrorCode.UNSUPPORTED: CodeInfo("The input is valid but of a kind this tool does not handle.", False),
    ErrorCode.INTERNAL: CodeInfo("An unexpected fault in the host; the message is safe to show.", True),
}


class ErrorBody(TypedDict):
    """The error envelope, as JSON in the text content of a failed tool result."""

    error: str
    code: str
    retryable: bool
    outcome_unknown: bool
    details: NotRequired[dict[str, Any]]


class BeeError(Exception):
    """A failure with a contracts code and a message that says what to change.

    Raise it anywhere below a tool handler or CLI command: a host answers ``isError: true`` with :meth:`body`, a
    command prints the message. ``retryable`` defaults to the code's; ``outcome_unknown`` says a write may or may
    not have landed.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        retryable: bool | None = None,
        outcome_unknown: bool = False,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details
        self.retryable = CODES[code].retryable if retryable is None else retryable
        self.outcome_unknown = outcome_unknown

    def body(self) -> ErrorBody:
        """The error envelope for this failure."""
        body: ErrorBody = {
            "error": self.message,
            "code": self.code.value,
            "retryable": self.retryable,
            "outcome_unknown": self.outcome_unknown,
        }
        if self.details:
            body["details"] = self.details
        return body

    def __repr__(self) -> str:
        return f"BeeError({self.code.value!r}, {self.message!r})"


def invalid(message: str, **details: Any) -> BeeError:
    """Shorthand for the most common failure: a bad argument (``details`` name what was wrong)."""
    return BeeError(ErrorCode.INVALID_ARGUMENT, message, details=details or None)


def from_envelope(text: str, *, unreadable: str) -> BeeError:
    """The failure a host's error envelope (a failed tool result's text) carries: its code, message, details and
    flags kept, as a client of a Bee host re-raises it; ``unreadable`` is the message when ``text`` is no envelope."""
    import json

    try:
        body = json.loads(text)
        code = ErrorCode(body["code"])
        message = str(body["error"])
    except (ValueError, KeyError, TypeError):
        return BeeError(ErrorCode.INTERNAL, unreadable)
    details = body.get("details") if isinstance(body.get("details"), dict) else None
    return BeeError(
        code,
        message,
        details=details,
        retryable=bool(body.get("retryable", False)),
        outcome_unknown=bool(body.get("outcome_unknown", False)),
    )


def as_dict() -> dict[str, dict[str, Any]]:
    """The codes as plain data, in the form the contract digest covers."""
    return {code.value: {"summary": info.summary, "retryable": info.retryable} for code, info in CODES.items()}
