"""The tracker's web board: the team's backlog in a browser, for the people who lead the agents.

Served by `bee tracker serve` at ``/board/``, beside ``/mcp``. Pages are rendered on the server (Jinja2,
autoescaped); the only script is htmx, vendored from its npm package (``static/vendor``), which polls for changes.
People sign in with a tracker token or a one-time link and get a server-side session; every write is a tracker tool
run for them. See docs/hosts/tracker.md, "The web board".
"""

from bee_tracker.board.app import board_routes

__all__ = ["board_routes"]
