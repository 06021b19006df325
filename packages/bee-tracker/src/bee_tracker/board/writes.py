"""What a lead does from the board, as writes: each form is one tracker tool, run for the signed-in actor.

A form becomes the tool's arguments and goes through :func:`bee_tracker.calls.call`, exactly as an MCP
call does: the tool's schema, its claim rules, compare-and-swap on ``expected_revision`` (the revision the page
showed), the history, the idempotency key (a form submitted twice acts once). There is nothing the board can do
that the tools do not allow; the operator's forced release stays a local command.

A write needs a live session that has the ``board:admin`` scope (every session has it unless it was opened with a
narrower one, such as a `bee tracker open --read-only` link) and the session's CSRF token from the same origin;
otherwise nothing is written. A
refused write shows the issue as it is now, with the tool's reason: "someone else changed it" for a stale revision.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bee_contracts import BeeError, ErrorCode
from bee_tracker.board import csrf
from bee_tracker.board.base import Board, BoardError, issue_url, local_next
from bee_tracker.board.forms import read_form
from bee_tracker.board.pages import issue_view, new_view
from bee_tracker.board.sessions import Session
from bee_tracker.oauth import scopes

STALE = (
    "Someone else changed this issue after you opened the page, so nothing was changed. This is the issue as it is "
    "now; check whether your change still applies and make it again."
)


#: The refusals shown on the issue's own page (or the new-issue form), with the tool's reason.
_SHOWN_IN_PLACE = frozenset({ErrorCode.CONFLICT, ErrorCode.BLOCKED, ErrorCode.FORBIDDEN, ErrorCode.INVALID_ARGUMENT})


def _number(form: dict[str, str], name: str) -> int:
    value = form.get(name, "").strip()
    if not value.lstrip("-").isdigit() or len(value) > 18:
        raise BoardError(400, f"{name} must be a whole number.")
    return int(value)


def _text(form: dict[str, str], name: str) -> str | None:
    value = form.get(name, "")
    return value if value.strip() else None


def _labels(form: dict[str, str]) -> list[str]:
    """Labels typed as a comma-separated list: trimmed, empty ones dropped, each once, in order."""
    return list(dict.fromkeys(label.strip() for label in form.get("labels", "").split(",") if label.strip()))


def _with(args: dict[str, Any], form: dict[str, str], *names: str) -> dict[str, Any]:
    for name in names:
        value = _text(form, name)
        if value is not None:
            args[name] = value
    return args


def _revision(args: dict[str, Any], form: dict[str, str]) -> dict[str, Any]:
    args["expected_revision"] = _number(form, "expected_revision")
    return args


def _create(form: dict[str, str]) -> dict[str, Any]:
    args: dict[str, Any] = {"title": form.get("title", "").strip(), "priority": _number(form, "priority")}
    _with(args, form, "description", "acceptance_criteria", "issue_type", "parent")
    if labels := _labels(form):
        args["labels"] = labels
    return args


#: Each form: the tool it runs and how its fields become the tool's arguments (``id`` comes from the form too).
ACTIONS: dict[str, tuple[str, Callable[[dict[str, str]], dict[str, Any]]]] = {
    "create": ("create", _create),
    "comment": ("add_note", lambda f: {"text": f.get("text", "")}),
    "priority": ("update", lambda f: _revision({"priority": _number(f, "priority")}, f)),
    "labels": ("update", lambda f: _revision({"labels": _labels(f)}, f)),
    "claim": ("claim", lambda f: {}),
    "release": ("release", lambda f: _revision(_with({}, f, "reason"), f)),
    "complete": ("complete", lambda f: _revision(_with({}, f, "summary", "evidence"), f)),
}


async def write(board: Board, request: Request, session: Session) -> Response:
    """POST of any board form (``/board/write/<action>``).

    Raises:
        BoardError: an unknown action, a form that cannot be read or is not from this session's page, a field the
            tool cannot take (the route table says nothing was changed).
    """
    action = request.path_params["action"]
    if action not in ACTIONS:
        raise BoardError(404, f"The board has no action {action[:40]!r}.")
    if not session.allows(scopes.ADMIN):
        raise BoardError(
            403,
            f"Your sign-in lets you read the board, not change it: writes need the {scopes.ADMIN} scope (a link from "
            "`bee tracker open` without --read-only has it).",
        )
    form = await read_form(request)
    if not csrf.same_origin(request) or not csrf.same_token(session.csrf, form.get("csrf")):
        raise BoardError(
            403,
            "This form did not come from a board page of your session (its security token is missing or stale). "
            "Reload the page and try again.",
        )
    tool, convert = ACTIONS[action]
    issue_id = form.get("id", "")
    args = convert(form)
    if tool != "create":
        args["id"] = issue_id
    key = form.get("idempotency_key", "")
    if 8 <= len(key) <= 128:
        args["idempotency_key"] = key
    try:
        data = await board.call(tool, session.actor, args)
    except BeeError as exc:
        if exc.code not in _SHOWN_IN_PLACE:
            raise
        return await _refused(board, request, session, exc, action=action, form=form)
    if tool == "create":
        return RedirectResponse(issue_url(data["id"]), status_code=303)
    return RedirectResponse(local_next(form.get("next"), issue_url(issue_id)), status_code=303)


async def _refused(
    board: Board, request: Request, session: Session, error: BeeError, *, action: str, form: dict[str, str]
) -> Response:
    """The page for a refused write: the form again (create) or the issue as it is now, with the reason."""
    status = BoardError.of(error).status
    if action == "create":
        return await new_view(
            board, request, session, values=form, notice=error.message + " Nothing was created.", status_code=status
        )
    issue_id = form.get("id", "")
    stale = error.code == ErrorCode.CONFLICT and "expected_revision" in (error.details or {})
    notice = STALE if stale else f"{error.message} Nothing was changed."
    return await issue_view(board, request, session, issue_id, status_code=status, notice=notice)
