"""The closed list of tool error codes and the one error envelope every host returns.

A failed tool call is a result with ``isError: true`` whose structured body is
``{error, code, retryable, outcome_unknown, details?}``. Protocol faults (malformed JSON, unknown tools, frames over
the limit) are JSON-RPC errors instead and never use these codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


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
        "A path resolves outside the host's root (`..`, absolute, symlink, `.git`).", False
    ),
    ErrorCode.HASH_MISMATCH: CodeInfo("Content does not match the pinned or recorded sha256.", False),
    ErrorCode.BUDGET_EXCEEDED: CodeInfo(
        "The complete answer does not fit budgetBytes; nothing partial was delivered.", False
    ),
    ErrorCode.RESULT_TOO_LARGE: CodeInfo("The complete answer exceeds the 256 KiB result limit.", False),
    ErrorCode.DEADLINE_EXCEEDED: CodeInfo("The call ran past its deadline; nothing partial was delivered.", True),
    ErrorCode.NOT_INITIALIZED: CodeInfo("No Bee instance is initialised here; run `bee init`.", False),
    ErrorCode.BRIDGE_NOT_CONFIGURED: CodeInfo("No skill bridge is configured for this instance.", False),
    ErrorCode.BINDING_NOT_LIVE: CodeInfo("The checkout's collaboration binding is missing or expired.", False),
    ErrorCode.CONFLICT: CodeInfo("The object changed since the revision given (compare-and-swap failed).", False),
    ErrorCode.BUSY: CodeInfo("The host is at its admission limit; retry after a short wait.", True),
    ErrorCode.UNAUTHORIZED: CodeInfo("No valid credentials were presented.", False),
    ErrorCode.FORBIDDEN: CodeInfo("The caller may not do this (for example, release another actor's claim).", False),
    ErrorCode.BLOCKED: CodeInfo("The task is blocked by a dependency, open children or a gate.", False),
    ErrorCode.UNSUPPORTED: CodeInfo("The input is valid but of a kind this tool does not handle.", False),
    ErrorCode.INTERNAL: CodeInfo("An unexpected fault in the host; the message is safe to show.", True),
}


def error_body(
    code: ErrorCode,
    message: str,
    *,
    retryable: bool | None = None,
    outcome_unknown: bool = False,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build the structured body of a failed tool result (the one error envelope)."""
    body: dict[str, Any] = {
        "error": message,
        "code": code.value,
        "retryable": CODES[code].retryable if retryable is None else retryable,
        "outcome_unknown": outcome_unknown,
    }
    if details:
        body["details"] = details
    return body


def as_dict() -> dict[str, dict[str, Any]]:
    """The codes as plain data, in the form the contract digest covers."""
    return {code.value: {"summary": info.summary, "retryable": info.retryable} for code, info in CODES.items()}
