"""Bee's shared contracts: what every host, the supervisor and the CLI agree on.

Names load on first use (PEP 562): the `bee` front end imports :mod:`bee_contracts.warm` before anything else, and
importing any module of a package runs this file first, so it must cost nothing; the catalogs, codes and digest load
when a name from them is first asked for.
"""

from bee_contracts._version import CONTRACT_VERSION, __version__

# Annotations only (mypy reads this name as True): the typing module is a megabyte the front end need not load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from bee_contracts.catalog import HOSTS, CatalogError, ToolSpec, catalog_by_name, load_catalog
    from bee_contracts.contract import canonical_json, contract_digest, contract_document
    from bee_contracts.errors import CODES, BeeError, ErrorBody, ErrorCode, invalid

__all__ = [
    "CODES",
    "CONTRACT_VERSION",
    "HOSTS",
    "BeeError",
    "CatalogError",
    "ErrorBody",
    "ErrorCode",
    "ToolSpec",
    "__version__",
    "canonical_json",
    "catalog_by_name",
    "contract_digest",
    "contract_document",
    "invalid",
    "load_catalog",
    "version_info",
]

_EXPORTS = {
    "HOSTS": "catalog",
    "CatalogError": "catalog",
    "ToolSpec": "catalog",
    "catalog_by_name": "catalog",
    "load_catalog": "catalog",
    "canonical_json": "contract",
    "contract_digest": "contract",
    "contract_document": "contract",
    "CODES": "errors",
    "BeeError": "errors",
    "ErrorBody": "errors",
    "ErrorCode": "errors",
    "invalid": "errors",
}


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'bee_contracts' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"bee_contracts.{module}"), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*__all__, *globals()})


def version_info() -> dict[str, str]:
    """The version triple every host reports: package version, contract version and digest."""
    from bee_contracts.contract import contract_digest

    return {"version": __version__, "contractVersion": CONTRACT_VERSION, "contractDigest": contract_digest()}
