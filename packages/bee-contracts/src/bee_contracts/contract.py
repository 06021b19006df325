"""The contract digest: a sha256 over the canonical form of everything hosts and clients agree on."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from bee_contracts import errors, limits
from bee_contracts._version import CONTRACT_VERSION
from bee_contracts.catalog import HOSTS, load_catalog
from bee_contracts.prompts import load_prompts
from bee_contracts.schemas import SCHEMAS, load_schema


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no insignificant whitespace, UTF-8: the form the digest is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def contract_document() -> dict[str, Any]:
    """The whole contract as one JSON value."""
    return {
        "contractVersion": CONTRACT_VERSION,
        "limits": limits.as_dict(),
        "errorCodes": errors.as_dict(),
        "catalogs": {host: [spec.to_wire() for spec in load_catalog(host)] for host in HOSTS},
        # A prompt is part of what a host promises its clients, as a tool is: a changed one is a new contract.
        "prompts": {host: [prompt.to_wire() for prompt in load_prompts(host)] for host in HOSTS},
        "schemas": {name: load_schema(name) for name in SCHEMAS},
    }


@cache
def contract_digest() -> str:
    """``sha256:<hex>`` over :func:`contract_document` in canonical form."""
    return "sha256:" + hashlib.sha256(canonical_json(contract_document())).hexdigest()
