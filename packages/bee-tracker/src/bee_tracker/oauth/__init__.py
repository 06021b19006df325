"""Signing in the way MCP clients expect (the MCP authorization specification): the tracker as a protected resource,
its built-in OAuth authorization server, and the team's OpenID Provider. See docs/hosts/tracker.md, "Signing in".

What ``/mcp`` needs (:class:`SignIn`, :class:`Principal`) loads nothing heavy; the authorization server's routes and
provider (:mod:`.routes`, :mod:`.provider`) load the MCP SDK and are imported where the app builds them.
"""

from bee_tracker.oauth.resource import SignIn
from bee_tracker.oauth.tokens import Principal

__all__ = ["Principal", "SignIn"]
