"""Bee's shared contracts: what every host, the supervisor and the CLI agree on."""

from bee_contracts._version import CONTRACT_VERSION, __version__
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


def version_info() -> dict[str, str]:
    """The version triple every host reports: package version, contract version and digest."""
    return {"version": __version__, "contractVersion": CONTRACT_VERSION, "contractDigest": contract_digest()}
