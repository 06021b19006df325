"""The one exception the artifact store raises; tool handlers map it to the contracts' error envelope.

The store is shared by the CLI and the MCP tools. It raises this light exception (it needs only bee-contracts) so
that `bee artifact …` commands do not pay for importing the MCP host runtime.
"""

from __future__ import annotations

from typing import Any

from bee_contracts import ErrorCode


class ArtifactError(Exception):
    """An artifact operation failed with a contracts ``code`` and a message that says what to change."""

    def __init__(self, code: ErrorCode, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def __repr__(self) -> str:
        return f"ArtifactError({self.code.value!r}, {self.message!r})"
