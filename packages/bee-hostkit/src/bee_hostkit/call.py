"""The one object a tool handler receives: its typed arguments, its deadline and who is calling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from bee_hostkit.deadline import Deadline, never

ArgsT = TypeVar("ArgsT")


@dataclass(frozen=True, slots=True)
class Call(Generic[ArgsT]):
    """One tool call, after validation.

    ``args`` is the arguments object with the schema's top-level defaults filled in, typed by the TypedDict
    generated from the tool's catalog entry (see :mod:`bee_contracts.shapes`). ``caller`` is the verified identity
    of an authenticated host (the tracker's JWT actor); stdio hosts have none.
    """

    tool: str
    args: ArgsT
    deadline: Deadline
    caller: str | None = None


def local_call(tool: str, args: ArgsT, *, caller: str | None = None) -> Call[ArgsT]:
    """A call made in-process without a deadline (CLI commands and tests that reuse a handler)."""
    return Call(tool, args, never(), caller)
