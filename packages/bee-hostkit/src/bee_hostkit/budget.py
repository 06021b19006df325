"""The one budget helper: tools that take ``budgetBytes`` measure their whole serialized result with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from bee_contracts import BeeError, ErrorCode
from bee_contracts.limits import MAX_RESULT_BYTES
from bee_hostkit.results import result_bytes


class Budget:
    """A byte budget over one tool result (see :mod:`bee_hostkit.results` for what is measured)."""

    def __init__(self, limit: int) -> None:
        self.limit = min(limit, MAX_RESULT_BYTES)

    def measure(self, structured: Mapping[str, Any]) -> int:
        """The exact size of the result carrying ``structured``."""
        return result_bytes(structured)

    def require(self, structured: Mapping[str, Any], *, what: str = "the complete answer", hint: str = "") -> int:
        """Return the size of ``structured``'s result, or fail with ``budget_exceeded``.

        Raises:
            BeeError: ``budget_exceeded`` with the sizes in details; nothing partial is delivered.
        """
        size = self.measure(structured)
        if size > self.limit:
            raise self.exceeded(size, what=what, hint=hint)
        return size

    def exceeded(self, size: int, *, what: str = "the complete answer", hint: str = "") -> BeeError:
        """The ``budget_exceeded`` error for a result of ``size`` bytes."""
        advice = hint or "Raise budgetBytes or ask for less"
        return BeeError(
            ErrorCode.BUDGET_EXCEEDED,
            f"{what} needs {size} bytes but budgetBytes is {self.limit}; nothing partial was delivered. {advice}.",
            details={"budgetBytes": self.limit, "resultBytes": size, "overByBytes": size - self.limit},
        )


SizedT = TypeVar("SizedT", bound=Mapping[str, Any])


def with_size(structured: SizedT, key: str = "resultBytes", *, size_at_zero: int | None = None) -> SizedT:
    """Set ``structured[key]`` to the size of the result that carries it (a fixed point: the number counts too).

    ``size_at_zero`` is the exact size of that result with ``key`` set to 0, for a caller that counted it from
    parts it had already measured (see :func:`bee_hostkit.results.list_bytes`); without it, the result is
    serialized to measure it.
    """
    target = cast(dict[str, Any], structured)  # a result TypedDict, which is a dict at run time
    target[key] = 0
    with_zero = result_bytes(structured) if size_at_zero is None else size_at_zero
    target[key] = own_size(with_zero)
    return structured


def own_size(with_zero: int) -> int:
    """The size of a result that states its own size, from its size while the number stated is 0."""
    # The number appears twice (structuredContent and the text copy), unescaped: each extra digit costs 2 bytes.
    digits = 1
    while len(str(with_zero + 2 * (digits - 1))) != digits:
        digits += 1
    return with_zero + 2 * (digits - 1)
