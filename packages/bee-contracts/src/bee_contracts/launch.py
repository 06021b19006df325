"""How Bee starts a Python program of its own: this installation's interpreter, never a checkout on its import path.

``python -m module`` and ``python -c code`` put the current folder first on ``sys.path``. A Bee process started
from a checkout (an editor's front end, `bee up`, `bee doctor`) would then import a file of that checkout named like
any module it imports later — ``json.py``, ``typing.py``, ``httpx.py`` — and run it as the user, inside a process
that may go on serving every other checkout the user opens (the warm supervisor and its hosts). ``-P`` (Python 3.11,
``PYTHONSAFEPATH``) leaves that folder off, so the import path is the installation's alone, whatever the working
directory; every Bee process that starts Python builds its command line here.

The processes shared by several editors also start in a fixed working directory (:data:`NEUTRAL_CWD`), so that
nothing they do resolves a relative path against whichever checkout happened to start them.

Stdlib only, and cheap: the `bee` front end imports this.
"""

from __future__ import annotations

import sys

#: Python's option that keeps the current folder (and a script's folder) off the import path.
SAFE_PATH = "-P"
#: The working directory of a process Bee starts for itself and shares between editors.
NEUTRAL_CWD = "/"


def python(*args: str) -> list[str]:
    """This interpreter running ``args`` (``-m module …`` or ``-c code``) with nothing implicit on its import path."""
    return [sys.executable, SAFE_PATH, *args]


def bee(*args: str) -> list[str]:
    """The `bee` command of this installation, as a module of this interpreter: ``python -P -m bee_cli args…``."""
    return python("-m", "bee_cli", *args)
