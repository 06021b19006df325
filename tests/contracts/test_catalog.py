import json
from collections.abc import Callable
from typing import Any

import pytest

from bee_contracts import HOSTS, BeeError, CatalogError, ErrorCode, contract_digest, contract_document, load_catalog
from bee_contracts.catalog import _parse
from bee_contracts.contract import canonical_json


def test_every_catalog_tool_is_wire_shaped_and_in_name_order() -> None:
    for host in HOSTS:
        names = [spec.name for spec in load_catalog(host)]
        assert names == sorted(names)
        for spec in load_catalog(host):
            wire = spec.to_wire()
            assert set(wire) == {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
            assert wire["inputSchema"]["type"] == "object"
            assert wire["outputSchema"]["type"] == "object"


def test_core_catalog_holds_the_context_packet() -> None:
    assert "bee_context_packet" in [spec.name for spec in load_catalog("core")]


def test_digest_is_sha256_over_the_canonical_document() -> None:
    import hashlib

    expected = "sha256:" + hashlib.sha256(canonical_json(contract_document())).hexdigest()
    assert contract_digest() == expected


def test_canonical_json_ignores_key_order() -> None:
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == canonical_json({"a": [1, {"c": 3, "d": 2}], "b": 1})


def test_unknown_host_is_refused() -> None:
    with pytest.raises(KeyError, match="unknown host"):
        load_catalog("nope")


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        (lambda t: t.pop("title"), "keys must be"),
        (lambda t: t["inputSchema"].update(type="array"), "object-rooted"),
        (lambda t: t["annotations"].pop("openWorldHint"), "annotations must set"),
        (lambda t: t.update(name="other"), "file name must be the tool name"),
    ],
)
def test_malformed_catalog_files_fail_at_load(mutation: Callable[[dict[str, Any]], object], message: str) -> None:
    spec = load_catalog("core")[0]
    raw = json.loads(json.dumps(spec.to_wire()))
    mutation(raw)
    with pytest.raises(CatalogError, match=message):
        _parse("core", f"{spec.name}.json", raw)


def test_error_envelope_shape_and_retryable_defaults() -> None:
    body = BeeError(ErrorCode.BUSY, "try later").body()
    assert body == {"error": "try later", "code": "busy", "retryable": True, "outcome_unknown": False}
    body = BeeError(ErrorCode.NOT_FOUND, "gone", details={"id": "x"}).body()
    assert body["retryable"] is False and body["details"] == {"id": "x"}
    assert BeeError(ErrorCode.INTERNAL, "x", retryable=False).body()["retryable"] is False


def test_only_compression_writes_among_the_representation_and_compression_tools() -> None:
    specs = {spec.name: spec for spec in load_catalog("core")}
    read_only = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    for name in ("bee_representation_encode", "bee_representation_decode", "bee_compression_recover"):
        assert specs[name].annotations == read_only
    assert specs["bee_context_compress"].annotations == {**read_only, "readOnlyHint": False}


def test_a_prompt_is_part_of_the_contract() -> None:
    """A changed prompt changes the digest, so a host serving an older one fails the supervisor's version check."""
    from bee_contracts.prompts import load_prompts

    document = contract_document()
    assert document["prompts"]["tracker"] == [prompt.to_wire() for prompt in load_prompts("tracker")]
    assert document["prompts"]["tracker"], "the tracker's session_start prompt is in the contract"
