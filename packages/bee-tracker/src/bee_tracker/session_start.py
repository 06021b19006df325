"""The session-start context of one actor: its claims and their leases, the top of ready for it, and the handoffs
left for it; made from the tracker's tools, for the MCP prompt ``session_start`` and for `bee bd prime`.

Both read it through the same function (:func:`context`) as the actor they serve: the prompt as the token's actor,
in the host; `bee bd prime` on the local store as its ``--actor``, and over HTTP by asking the tracker for the
prompt. A handoff is "for" the actor when it is the newest handoff comment on an issue the actor now holds, or on one
of the ready issues listed for it, and someone else wrote it. The text is bounded (:data:`MAX_CHARS`): long fields
are cut, and so is the whole, with a line saying where to read on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

#: A tool call as the actor: the tool's name and arguments in, its ``data`` out.
Call = Callable[[str, Mapping[str, Any]], dict[str, Any]]

#: The most characters of the whole text (about 4,000 tokens).
MAX_CHARS: Final = 16384
#: How many ready issues are listed by default, and at most.
READY_DEFAULT: Final = 5
READY_MAX: Final = 20
#: How many of the actor's claims are listed (the rest are counted).
CLAIMS_SHOWN: Final = 20
#: The most characters of a title or of one field of a handoff.
FIELD_CHARS: Final = 300
#: How many of an issue's newest comments are searched for a handoff.
COMMENTS_READ: Final = 20

_HANDOFF = "Handoff\n"  # how the handoff tool begins its comment


def _clip(text: Any, limit: int = FIELD_CHARS) -> str:
    words = " ".join(str(text or "").split())  # one line: no line breaks or control characters of the tracker's text
    return words if len(words) <= limit else words[: limit - 1] + "…"


def _line(issue: Mapping[str, Any]) -> str:
    kind = issue.get("issue_type", "task")
    return f"- {issue['id']} [P{issue.get('priority', 2)}] {_clip(issue.get('title'))} ({kind})"


def _lease(got: Mapping[str, Any]) -> str:
    claim = got.get("claim") or {}
    if claim.get("expired"):
        return f"lease expired at {claim.get('lease_expires_at')}: claim it again to keep it"
    if claim.get("lease_expires_at"):
        return f"lease until {claim['lease_expires_at']}, renewed by your claims and writes on it"
    return "no lease: yours until you complete or release it"


def _handoff(got: Mapping[str, Any], actor: str) -> str | None:
    """The newest handoff on the issue that someone other than ``actor`` left, on one line."""
    for comment in reversed(got.get("issue", {}).get("comments") or []):
        text = str(comment.get("text") or "")
        if text.startswith(_HANDOFF) and comment.get("author") != actor:
            parts = [_clip(part) for part in text[len(_HANDOFF) :].splitlines() if part.strip()]
            return f"- {got['issue']['id']}, from {comment.get('author')} at {comment.get('created_at')}: " + "; ".join(
                parts
            )
    return None


def _claims(call: Call, actor: str) -> tuple[list[dict[str, Any]], int]:
    found = call("search", {"status": ["in_progress"], "assignee": actor, "limit": CLAIMS_SHOWN})
    total = int(found.get("total") or len(found["issues"]))
    return [call("get", {"id": issue["id"], "comments_limit": COMMENTS_READ}) for issue in found["issues"]], total


def _ready_for(call: Call, actor: str, limit: int) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` ready issues nobody else holds, and how many are ready in all."""
    page = call("ready", {"limit": min(100, limit * 4)})
    mine = [issue for issue in page["issues"] if issue.get("assignee") in (None, "", actor)][:limit]
    total = int(page.get("total") or len(page["issues"]))
    return [call("get", {"id": issue["id"], "comments_limit": COMMENTS_READ}) for issue in mine], total


def context(call: Call, actor: str, *, ready: int = READY_DEFAULT) -> str:
    """The session-start text for ``actor``: its claims, ready work for it, handoffs for it (Markdown, bounded).

    Raises:
        BeeError: what the tools raise (the tracker is unreachable, the store failed).
    """
    claims, held = _claims(call, actor)
    offered, total = _ready_for(call, actor, max(1, min(READY_MAX, ready)))
    lines = [f"## Your session ({_clip(actor)})", "", "### Your claims"]
    for got in claims:
        lines.append(f"{_line(got['issue'])}: {_lease(got)}")
    if held > len(claims):
        lines.append(f"- and {held - len(claims)} more (search status in_progress, assignee you)")
    if not claims:
        lines.append("- none: take the next with claim (no id), or claim one of these")
    lines += ["", f"### Ready for you ({len(offered)} of {total} ready)"]
    lines += [_line(got["issue"]) for got in offered] or ["- nothing is ready"]
    handoffs = [found for got in (*claims, *offered) if (found := _handoff(got, actor)) is not None]
    lines += ["", "### Handoffs for you", *(handoffs or ["- none"])]
    lines += [
        "",
        "Claim before you start; add notes as you learn; hand off (done, remaining, next) when you stop; complete "
        "with evidence, and claim the next in the same call (complete with claim_next).",
    ]
    return _bounded("\n".join(lines) + "\n")


def _bounded(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    cut = text[: MAX_CHARS - 120].rsplit("\n", 1)[0]
    return f"{cut}\n… cut at {MAX_CHARS} characters: read the rest with search, ready and get.\n"
