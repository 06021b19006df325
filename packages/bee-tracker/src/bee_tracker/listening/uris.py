"""The tracker's resource URIs: an issue, the ready queue under a filter, an actor's claims; parsed and written.

``bee://tracker/issues/{id}`` is what ``get`` answers for one issue; ``bee://tracker/ready`` is what ``ready``
answers, its filter in the query (``priority``, ``label`` once per label, ``limit``: ``ready``'s own arguments);
``bee://tracker/claims/{actor}`` lists the claims ``actor`` holds; ``bee://tracker/log`` is the newest entries of the
store-wide audit log under ``bee tracker log``'s filters (read, not listened to). Path parts are percent-encoded (an
actor is often an e-mail address). A URI that is none of these, or whose filter ``ready`` would refuse, is refused
with a message that says what to change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from bee_contracts import BeeError, invalid

PREFIX: Final = "bee://tracker/"
ISSUE: Final = PREFIX + "issues/"
READY: Final = PREFIX + "ready"
CLAIMS: Final = PREFIX + "claims/"
LOG: Final = PREFIX + "log"

#: The templates ``resources/templates/list`` names (RFC 6570), one per kind of resource.
TEMPLATES: Final = (
    (ISSUE + "{id}", "issue", "One issue as get shows it: fields, claim and lease, dependencies, notes."),
    (READY + "{?priority,label*,limit}", "ready", "The ready queue under ready's filters, in ready's order."),
    (CLAIMS + "{actor}", "claims", "The claims an actor holds, with their leases."),
    (
        LOG + "{?actor,issue,tool,since,limit}",
        "log",
        "The newest entries of the store-wide audit log (who, which tool, which issue, what changed, when, which "
        "replica), oldest first; read only, not listened to.",
    ),
)
#: ``ready``'s bounds on what a filter may say (its inputSchema).
_MAX_PRIORITY: Final = 4
_MAX_LIMIT: Final = 100
_MAX_LABELS: Final = 50
#: The most audit-log entries one read returns, and how many without ``limit``.
MAX_LOG_LIMIT: Final = 100
DEFAULT_LOG_LIMIT: Final = 20


@dataclass(frozen=True)
class Issue:
    issue_id: str


@dataclass(frozen=True)
class Ready:
    """The ready queue under a filter: ``ready``'s arguments."""

    priority: int | None = None
    labels: tuple[str, ...] = ()
    limit: int | None = None

    def arguments(self) -> dict[str, object]:
        """The filter as ``ready``'s arguments."""
        args: dict[str, object] = {}
        if self.priority is not None:
            args["priority"] = self.priority
        if self.labels:
            args["labels"] = list(self.labels)
        if self.limit is not None:
            args["limit"] = self.limit
        return args


@dataclass(frozen=True)
class Claims:
    actor: str


@dataclass(frozen=True)
class Log:
    """The newest ``limit`` audit-log entries under ``bee tracker log``'s filters (``since``: RFC 3339, as written)."""

    actor: str | None = None
    issue: str | None = None
    tool: str | None = None
    since: str | None = None
    limit: int = DEFAULT_LOG_LIMIT


Resource = Issue | Ready | Claims | Log


def issue_uri(issue_id: str) -> str:
    return ISSUE + quote(issue_id, safe="")


def claims_uri(actor: str) -> str:
    return CLAIMS + quote(actor, safe="")


def _number(name: str, text: str, top: int, bottom: int) -> int:
    if not text.isdigit() or not bottom <= int(text) <= top:
        raise invalid(f"{name} in a ready URI must be a whole number from {bottom} to {top}, not {text!r}")
    return int(text)


def _ready(query: str) -> Ready:
    priority = limit = None
    labels: list[str] = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name == "priority":
            priority = _number(name, value, _MAX_PRIORITY, 0)
        elif name == "limit":
            limit = _number(name, value, _MAX_LIMIT, 1)
        elif name == "label" and value and value not in labels:
            labels.append(value)
        else:
            raise invalid(f"a ready URI takes priority, label (once per label) and limit, not {name!r}={value!r}")
    if len(labels) > _MAX_LABELS:
        raise invalid(f"a ready URI names at most {_MAX_LABELS} labels")
    return Ready(priority, tuple(labels), limit)


def _log(query: str) -> Log:
    from bee_tracker.model import epoch, timestamp

    found: dict[str, str] = {}
    limit = DEFAULT_LOG_LIMIT
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name == "limit":
            limit = _number(name, value, MAX_LOG_LIMIT, 1)
        elif name in {"actor", "issue", "tool", "since"} and value and name not in found:
            found[name] = value
        else:
            raise invalid(f"a log URI takes actor, issue, tool, since and limit, each once, not {name!r}={value!r}")
    if "since" in found:
        seconds = epoch(found["since"])
        if seconds is None:
            raise invalid(
                f"since in a log URI is an RFC 3339 time such as 2026-05-01T09:00:00Z, not {found['since']!r}"
            )
        found["since"] = timestamp(seconds)
    return Log(limit=limit, **found)


def _tail(uri: str, base: str, what: str) -> str:
    tail = unquote(uri[len(base) :])
    if not tail or "/" in uri[len(base) :] or "?" in uri:
        raise invalid(f"{base}{{{what}}} names one {what} (percent-encoded), not {uri!r}")
    return tail


def parse(uri: str) -> Resource:
    """The resource ``uri`` names.

    Raises:
        BeeError: ``invalid_argument`` for a URI the tracker does not serve, naming the forms it does.
    """
    if uri.startswith(ISSUE):
        return Issue(_tail(uri, ISSUE, "id"))
    if uri.startswith(CLAIMS):
        return Claims(_tail(uri, CLAIMS, "actor"))
    if uri == READY or uri.startswith(READY + "?"):
        return _ready(urlsplit(uri).query)
    if uri == LOG or uri.startswith(LOG + "?"):
        return _log(urlsplit(uri).query)
    raise unknown(uri)


def unknown(uri: str) -> BeeError:
    forms = ", ".join(template for template, _, _ in TEMPLATES)
    return invalid(f"the tracker serves no resource {uri!r}; it serves {forms} and the skill's skill:// files")
