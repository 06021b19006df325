"""The collaboration binding: the tracker space this checkout joined, recorded in the user's settings.

`bee collab join` writes it atomically to ``collab.json`` in the instance's per-user settings folder
(:mod:`bee_contracts.userconfig`; never in the checkout, whose bytes must not choose the tracker or the token) and
`bee collab leave` removes it. A ``collab.json`` inside the instance is never read as a binding
(:mod:`bee_core.trust`). It names the tracker, the space, the lease the tracker holds for this checkout and the
checkout's id — never the token. The token comes, on every use, from the file named at join (``--token-file``,
which must be the user's own and private; re-read each time, so a rotated token is picked up) or else from
``$BEE_TRACKER_TOKEN`` in the environment of whoever talks to the tracker.

The file says what was joined, not whether the lease is still live: only the tracker knows that, and every plan
read asks it (:mod:`bee_core.collab.lease`).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bee_contracts import BeeError, ErrorCode, invalid
from bee_contracts.userconfig import UserSettings
from bee_core import trust
from bee_core.instance import Instance
from bee_core.remote import TokenSource

#: The binding's file in the instance's per-user settings folder.
BINDING_FILE = "collab.json"

#: Where the token comes from when the binding names no token file.
ENV_TOKEN = "BEE_TRACKER_TOKEN"  # noqa: S105 -- the variable's name, not a secret

_JOIN = "bee collab join --tracker URL --space SPACE"


@dataclass(frozen=True)
class Binding:
    """What `bee collab join` recorded: tracker, space, lease and checkout, and where the token comes from."""

    #: The tracker's MCP endpoint, e.g. ``http://127.0.0.1:8765/mcp``.
    tracker: str
    space: str
    lease_id: str
    checkout_id: str
    #: The actor the tracker recorded as the lease's holder (the token's actor at join).
    holder: str
    ttl_seconds: int
    #: The token file named at join (absolute), or None for ``$BEE_TRACKER_TOKEN``.
    token_file: Path | None
    joined_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "tracker": self.tracker,
            "space": self.space,
            "leaseId": self.lease_id,
            "checkoutId": self.checkout_id,
            "holder": self.holder,
            "ttlSeconds": self.ttl_seconds,
            "tokenFile": str(self.token_file) if self.token_file else None,
            "joinedAt": self.joined_at,
        }

    @classmethod
    def from_json(cls, raw: Any) -> Binding:
        """Raises: ValueError: ``raw`` is not a binding this version wrote."""
        if not isinstance(raw, dict):
            raise ValueError("not a JSON object")
        try:
            token_file = raw["tokenFile"]
            binding = cls(
                tracker=str(raw["tracker"]),
                space=str(raw["space"]),
                lease_id=str(raw["leaseId"]),
                checkout_id=str(raw["checkoutId"]),
                holder=str(raw["holder"]),
                ttl_seconds=int(raw["ttlSeconds"]),
                token_file=Path(token_file) if token_file else None,
                joined_at=str(raw["joinedAt"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"missing or malformed field {exc}") from None
        return binding

    def token(self) -> str:
        """The bearer token for the tracker: the token file's content, else ``$BEE_TRACKER_TOKEN``.

        Raises:
            BeeError: ``unauthorized`` when there is none, or it cannot be read, or it is not a bearer token.
        """
        return token_source(self.token_file).read()


def binding_path(instance: Instance) -> Path:
    """Where the instance's binding lives: in the user's settings, not in the instance."""
    return UserSettings(instance.root).path(BINDING_FILE)


def load(instance: Instance) -> Binding:
    """The binding of ``instance``.

    Raises:
        BeeError: ``binding_not_live`` when the instance does not exist, the checkout never joined (or left; a
            binding the checkout ships does not count), or the binding file is damaged — each saying what to run;
            ``forbidden`` when the binding file or its folder is not private to the user.
    """
    found = load_optional(instance)
    if found is None:
        prefix = "" if instance.exists else f"no Bee instance at {instance.root} (run `bee init`), so "
        details: dict[str, Any] = {"binding": None}
        ships = trust.find(instance, trust.BINDING)
        if ships is not None:
            details |= {"shipped": str(ships.path), "adopt": trust.BINDING.command}
        raise BeeError(
            ErrorCode.BINDING_NOT_LIVE,
            f"{prefix}this checkout has no collaboration binding; join a space with `{_JOIN}`"
            f"{'; ' + ships.note() if ships else ''}",
            details=details,
        )
    return found


def load_optional(instance: Instance) -> Binding | None:
    """The binding of ``instance``, or None when there is none.

    Raises:
        BeeError: ``binding_not_live`` when the binding file exists but is damaged; ``forbidden`` when it or its
            folder is not private to the user.
    """
    data = UserSettings(instance.root).read(BINDING_FILE)
    return None if data is None else parse(binding_path(instance), data)


def parse(path: Path, data: bytes) -> Binding:
    """The binding in ``data`` (``path`` names it in messages).

    Raises:
        BeeError: ``binding_not_live`` when it is not a binding this version wrote.
    """
    try:
        return Binding.from_json(json.loads(data.decode("utf-8")))
    except (ValueError, UnicodeDecodeError) as exc:
        raise _damaged(path, str(exc)) from None


def save(instance: Instance, binding: Binding) -> Path:
    """Record ``binding`` in the user's settings: readers see the old binding or the new one, never a part.

    Raises:
        BeeError: ``forbidden`` when the user's settings folder is not private to them.
    """
    data = json.dumps(binding.to_json(), indent=2) + "\n"
    return UserSettings(instance.root).write(BINDING_FILE, data.encode("utf-8"))


def remove(instance: Instance) -> bool:
    """Remove the binding of ``instance``; return whether there was one."""
    return UserSettings(instance.root).remove(BINDING_FILE)


def new_checkout_id() -> str:
    """A fresh id for this checkout in a space: random, so it says nothing about the machine or its paths."""
    return f"chk-{secrets.token_hex(8)}"


def checked_tracker_url(url: str) -> str:
    """``url`` when it is an absolute http(s) URL without credentials (the tracker's MCP endpoint).

    Raises:
        BeeError: ``invalid_argument`` saying what is wrong with it.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid(f"the tracker URL must be http(s)://HOST[:PORT]/mcp, got {url[:200]!r}", argument="tracker")
    if parts.username or parts.password:
        raise invalid(
            "the tracker URL must not carry credentials; give the token with --token-file or $BEE_TRACKER_TOKEN",
            argument="tracker",
        )
    return url


def token_source(token_file: Path | None) -> TokenSource:
    """Where the tracker token is read from, on every use: ``token_file``, else ``$BEE_TRACKER_TOKEN``."""
    if token_file is not None:
        return TokenSource(
            file=token_file,
            whose="the tracker",
            remedy="write the token there (for a local tracker, `bee tracker token --actor YOU` makes one), or join "
            "again with another --token-file",
        )
    return TokenSource(
        env=ENV_TOKEN,
        whose="the tracker",
        remedy="set it (for example from `bee tracker token --actor YOU`) in the environment that talks to the "
        "tracker, or join with --token-file FILE",
    )


def _damaged(path: Path, problem: str) -> BeeError:
    return BeeError(
        ErrorCode.BINDING_NOT_LIVE,
        f"the collaboration binding {path} is damaged ({problem}); join again with `{_JOIN}`",
        details={"binding": str(path)},
    )
