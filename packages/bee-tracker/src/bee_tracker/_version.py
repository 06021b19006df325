"""This distribution's version, the monorepo's one version (bee_contracts._version; a test keeps them equal)."""

__version__ = "0.1.0"
