"""`bee plan …`: write and read the plans of this checkout's space on the tracker.

A plan is a tracker epic labelled ``space:<SPACE>``; a step is a child task whose acceptance criteria are its
contract; ``blocks`` dependencies between steps order them (:mod:`bee_core.collab.plans`). Every command talks to the
tracker over MCP with the binding's token, through the tracker's ordinary tools (create, link, update, get, search),
after checking that the binding is live. The core host only reads plans (bee_plan_show, bee_plan_next).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from bee_core.cli._shared import json_option
from bee_core.cli.collab import COMMAND_SECONDS, existing_instance, note_shipped
from bee_hostkit.options import checkout_option, instance_option

if TYPE_CHECKING:
    from bee_core.collab.binding import Binding
    from bee_core.collab.tracker import Tracker

T = TypeVar("T")

_checkout_option = checkout_option("The checkout whose collaboration binding names the tracker and space.")

_contract_option = click.option("--contract", default=None, help="The step's contract: when it counts as done.")
_contract_file_option = click.option(
    "--contract-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Read the contract from this file (UTF-8) instead.",
)


def _live(
    checkout: Path, instance_root: Path | None, work: Callable[[Tracker, Binding, dict[str, Any]], Awaitable[T]]
) -> T:
    from bee_core.collab import binding as bindings
    from bee_core.collab.lease import run_live
    from bee_hostkit import Deadline

    instance = existing_instance(checkout, instance_root, note=False)
    if bindings.load_optional(instance) is not None:  # without one, run_live's error carries the note
        note_shipped(instance)
    return run_live(instance, Deadline(COMMAND_SECONDS), work)


def _contract(text: str | None, path: Path | None, *, required: bool) -> str | None:
    if text is not None and path is not None:
        raise click.UsageError("give --contract or --contract-file, not both")
    if path is not None:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise click.BadParameter(f"cannot read {path}: {exc}", param_hint="--contract-file") from None
    if text is None and required:
        raise click.UsageError("a step needs a contract: give --contract TEXT or --contract-file FILE")
    return text


@click.group()
def plan() -> None:
    """Write and read the plans of this checkout's collaboration space (see `bee collab join`)."""


@plan.command()
@click.argument("title")
@click.option("--description", default=None, help="What the plan is for.")
@click.option("--priority", type=click.IntRange(0, 4), default=None, help="0 (critical) to 4 (backlog).")
@_checkout_option
@instance_option
@json_option
def create(
    title: str,
    *,
    description: str | None,
    priority: int | None,
    checkout: Path,
    instance_root: Path | None,
    as_json: bool,
) -> None:
    """Create a plan titled TITLE in this checkout's space (a tracker epic); print its id."""
    from bee_core.collab.plans import space_label

    async def work(tracker: Tracker, binding: Binding, lease: dict[str, Any]) -> dict[str, Any]:
        arguments: dict[str, Any] = {"title": title, "issue_type": "epic", "labels": [space_label(binding.space)]}
        if description is not None:
            arguments["description"] = description
        if priority is not None:
            arguments["priority"] = priority
        return await tracker.write("create", arguments)

    created = _live(checkout, instance_root, work)
    click.echo(json.dumps(created, indent=2) if as_json else created["id"])


@plan.command(name="list")
@click.option("--all", "include_closed", is_flag=True, help="Include closed plans.")
@_checkout_option
@instance_option
@json_option
def list_(include_closed: bool, checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """List the plans of this checkout's space, most urgent first (at most 100)."""
    from bee_core.collab.plans import space_label

    async def work(tracker: Tracker, binding: Binding, lease: dict[str, Any]) -> dict[str, Any]:
        arguments: dict[str, Any] = {"labels": [space_label(binding.space)], "issue_type": "epic", "limit": 100}
        if not include_closed:
            arguments["status"] = ["open", "in_progress", "blocked", "deferred"]
        return await tracker.call("search", arguments)

    found = _live(checkout, instance_root, work)
    if as_json:
        click.echo(json.dumps(found, indent=2))
        return
    for issue in found["issues"]:
        click.echo(f"{issue['id']}\t{issue['status']}\t{issue['title']}")
    if found["has_more"]:
        click.echo(f"… {found['total'] - len(found['issues'])} more", err=True)


@plan.command()
@click.argument("plan_id", metavar="PLAN_ID")
@_checkout_option
@instance_option
@json_option
def show(plan_id: str, checkout: Path, instance_root: Path | None, as_json: bool) -> None:
    """Show plan PLAN_ID: its steps in order, with states, owners and contracts (what bee_plan_show returns)."""
    from bee_core.collab import plans

    async def work(tracker: Tracker, binding: Binding, lease: dict[str, Any]) -> plans.Plan:
        return await plans.read_plan(tracker, binding.space, plan_id, now=lease["now"])

    found = _live(checkout, instance_root, work)
    if as_json:
        click.echo(json.dumps(plans.shown(found), indent=2))
        return
    click.echo(f"{found.id}  {found.title}  [{found.status}]  space {found.space!r}")
    for number, step in enumerate(found.steps, start=1):
        owner = f"  ({step.owner})" if step.owner else ""
        after = f"  after {', '.join(step.after)}" if step.after else ""
        click.echo(f"{number:>3}. {step.id}  {step.state}{owner}{after}\n     {step.title}")
        for line in step.contract.splitlines() or ["(no contract)"]:
            click.echo(f"       {line}")


@plan.group()
def step() -> None:
    """Add, order and edit the steps of a plan."""


@step.command()
@click.argument("plan_id", metavar="PLAN_ID")
@click.argument("title")
@_contract_option
@_contract_file_option
@click.option(
    "--after",
    "after",
    multiple=True,
    metavar="STEP_ID",
    help="A step of the same plan this one comes after (a blocks dependency; repeatable).",
)
@click.option("--description", default=None, help="What the step is about.")
@_checkout_option
@instance_option
@json_option
def add(
    plan_id: str,
    title: str,
    *,
    contract: str | None,
    contract_file: Path | None,
    after: tuple[str, ...],
    description: str | None,
    checkout: Path,
    instance_root: Path | None,
    as_json: bool,
) -> None:
    """Add a step titled TITLE to plan PLAN_ID (a child task whose acceptance criteria are the contract)."""
    from bee_contracts import invalid
    from bee_core.collab import plans

    text = _contract(contract, contract_file, required=True)

    async def work(tracker: Tracker, binding: Binding, lease: dict[str, Any]) -> dict[str, Any]:
        got = await plans.plan_issue(tracker, binding.space, plan_id)
        steps = plans.step_ids(got)
        if len(steps) >= plans.MAX_STEPS:
            raise invalid(f"plan {plan_id} already has {len(steps)} steps, the most a plan may have")
        strangers = [other for other in after if other not in steps]
        if strangers:
            raise invalid(f"--after names {', '.join(strangers)}, which are not steps of plan {plan_id}")
        arguments: dict[str, Any] = {
            "title": title,
            "parent": plan_id,
            "issue_type": "task",
            "acceptance_criteria": text,
            "prerequisites": list(dict.fromkeys(after)),
        }
        if description is not None:
            arguments["description"] = description
        return await tracker.write("create", arguments)

    created = _live(checkout, instance_root, work)
    click.echo(json.dumps(created, indent=2) if as_json else created["id"])


@step.command()
@click.argument("step_id", metavar="STEP_ID")
@click.option("--after", "other", required=True, metavar="STEP_ID", help="The step of the same plan it comes after.")
@click.option("--remove", is_flag=True, help="Remove that ordering instead of adding it.")
@_checkout_option
@instance_option
def link(step_id: str, other: str, remove: bool, checkout: Path, instance_root: Path | None) -> None:
    """Order STEP_ID after another step of its plan (a blocks dependency), or with --remove undo that."""
    from bee_contracts import invalid
    from bee_core.collab import plans

    async def work(tracker: Tracker, binding: Binding, lease: dict[str, Any]) -> dict[str, Any]:
        plan_got, _ = await plans.step_of(tracker, binding.space, step_id)
        if other not in plans.step_ids(plan_got):
            raise invalid(f"{other} is not a step of plan {plan_got['issue']['id']}, the plan of {step_id}")
        return await tracker.write(
            "link", {"id": step_id, "target": other, "type": "blocks", "action": "remove" if remove else "add"}
        )

    linked = _live(checkout, instance_root, work)
    if remove:
        click.echo(f"{step_id} no longer comes after {other}")
    else:
        click.echo(f"{step_id} comes after {other}" + ("" if linked["changed"] else " (already)"))


@step.command()
@click.argument("step_id", metavar="STEP_ID")
@click.option("--title", default=None, help="A new title.")
@_contract_option
@_contract_file_option
@_checkout_option
@instance_option
def edit(
    step_id: str,
    *,
    title: str | None,
    contract: str | None,
    contract_file: Path | None,
    checkout: Path,
    instance_root: Path | None,
) -> None:
    """Change the title or the contract of step STEP_ID."""
    from bee_core.collab import plans

    text = _contract(contract, contract_file, required=False)
    if title is None and text is None:
        raise click.UsageError("nothing to change: give --title, --contract or --contract-file")

    async def work(tracker: Tracker, binding: Binding, lease: dict[str, Any]) -> dict[str, Any]:
        await plans.step_of(tracker, binding.space, step_id)
        arguments: dict[str, Any] = {"id": step_id}
        if title is not None:
            arguments["title"] = title
        if text is not None:
            arguments["acceptance_criteria"] = text
        return await tracker.write("update", arguments)

    _live(checkout, instance_root, work)
    click.echo(f"Updated {step_id}")
