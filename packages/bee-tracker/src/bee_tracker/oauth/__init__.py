"""Signing in the way MCP clients expect (the MCP authorization specification): the tracker as a protected resource,
its built-in OAuth authorization server, and the team's OpenID Provider. See docs/hosts/tracker.md, "Signing in"."""
