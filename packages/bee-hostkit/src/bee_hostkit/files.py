"""The one atomic file write, re-exported: it lives in :mod:`bee_contracts.files` so that bee-cli, which does not
depend on the host runtime, writes files the same way."""

from bee_contracts.files import write_atomic

__all__ = ["write_atomic"]
