"""Cross-site request forgery: every write form carries a token an attacker's page cannot know.

- Signed in, the token is the session's own (a synchronizer token, random, stored with the session server-side):
  every form the board renders carries it, and a write without it, or with another, changes nothing.
- The sign-in form, before there is a session, uses a double-submit token: a random value in an HttpOnly,
  SameSite=Strict cookie that the form must repeat (so another site cannot sign a person in as someone else).
- Independently, a browser's ``Origin`` header, when sent, must be this board's own origin.

The session cookie is SameSite=Strict as well, so a cross-site POST does not even carry it.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request


def same_token(expected: str | None, given: str | None) -> bool:
    """Whether ``given`` is ``expected`` (compared in constant time); a missing token never matches."""
    if not expected or not given:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))


def same_origin(request: Request) -> bool:
    """False when the browser says the request comes from another origin (``Origin``, else ``Sec-Fetch-Site``)."""
    origin = request.headers.get("origin")
    if origin is not None:
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        return origin.lower() == own.lower()
    site = request.headers.get("sec-fetch-site")
    return site is None or site in ("same-origin", "none")
