"""Plans as the tracker holds them: an epic of a space, whose child tasks are its steps.

A plan is an epic labelled ``space:<SPACE>``; its steps are its ``parent-child`` children, each step's acceptance
criteria are its contract, and ``blocks`` dependencies between steps order them. Nothing here is stored in Bee:
every read asks the tracker, through its ordinary tools (``get``), with the binding's token.

A step's state is derived from what its owner reported to the tracker, and stays a report:

- ``reported_complete``: the step is closed (its owner says it is done; nobody here checked);
- ``held``: its status is blocked, deferred or another that is neither open, in progress nor closed, it is deferred
  past the tracker's now, or the plan itself is held (blocked, deferred or waiting on an unfinished blocker);
- ``claimed``: someone holds it (an assignee, or in progress);
- ``waiting``: open and unclaimed, but some issue it depends on (``blocks`` and the like) is unfinished;
- ``ready``: open, unclaimed and waiting on nothing: what :func:`next_steps` offers.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

import anyio

from bee_contracts import BeeError, ErrorCode
from bee_core.collab.tracker import Tracker

if TYPE_CHECKING:
    from bee_contracts.shapes.core import PlanNextResult, PlanShowResult, PlanShowStep

State = Literal["ready", "waiting", "claimed", "held", "reported_complete"]

#: The label that puts an epic (a plan) in a space.
SPACE_LABEL = "space:"

#: Most steps a plan may have: every read fetches each step, and `bee plan step add` refuses more.
MAX_STEPS = 100

#: Steps fetched from the tracker at once.
_CONCURRENT_READS = 8

#: Dependency types that order steps (the tracker's blocking types).
_ORDERING = ("blocks", "conditional-blocks", "waits-for")


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    contract: str
    status: str
    owner: str | None
    #: Steps of this plan this one depends on.
    after: tuple[str, ...]
    state: State

    def shown(self) -> PlanShowStep:
        return {
            "id": self.id,
            "title": self.title,
            "contract": self.contract,
            "state": self.state,
            "status": self.status,
            "owner": self.owner,
            "after": list(self.after),
        }


@dataclass(frozen=True)
class Plan:
    id: str
    space: str
    title: str
    status: str
    #: In plan order: every step after the steps it depends on, otherwise in the order they were added.
    steps: tuple[Step, ...]


def space_label(space: str) -> str:
    return SPACE_LABEL + space


async def plan_issue(tracker: Tracker, space: str, plan_id: str) -> dict[str, Any]:
    """The tracker's ``get`` of plan ``plan_id``, checked to be a plan of ``space``.

    Raises:
        BeeError: ``not_found`` when there is no such issue, it is not an epic, or it is a plan of another space.
    """
    try:
        got = await tracker.call("get", {"id": plan_id, "comments_limit": 0})
    except BeeError as exc:
        if exc.code is not ErrorCode.NOT_FOUND:
            raise
        raise _no_plan(plan_id, space, f"the tracker has no issue {plan_id}") from None
    issue = got["issue"]
    if issue.get("issue_type") != "epic":
        raise _no_plan(plan_id, space, f"{plan_id} is a {issue.get('issue_type')}, not a plan (an epic)")
    labels = issue.get("labels") or []
    if space_label(space) not in labels:
        spaces = [label.removeprefix(SPACE_LABEL) for label in labels if label.startswith(SPACE_LABEL)]
        where = f"space {spaces[0]!r}" if spaces else "no space"
        raise _no_plan(plan_id, space, f"plan {plan_id} belongs to {where}, not to this checkout's space {space!r}")
    return got


def step_ids(plan_got: dict[str, Any]) -> list[str]:
    """The ids of the steps of a plan, from the tracker's ``get`` of it (its ``parent-child`` dependents)."""
    return [d["id"] for d in plan_got["dependents"] if d.get("type") == "parent-child"]


async def step_of(tracker: Tracker, space: str, step_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The tracker's ``get`` of the plan that step ``step_id`` belongs to, and of the step.

    Raises:
        BeeError: ``not_found`` when there is no such issue, it is no plan's step, or its plan is not of ``space``.
    """
    got = await tracker.call("get", {"id": step_id, "comments_limit": 0})
    parents = [d["id"] for d in got["depends_on"] if d.get("type") == "parent-child"]
    if not parents:
        raise BeeError(
            ErrorCode.NOT_FOUND,
            f"{step_id} is not a step of any plan (it has no parent); add steps with `bee plan step add`",
            details={"stepId": step_id},
        )
    return await plan_issue(tracker, space, parents[0]), got


async def read_plan(tracker: Tracker, space: str, plan_id: str, *, now: str) -> Plan:
    """Plan ``plan_id`` of ``space`` with every step, its contract and its state as of the tracker's ``now``.

    Raises:
        BeeError: ``not_found`` (see :func:`plan_issue`); ``invalid_argument`` when the plan has more than
            :data:`MAX_STEPS` steps; failures of reaching the tracker.
    """
    got = await plan_issue(tracker, space, plan_id)
    issue = got["issue"]
    children = step_ids(got)
    if len(children) > MAX_STEPS or got["dependents_count"] > len(got["dependents"]):
        # More dependents than one `get` lists: with children among them, the plan is far past the bound.
        raise BeeError(
            ErrorCode.INVALID_ARGUMENT,
            f"plan {plan_id} has more steps than the {MAX_STEPS} a plan may have (or more issues depending on it "
            f"than one read of it lists: {got['dependents_count']}); split it into smaller plans",
            details={"planId": plan_id, "limit": MAX_STEPS},
        )
    steps = await _fetch(tracker, children)
    plan_held = issue.get("status") in ("blocked", "deferred") or bool(got.get("blocked_by"))
    members = set(children)
    built = [_step(s, members, plan_held, now) for s in steps]
    return Plan(
        id=plan_id,
        space=space,
        title=str(issue.get("title") or ""),
        status=str(issue.get("status")),
        steps=tuple(_ordered(built)),
    )


def shown(plan: Plan) -> PlanShowResult:
    """The plan as bee_plan_show answers it."""
    return {
        "planId": plan.id,
        "space": plan.space,
        "title": plan.title,
        "status": plan.status,
        "steps": [step.shown() for step in plan.steps],
    }


def next_steps(plan: Plan, limit: int) -> PlanNextResult:
    """The first ``limit`` ready steps in plan order, with counts of everything left out, as bee_plan_next answers."""
    ready = [step for step in plan.steps if step.state == "ready"]
    chosen = ready[:limit]
    left = Counter(step.state for step in plan.steps)
    left["ready"] -= len(chosen)
    return {
        "planId": plan.id,
        "space": plan.space,
        "steps": [{"id": step.id, "title": step.title, "contract": step.contract} for step in chosen],
        "hasMore": len(ready) > len(chosen),
        "omitted": {
            "ready": left["ready"],
            "waiting": left["waiting"],
            "claimed": left["claimed"],
            "held": left["held"],
            "reported_complete": left["reported_complete"],
        },
    }


async def _fetch(tracker: Tracker, ids: Sequence[str]) -> list[dict[str, Any]]:
    """``get`` of each id, a few at a time, in the order of ``ids``."""
    found: dict[str, dict[str, Any]] = {}
    limiter = anyio.CapacityLimiter(_CONCURRENT_READS)

    async def one(step_id: str) -> None:
        async with limiter:
            found[step_id] = await tracker.call("get", {"id": step_id, "comments_limit": 0})

    async with anyio.create_task_group() as group:
        for step_id in ids:
            group.start_soon(one, step_id)
    return [found[step_id] for step_id in ids]


def _step(got: dict[str, Any], members: set[str], plan_held: bool, now: str) -> Step:
    issue = got["issue"]
    after = tuple(
        d["id"]
        for d in got["depends_on"]
        if d.get("type") in _ORDERING and d["id"] in members and d["id"] != issue["id"]
    )
    status = str(issue.get("status"))
    owner = issue.get("assignee") or None
    return Step(
        id=str(issue["id"]),
        title=str(issue.get("title") or ""),
        contract=str(issue.get("acceptance_criteria") or ""),
        status=status,
        owner=owner,
        after=after,
        state=_state(status, owner, bool(got.get("blocked_by")), _deferred(issue.get("defer_until"), now), plan_held),
    )


def _state(status: str, owner: str | None, waiting: bool, deferred: bool, plan_held: bool) -> State:
    if status == "closed":
        return "reported_complete"
    if status not in ("open", "in_progress"):
        return "held"
    if owner is not None or status == "in_progress":
        return "claimed"
    if waiting:
        return "waiting"
    if deferred or plan_held:
        return "held"
    return "ready"


def _deferred(until: Any, now: str) -> bool:
    """Whether ``defer_until`` lies after the tracker's ``now`` (an unreadable time defers, as the safer reading)."""
    if not until:
        return False
    try:
        return datetime.fromisoformat(str(until)) > datetime.fromisoformat(now)
    except (ValueError, TypeError):  # TypeError: a time without an offset, which cannot be compared with now
        return True


def _ordered(steps: list[Step]) -> list[Step]:
    """Steps after the steps they depend on; among those free to go next, the earliest added (``plan.N``) first."""
    by_id = {step.id: step for step in steps}
    waiting_on = {step.id: set(step.after) for step in steps}
    followers: dict[str, list[str]] = {step.id: [] for step in steps}
    for step in steps:
        for before in step.after:
            followers[before].append(step.id)
    free = [(_position(step.id), step.id) for step in steps if not waiting_on[step.id]]
    heapq.heapify(free)
    ordered: list[Step] = []
    while free:
        _, step_id = heapq.heappop(free)
        ordered.append(by_id[step_id])
        for follower in followers[step_id]:
            waiting_on[follower].discard(step_id)
            if not waiting_on[follower]:
                heapq.heappush(free, (_position(follower), follower))
    # The tracker refuses dependency cycles, so every step is placed; this keeps a step even if one slipped in.
    placed = {step.id for step in ordered}
    ordered += [step for step in steps if step.id not in placed]
    return ordered


def _position(step_id: str) -> tuple[int, str]:
    """``plan.7`` sorts as 7 (not after ``plan.10``); other ids after every numbered one, by id."""
    suffix = step_id.rsplit(".", 1)[-1]
    return (int(suffix), step_id) if "." in step_id and suffix.isdigit() else (2**63, step_id)


def _no_plan(plan_id: str, space: str, why: str) -> BeeError:
    return BeeError(
        ErrorCode.NOT_FOUND,
        f"no plan {plan_id} in space {space!r}: {why}; list this space's plans with `bee plan list`",
        details={"planId": plan_id, "space": space},
    )
