import json
from typing import Any

import pytest

from bee_contracts import BeeError, ErrorCode
from bee_core.packet.manifest import parse_manifest


def manifest(*selections: dict[str, Any]) -> str:
    return json.dumps({"selections": list(selections)})


def sel(id: str, path: str = "a.py", representation: str = "index", **extra: Any) -> dict[str, Any]:
    return {"id": id, "path": path, "representation": representation, **extra}


def failure(text: str) -> str:
    with pytest.raises(BeeError) as info:
        parse_manifest(text)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    return info.value.message


def test_dependency_first_order_keeps_manifest_order_otherwise() -> None:
    parsed = parse_manifest(manifest(sel("c", dependsOn=["b"]), sel("a"), sel("b", dependsOn=["a"])))
    assert [s.id for s in parsed.ordered] == ["a", "b", "c"]
    assert [s.id for s in parsed.selections] == ["c", "a", "b"]


def test_required_defaults_to_true_and_propagates_to_dependencies() -> None:
    parsed = parse_manifest(
        manifest(sel("base", required=False), sel("top", dependsOn=["base"]), sel("x", required=False))
    )
    assert parsed.by_id()["top"].required is True
    assert parsed.needed_ids() == {"top", "base"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "manifestJson is not valid JSON"),
        ("[]", "must be of type object"),
        (json.dumps({"selections": []}), "selections has 0 items"),
        (json.dumps({"selections": [sel("a")], "extra": 1}), "unknown field 'extra'"),
        (manifest(sel("a", representation="full")), "use one of index, outline, body"),
        (manifest(sel("a", reprsentation="index")), "unknown field 'reprsentation'"),
        (manifest({"id": "a", "representation": "index"}), "missing required field 'path'"),
        (manifest(sel("a"), sel("a")), "is used twice"),
        (manifest(sel("a", dependsOn=["zz"])), "depends on 'zz', which is not a selection id"),
        (manifest(sel("a", dependsOn=["a"])), "depends on itself"),
        (manifest(sel("a", dependsOn=["b"]), sel("b", dependsOn=["a"])), "cycle (a -> b -> a)"),
        (manifest(sel("a", symbol="f")), "only outline and body take"),
        (manifest(sel("a", representation="outline", range={"start": 1, "end": 2})), "only body takes"),
        (manifest(sel("a", representation="body", range={"start": 5, "end": 2})), "start 5 after end 2"),
        (manifest(sel("a", representation="body", range={"start": 0, "end": 2})), "outside the allowed range"),
        (manifest(sel("a", representation="body", symbol="f", range={"start": 1, "end": 2})), "choose one"),
        (manifest(sel("a", hash="abc")), "does not match the pattern"),
        (manifest(*[sel(str(i)) for i in range(65)]), "maxItems is 64"),
        # Input the schema (as jsonschema reads it) admits but no handler can use.
        ("[" * 100_000, "manifestJson nests too deeply to read"),
        ('{"selections": [' * 40 + "]}" * 40, "nests deeper than 64 levels"),
        (
            manifest(sel("a", representation="body", range={"start": 1.0, "end": 2})),
            "field selections.0.range.start must be an integer, got 1.0",
        ),
        (
            manifest(sel("a", representation="body", range={"start": 1, "end": True})),
            "field selections.0.range.end must be an integer, got True",
        ),
        (
            manifest(sel("a", representation="body", range={"start": 1, "end": 2**53})),
            "field selections.0.range.end is 9007199254740992, outside ±9007199254740991",
        ),
        ('{"selections": [' + "9" * 5000 + "]}", "field selections.0 is 999999999999… (5000 characters)"),
        ('{"selections": [1e400]}', "field selections.0 is 1e400, a number too large to hold exactly"),
        ('{"selections": [NaN]}', "manifestJson is not valid JSON (NaN is not JSON)"),
    ],
)
def test_bad_manifests_say_what_to_change(text: str, expected: str) -> None:
    assert expected in failure(text)
