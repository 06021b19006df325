"""Beads' command line on Bee's tracker (`bee bd …`): bd's commands, flags and ``--json`` answers, made by the tracker's
tools on the local store or over HTTP.

:mod:`.cli` is the click group; :mod:`.session` chooses where a command works (:class:`~.session.Tracker`, local or
:mod:`.remote`); :mod:`.reading`, :mod:`.showing`, :mod:`.writing`, :mod:`.links` and :mod:`.prime` hold the
commands; :mod:`.views` gathers what they read from the tools, :mod:`.shapes` and :mod:`.gojson` write bd's JSON,
:mod:`.human` its lines for people, and :mod:`.shim` installs the opt-in ``bd`` launcher.
"""

from __future__ import annotations

__all__: list[str] = []
