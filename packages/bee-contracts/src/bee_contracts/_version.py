"""The one version of the whole monorepo (lockstep): every distribution and the docs carry it."""

__version__ = "0.1.0"

# Bumped when a catalog, limit or error code changes in a way a client could notice.
CONTRACT_VERSION = "1"
