"""Whether this checkout's binding is live: asked of the tracker, whose clock decides, every time.

Reading a lease never renews it; only `bee collab join|renew|keepalive` (the ``lease_join``/``lease_renew`` tools)
do, and plan reads never call those.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bee_contracts import BeeError, ErrorCode
from bee_core.collab import binding as bindings
from bee_core.collab.binding import Binding
from bee_core.collab.tracker import Tracker, run
from bee_core.instance import Instance
from bee_hostkit import Deadline

T = TypeVar("T")

_REJOIN = "join again with `bee collab join --tracker URL --space SPACE`, and keep the lease alive while you work "
_REJOIN += "(`bee collab keepalive`)"


async def require_live(tracker: Tracker, binding: Binding) -> dict[str, Any]:
    """The binding's lease as the tracker reports it now (its ``lease_get`` data), when it is live.

    Raises:
        BeeError: ``binding_not_live`` when the lease expired, was left, is unknown to the tracker or is not this
            checkout's; and any failure of reaching the tracker (see :mod:`bee_core.collab.tracker`).
    """
    try:
        lease = await tracker.call("lease_get", {"id": binding.lease_id})
    except BeeError as exc:
        if exc.code is not ErrorCode.NOT_FOUND:
            raise
        raise _not_live(binding, f"the tracker no longer knows its lease {binding.lease_id}") from None
    if (lease.get("space"), lease.get("checkout_id")) != (binding.space, binding.checkout_id):
        raise _not_live(binding, f"lease {binding.lease_id} on the tracker belongs to another binding")
    if lease.get("live") is not True:
        how = f"was left at {lease['left_at']}" if lease.get("left_at") else f"expired at {lease.get('expires_at')}"
        raise _not_live(binding, f"its lease {how} (the tracker's clock, now {lease.get('now')})")
    return lease


def run_live(
    instance: Instance, deadline: Deadline, work: Callable[[Tracker, Binding, dict[str, Any]], Awaitable[T]]
) -> T:
    """Run ``work`` against the tracker of ``instance``'s binding, after checking with it that the binding is live.

    ``work`` receives the tracker, the binding and the live lease (whose ``now`` is the tracker's clock).

    Raises:
        BeeError: ``binding_not_live`` when there is no binding or it is not live; ``unauthorized`` without a
            usable token; whatever ``work`` raises; failures of reaching the tracker.
    """
    binding = bindings.load(instance)
    token = binding.token()

    async def checked(tracker: Tracker) -> T:
        lease = await require_live(tracker, binding)
        return await work(tracker, binding, lease)

    return run(binding.tracker, token, deadline, checked)


def _not_live(binding: Binding, why: str) -> BeeError:
    return BeeError(
        ErrorCode.BINDING_NOT_LIVE,
        f"this checkout's binding to space {binding.space!r} is not live: {why}; {_REJOIN}",
        details={"space": binding.space, "leaseId": binding.lease_id, "tracker": binding.tracker},
    )
