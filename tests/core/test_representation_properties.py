"""Property tests: decode(encode(x)) gives back the same JSON values with the same number spellings."""

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bee_contracts.jsonvalues import Lexeme, quote, write_json
from bee_core.representation.codec import decode_packet, encode_packet
from bee_core.representation.tokens import count_tokens
from tests.core._json import canonical

# Number lexemes as JSON allows them to be spelled, including the ones that canonicalising parsers rewrite.
_digits = st.text("0123456789", min_size=1, max_size=30)
_integer = st.one_of(st.just("0"), st.builds(lambda d, rest: d + rest, st.sampled_from("123456789"), _digits))
_fraction = st.one_of(st.just(""), st.builds(lambda d: "." + d, _digits))
_exponent = st.one_of(
    st.just(""), st.builds(lambda e, s, d: e + s + d, st.sampled_from("eE"), st.sampled_from(["", "+", "-"]), _digits)
)
lexemes = st.builds(
    lambda sign, i, f, e: Lexeme(sign + i + f + e), st.sampled_from(["", "-"]), _integer, _fraction, _exponent
) | st.sampled_from([Lexeme(x) for x in ["1.0", "1e3", "-0", "1.50", "1E+03", "123456789012345678901234567890"]])

# Unicode strings (no raw surrogates: UTF-8 text cannot carry them), plus strings that look like other tokens.
tricky = st.sampled_from(
    [
        "",
        " ",
        "true",
        "null",
        "false",
        "1",
        "-0",
        "1.0",
        "@",
        "@a",
        "a,b",
        "a:b",
        "a.b",
        "a=b",
        "[",
        "{",
        "]",
        "}",
        '"',
        "\\",
        "\n",
        "\u2028",
        "\x85",
        " x",
        "x ",
        "é",
        "😀",
        "a\tb",
    ]
)
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=12) | tricky
keys = texts

scalars = st.one_of(st.none(), st.booleans(), lexemes, texts)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(keys, children, max_size=5),
        # Arrays of similar objects, so tables (dotted, hoisted, near-uniform) are exercised often.
        st.lists(
            st.dictionaries(st.sampled_from(["a", "b", "c.d", "", "@"]), children, max_size=4), min_size=2, max_size=6
        ),
        st.dictionaries(
            keys, st.dictionaries(st.sampled_from(["x", "y"]), children, min_size=1, max_size=2), min_size=2, max_size=4
        ),
    )


json_values = st.recursive(scalars, _containers, max_leaves=40)


def _text(value: Any) -> str:
    return write_json(value)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, st.sampled_from(["auto", "columnar", "compact", "json"]))
def test_round_trip_keeps_values_and_number_spellings(value: Any, variant: str) -> None:
    text = _text(value)
    encoded = encode_packet(text, variant, "o200k")
    assert canonical(decode_packet(encoded.packet, 10**7)) == canonical(text)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_auto_body_is_never_more_tokens_than_minified_json(value: Any) -> None:
    text = _text(value)
    encoded = encode_packet(text, "auto", "o200k")
    assert count_tokens(encoded.packet.split("\n", 1)[1]) <= count_tokens(encoded.minified)


@settings(max_examples=200, deadline=None)
@given(lexemes)
def test_every_number_lexeme_survives_alone_and_in_a_table(lexeme: Lexeme) -> None:
    for text in (lexeme, f'[{{"n":{lexeme},"k":1}},{{"n":{lexeme},"k":2}}]', f'{{"a":{{"n":{lexeme}}},"b":{{"n":0}}}}'):
        for variant in ("auto", "columnar"):
            decoded = decode_packet(encode_packet(text, variant, "o200k").packet, 10**7)
            assert canonical(decoded) == canonical(text)
            assert lexeme in decoded


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=[]), max_size=20))
def test_any_string_including_lone_surrogates_round_trips(text: str) -> None:
    source = "[" + quote(text) + "]"
    assert canonical(decode_packet(encode_packet(source, "auto", "o200k").packet, 10**7)) == canonical(source)
