"""Who wrote an evidence folder: the MAC `bee design capture` puts in ``evidence.json``, from a key of this root.

The key is 32 random bytes Bee creates on the first capture in a root. It is a per-user setting of the root's
instance (:mod:`bee_contracts.userconfig`: ``~/.config/bee/instances/<key>/design-evidence-key``, 0600 in 0700
folders, refused when it is not the user's own or others may read or write it), never a file in the checkout: a
checkout — or a zip of one, or a clone made under ``umask 077`` — can carry any file in its ``.bee``, but it
cannot bring a key of its author's into the user's configuration. No tool serves it: it is outside every root.

The MAC is HMAC-SHA256 over the canonical JSON of ``evidence.json`` without its ``mac`` field (keys sorted, no
spaces, UTF-8), so it covers the browser, the settings and every screenshot's recorded sha256 and size — and,
through those, the images. It is written as ``hmac-sha256:<key id>:<hex>``; the key id (a MAC of a fixed text)
tells evidence sealed elsewhere from evidence changed here, and reveals nothing of the key. Evidence without a
valid MAC from this root's key is not Bee's as far as this root can tell: written by hand, copied from another
machine or checkout, or changed after capture.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any, Final

from bee_contracts import BeeError, ErrorCode
from bee_contracts.userconfig import UserSettings
from bee_design.layout import DesignFiles

#: The field of ``evidence.json`` that holds the MAC.
MAC_FIELD: Final = "mac"
#: The key's name among the instance's per-user settings.
KEY_SETTING: Final = "design-evidence-key"
_ALGORITHM: Final = "hmac-sha256"
_KEY_BYTES: Final = 32
# Domain separation: this key's MACs mean "Bee's evidence.json, format 1" and nothing else.
_CONTEXT: Final = b"bee design evidence.json v1\n"
_KEY_ID_TEXT: Final = b"bee design evidence key id"


def _settings(files: DesignFiles) -> UserSettings:
    return UserSettings(files.instance)


def _parsed(raw: bytes, settings: UserSettings) -> bytes:
    try:
        key = bytes.fromhex(raw.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != _KEY_BYTES:
        where = settings.path(KEY_SETTING)
        raise BeeError(
            ErrorCode.FORBIDDEN,
            f"the evidence key {where} is damaged (expected {2 * _KEY_BYTES} hex digits), so Bee will not use it; "
            "remove it and capture again (evidence sealed with it then reads unverified)",
            details={"key": str(where)},
        )
    return key


def read_key(files: DesignFiles) -> bytes | None:
    """This root's evidence key, or None when there is none yet; never creates one.

    Raises:
        BeeError: ``forbidden`` for a key (or a folder above it) that is not the user's, that group or others may
            read or write, that is a symlink or special file, or that is damaged. (A ``.bee`` that is a symlink out
            of the root was refused when ``files`` was made.)
    """
    settings = _settings(files)
    raw = settings.read(KEY_SETTING, secret=True)
    return None if raw is None else _parsed(raw, settings)


def ensure_key(files: DesignFiles) -> bytes:
    """This root's evidence key, created (0600, among the instance's per-user settings) when there is none.

    Two captures starting together agree on one key: the second finds the first's (:meth:`UserSettings.create`).

    Raises:
        BeeError: as :func:`read_key` for a key that is there but refused.
    """
    settings = _settings(files)
    fresh = secrets.token_bytes(_KEY_BYTES).hex().encode("ascii") + b"\n"
    return _parsed(settings.create(KEY_SETTING, fresh, secret=True), settings)


def _key_id(key: bytes) -> str:
    return hmac.new(key, _KEY_ID_TEXT, hashlib.sha256).hexdigest()[:16]


def _canonical(record: dict[str, Any]) -> bytes:
    body = {name: value for name, value in record.items() if name != MAC_FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def sign(record: dict[str, Any], key: bytes) -> str:
    """The MAC of an ``evidence.json`` record (its ``mac`` field, if any, left out), as ``evidence.json`` holds it."""
    digest = hmac.new(key, _CONTEXT + _canonical(record), hashlib.sha256).hexdigest()
    return f"{_ALGORITHM}:{_key_id(key)}:{digest}"


def unverified(files: DesignFiles, record: dict[str, Any]) -> str | None:
    """Why ``record`` (a parsed, schema-checked ``evidence.json``) is not vouched for by this root's key; None
    when its MAC is valid. The reason reads after the file's name and says what to do."""
    again = "capture again here with `bee design capture`"
    given = record.get(MAC_FIELD)
    if not isinstance(given, str):
        return (
            f"carries no MAC, so nothing vouches that `bee design capture` wrote it in this root (it may have been "
            f"written by hand, or by a Bee before MACs); {again}"
        )
    try:
        key = read_key(files)
    except BeeError as exc:
        return f"cannot be verified: {exc.message}"
    if key is None:
        return (
            "cannot be verified: this root has no evidence key yet, so nothing was captured here; "
            f"evidence captured on another machine or in another checkout reads unverified — {again}"
        )
    expected = sign(record, key)
    if hmac.compare_digest(given, expected):
        return None
    if given.split(":")[1:2] != [_key_id(key)]:
        return (
            "was sealed with another evidence key than this root's: it was captured on another machine or in "
            f"another checkout (or this root's key was replaced since); {again}"
        )
    return f"does not match its MAC: it was changed after `bee design capture` wrote it; {again}"
