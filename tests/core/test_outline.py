from pathlib import Path

import pytest

from bee_core.packet.languages import language_of
from bee_core.packet.outline import Outline, outline

SOURCES = Path(__file__).resolve().parents[1] / "fixtures" / "checkout"


def names(path: str) -> tuple[Outline, list[str]]:
    data = (SOURCES / path).read_bytes()
    result = outline(language_of(path), data)
    return result, result.qualified_names()


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/a.py", ["f", "A", "A.p", "A.am", "A.Inner", "af"]),
        (
            "src/a.ts",
            [
                "foo",
                "Bar",
                "Bar.constructor",
                "Bar.method",
                "I",
                "I.m",
                "T",
                "E",
                "arrow",
                "k",
                "NS",
                "NS.inner",
                "AC.am",
            ],
        ),
        ("src/a.js", ["f", "A", "A.m", "A.s", "g", "ef", "gen"]),
        ("src/a.go", ["S", "I", "X", "Y", "Method", "main"]),
        (
            "src/a.rs",
            [
                "S",
                "E",
                "T",
                "T.m",
                "fmt::Display for S",
                "fmt::Display for S.fmt",
                "S.new",
                "inner.g",
                "mac",
                "K",
                "top",
            ],
        ),
        ("src/A.java", ["A", "A.A", "A.m", "A.Inner", "A.Inner.i", "I.m", "E.em", "R.rm", "Ann"]),
        ("src/a.cs", ["N", "N.C", "N.C.P", "N.C.M", "N.S", "N.I.M", "N.E", "N.R", "N.D", "F.G", "K.Q"]),
        ("src/a.c", ["S", "T", "f", "g", "E"]),
        ("src/a.cpp", ["ns", "ns.C", "ns.C.m", "ns::C::m", "tf", "S.sm"]),
    ],
)
def test_tree_sitter_outlines_find_the_declarations(path: str, expected: list[str]) -> None:
    result, qualified = names(path)
    assert result.source == "tree-sitter"
    missing = [name for name in expected if name not in qualified]
    assert not missing, f"{path}: missing {missing} in {qualified}"


def test_python_kinds_lines_and_signatures() -> None:
    result, _ = names("src/a.py")
    first, cls = result.symbols[0], result.symbols[1]
    assert first == {"kind": "function", "name": "f", "startLine": 2, "endLine": 4, "signature": "def f(a)"}
    assert cls["kind"] == "class" and [c["kind"] for c in cls["children"]] == ["method", "method", "class"]
    assert cls["children"][0]["startLine"] == 7  # the decorator line counts


def test_markdown_headings_nest_and_ignore_fences() -> None:
    result, qualified = names("README.md")
    assert result.source == "headings"
    assert qualified == [
        "Sample checkout",
        "Sample checkout.Layout",
        "Sample checkout.Notes",
        "Sample checkout.Notes.Deeper",
    ]
    layout, notes = result.symbols[0]["children"]
    assert layout["endLine"] == notes["startLine"] - 1


def test_other_text_gets_a_line_scan() -> None:
    text = "proc build {} {\n}\nsub helper {\n}\n"
    result = outline("text", text.encode())
    assert result.source == "lines"
    assert [(s["kind"], s["name"], s["startLine"]) for s in result.symbols] == [
        ("proc", "build", 1),
        ("sub", "helper", 3),
    ]


def test_find_prefers_qualified_names_and_reports_ambiguity() -> None:
    result, _ = names("src/a.cs")
    assert [name for name, _ in result.find("M")] == ["N.C.M", "N.I.M"]
    assert [name for name, _ in result.find("N.C.M")] == ["N.C.M"]
