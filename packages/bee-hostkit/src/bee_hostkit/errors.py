"""The exception tool handlers raise; the host turns it into the contracts' error envelope."""

from __future__ import annotations

from typing import Any

from bee_contracts import ErrorCode, error_body


class ToolError(Exception):
    """A tool failure with a contracts code and a message that says what to change.

    Raise it anywhere below a handler; the host answers ``isError: true`` with :meth:`body`.
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
        self.retryable = retryable
        self.outcome_unknown = outcome_unknown

    def body(self) -> dict[str, Any]:
        """The structured error envelope for this failure."""
        return error_body(
            self.code,
            self.message,
            retryable=self.retryable,
            outcome_unknown=self.outcome_unknown,
            details=self.details,
        )

    def __repr__(self) -> str:
        return f"ToolError({self.code.value!r}, {self.message!r})"


def invalid(message: str, **details: Any) -> ToolError:
    """Shorthand for the most common failure: a bad argument."""
    return ToolError(ErrorCode.INVALID_ARGUMENT, message, details=details or None)
