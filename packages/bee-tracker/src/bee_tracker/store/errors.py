"""The store's own exceptions: drivers' errors are mapped to these at the boundary, and these to contract codes."""

from __future__ import annotations

from typing import Any

from bee_contracts import BeeError, ErrorCode


class StoreError(BeeError):
    """Base of every store failure; carries its contracts code so handlers can let it propagate."""

    code_for: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, *, details: dict[str, Any] | None = None, outcome_unknown: bool = False) -> None:
        super().__init__(self.code_for, message, details=details, outcome_unknown=outcome_unknown)


class NotFound(StoreError):
    code_for = ErrorCode.NOT_FOUND


class Invalid(StoreError):
    code_for = ErrorCode.INVALID_ARGUMENT


class Conflict(StoreError):
    code_for = ErrorCode.CONFLICT


class Forbidden(StoreError):
    code_for = ErrorCode.FORBIDDEN


class Blocked(StoreError):
    code_for = ErrorCode.BLOCKED


class Busy(StoreError):
    """The database is locked or out of connections; nothing was written, retrying is safe."""

    code_for = ErrorCode.BUSY


class Unavailable(StoreError):
    """The database failed mid-operation; whether a write landed is unknown."""

    code_for = ErrorCode.INTERNAL
