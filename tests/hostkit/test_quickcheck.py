"""The quick check of valid arguments: it never accepts what jsonschema refuses, and valid calls skip jsonschema."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from bee_contracts import BeeError, ToolSpec, load_catalog
from bee_contracts.schemas import load_schema
from bee_hostkit._quickcheck import compile_check
from bee_hostkit.validation import SchemaValidator, _strict_validator_class

HOSTS = ("core", "design", "tracker", "discovery")
SPECS = [spec for host in HOSTS for spec in load_catalog(host)]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-3, max_value=300_000)
    | st.sampled_from([0, 1, 5, 20, 64, 65, 511, 512, 262144, 262145])
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=6)
    | st.sampled_from(["", "a", "README.md", "index", "outline", "body", "open", "closed", "bd-1", "x" * 300])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


def arguments_for(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects built from the schema's own property names (and a stranger), with values of every kind."""
    names = [*sorted(schema.get("properties", {})), "unexpected"]
    return st.dictionaries(st.sampled_from(names), values, max_size=len(names))


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_every_catalog_input_schema_compiles_to_a_quick_check(spec: ToolSpec) -> None:
    assert compile_check(spec.input_schema) is not None


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
@settings(max_examples=25)
@given(data=st.data())
def test_the_quick_check_never_accepts_what_jsonschema_refuses(spec: ToolSpec, data: st.DataObject) -> None:
    quick = compile_check(spec.input_schema)
    assert quick is not None
    strict = _strict_validator_class()(spec.input_schema)
    arguments = data.draw(arguments_for(spec.input_schema))
    if quick(arguments):
        assert strict.is_valid(arguments), arguments


@settings(max_examples=300)
@given(instance=values)
def test_the_quick_check_agrees_with_jsonschema_on_a_schema_of_every_keyword(instance: Any) -> None:
    schema = {
        "type": ["object", "array", "string", "integer", "null"],
        "properties": {"s": {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^[a-z]"}},
        "required": ["s"],
        "additionalProperties": {"type": ["string", "integer"], "minimum": 0, "exclusiveMaximum": 9},
        "items": {"enum": ["a", "b"]},
        "uniqueItems": True,
        "minItems": 1,
        "maxProperties": 2,
        "minimum": 1,
    }
    quick = compile_check(schema)
    assert quick is not None
    # Exact on this schema, both ways: nothing in it is left to jsonschema except values it will not judge.
    assert quick(instance) == _strict_validator_class()(schema).is_valid(instance), instance


def test_schemas_it_does_not_judge_are_left_to_jsonschema() -> None:
    assert compile_check({"anyOf": [{"type": "string"}]}) is None
    assert compile_check({"$ref": "#/$defs/x"}) is None
    assert compile_check({"properties": {"a": {"oneOf": []}}}) is None
    assert compile_check(False) is None
    # A value it will not judge is not accepted: jsonschema decides.
    numbers = compile_check({"enum": [1, 2]})
    assert numbers is None
    objects = compile_check({"uniqueItems": True})
    assert objects is not None and objects([{"a": 1}, {"a": 2}]) is False
    assert Draft202012Validator({"uniqueItems": True}).is_valid([{"a": 1}, {"a": 2}])


def test_valid_arguments_are_accepted_without_building_the_jsonschema_validator() -> None:
    spec = next(spec for spec in SPECS if spec.name == "bee_context_packet")
    validator = SchemaValidator(spec.name, spec.input_schema)
    assert validator.validate({"manifestJson": "{}"}) == {"manifestJson": "{}", "budgetBytes": 32768}
    assert validator._validator is None  # the fast path decided alone
    with pytest.raises(BeeError, match="budgetBytes is 1, outside the allowed range 512–262144"):
        validator.validate({"manifestJson": "{}", "budgetBytes": 1})
    assert validator._validator is not None  # the detailed error came from jsonschema


def test_schemas_the_quick_check_cannot_compile_still_validate_fully() -> None:
    manifest = SchemaValidator("manifestJson", load_schema("context-packet-manifest"), noun="field")
    with pytest.raises(BeeError, match="selections"):
        manifest.check({"selections": "nope"})
    manifest.check({"selections": [{"id": "a", "path": "README.md", "representation": "index"}]})
