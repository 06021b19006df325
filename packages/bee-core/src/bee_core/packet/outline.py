"""Symbol outlines: tree-sitter for languages with a grammar, headings for Markdown, a line scan for other text.

Only declaration levels are visited (the top level and the bodies of scopes such as classes, impls and
namespaces); function bodies are never walked, which keeps extraction a small fraction of parse time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from bee_core.packet.languages import GRAMMARS, Grammar, parser_for
from bee_hostkit.results import piece_bytes

#: Bumped when the outline shape changes, so cached outlines of the old shape are never served.
OUTLINE_VERSION = 1

_SIGNATURE_MAX = 160
_CONTAINER_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "record", "enum", "union"})
_BODY_TYPES = frozenset(
    {
        "class_body",
        "interface_body",
        "enum_body",
        "declaration_list",
        "field_declaration_list",
        "statement_block",
        "annotation_type_body",
        "object_type",
    }
)
_JS_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "class", "class_expression"}
)


#: One outlined declaration, in its JSON form: {kind, name, startLine, endLine, signature?, children?}.
#: Lines are 1-based and inclusive. Outlines are built directly in this form (no second conversion pass) and
#: shared through the content cache, so nothing may mutate them.
Symbol = dict[str, Any]


def _symbol(kind: str, name: str, start: int, end: int, signature: str = "") -> Symbol:
    symbol: Symbol = {"kind": kind, "name": name, "startLine": start, "endLine": end}
    if signature:
        symbol["signature"] = signature
    return symbol


def _children(symbol: Symbol) -> list[Symbol]:
    children: list[Symbol] = symbol.get("children", [])
    return children


#: How an outline was made: parsed by tree-sitter, from Markdown headings, or a line scan.
OutlineSource = Literal["tree-sitter", "headings", "lines"]


@dataclass(frozen=True)
class Outline:
    """The outline of one file and how it was made (``tree-sitter``, ``headings`` or ``lines``)."""

    source: OutlineSource
    symbols: list[Symbol]

    @cached_property
    def symbols_bytes(self) -> int:
        """What the symbol list adds to a result (:func:`~bee_hostkit.results.piece_bytes`), measured once.

        Outlines are cached by content hash and never mutated, so every packet that carries this one counts its
        symbols from this number instead of serializing them again.
        """
        return piece_bytes(self.symbols)

    def _walk(self) -> list[tuple[str, Symbol]]:
        pairs: list[tuple[str, Symbol]] = []

        def visit(symbols: list[Symbol], prefix: str) -> None:
            for symbol in symbols:
                qualified = f"{prefix}.{symbol['name']}" if prefix else symbol["name"]
                pairs.append((qualified, symbol))
                visit(_children(symbol), qualified)

        visit(self.symbols, "")
        return pairs

    def find(self, wanted: str) -> list[tuple[str, Symbol]]:
        """Symbols whose qualified name (``Outer.inner``) equals ``wanted``, else those whose bare name does."""
        pairs = self._walk()
        exact = [pair for pair in pairs if pair[0] == wanted]
        return exact or [pair for pair in pairs if pair[1]["name"] == wanted]

    def qualified_names(self) -> list[str]:
        return [name for name, _ in self._walk()]


def outline(language: str, data: bytes) -> Outline:
    """Outline the UTF-8 text ``data`` of ``language`` (as named by :func:`~bee_core.packet.languages.language_of`)."""
    grammar = GRAMMARS.get(language)
    if grammar is not None:
        return Outline("tree-sitter", _TreeOutliner(grammar, data).run())
    text = data.decode("utf-8-sig")
    if language == "markdown":
        return Outline("headings", _markdown_headings(text))
    return Outline("lines", _line_scan(text))


class _TreeOutliner:
    def __init__(self, grammar: Grammar, data: bytes) -> None:
        self.grammar = grammar
        self.data = data
        self.tree = parser_for(grammar.language).parse(data)

    def run(self) -> list[Symbol]:
        symbols: list[Symbol] = []
        self._level(self.tree.root_node, symbols, parent_kind="")
        return symbols

    def _level(self, node: Any, out: list[Symbol], parent_kind: str, outer: Any = None) -> None:
        grammar = self.grammar
        for child in node.named_children:
            kind = grammar.definitions.get(child.type)
            if kind is not None:
                symbol = self._symbol(child, kind, parent_kind, outer)
                if symbol is not None:
                    out.append(symbol)
                    if child.type in grammar.scopes:
                        body = _body_of(child)
                        if body is not None:
                            children: list[Symbol] = []
                            self._level(body, children, symbol["kind"])
                            if children:
                                symbol["children"] = children
                continue
            if child.type in grammar.wrappers:
                # Look through wrappers (decorators, export, declarations); the wrapper's start line counts.
                self._level(child, out, parent_kind, outer if outer is not None else child)

    def _symbol(self, node: Any, kind: str, parent_kind: str, outer: Any) -> Symbol | None:
        refined = self._refine_kind(node, kind)
        if refined is None:
            return None
        kind = refined
        name = self._name(node)
        if not name:
            return None
        if kind == "function" and parent_kind in _CONTAINER_KINDS:
            kind = "method"
        start = (outer if outer is not None else node).start_point[0] + 1
        return _symbol(kind, name, start, node.end_point[0] + 1, self._signature(node))

    def _refine_kind(self, node: Any, kind: str) -> str | None:
        node_type = node.type
        if node_type == "variable_declarator":
            value = node.child_by_field_name("value")
            if value is None or value.type not in _JS_FUNCTION_VALUES:
                return None
            return "class" if value.type.startswith("class") else "function"
        if node_type in ("declaration", "field_declaration"):
            return "function" if _function_declarator(node) is not None else None
        if node_type in ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier"):
            return kind if node.child_by_field_name("body") is not None else None
        if node_type == "type_spec":
            shape = node.child_by_field_name("type")
            if shape is not None and shape.type == "struct_type":
                return "struct"
            if shape is not None and shape.type == "interface_type":
                return "interface"
        return kind

    def _text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def _name(self, node: Any) -> str:
        node_type = node.type
        if node_type == "impl_item":
            target = node.child_by_field_name("type")
            trait = node.child_by_field_name("trait")
            if target is None:
                return ""
            return f"{self._text(trait)} for {self._text(target)}" if trait is not None else self._text(target)
        if node_type in ("function_definition", "declaration", "field_declaration") and self.grammar.language in (
            "c",
            "cpp",
        ):
            declarator = _function_declarator(node)
            inner = declarator.child_by_field_name("declarator") if declarator is not None else None
            return self._text(inner) if inner is not None else ""
        if node_type == "type_definition":
            declarator = node.child_by_field_name("declarator")
            return self._text(declarator) if declarator is not None else ""
        name = node.child_by_field_name("name")
        if name is None:
            return "default" if node_type in ("function_declaration", "class_declaration") else ""
        return self._text(name)

    def _signature(self, node: Any) -> str:
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        head = self.data[node.start_byte : min(end, node.start_byte + 4 * _SIGNATURE_MAX)]
        text = " ".join(head.decode("utf-8", errors="replace").split())
        text = text.rstrip(" {:=;")
        return text if len(text) <= _SIGNATURE_MAX else text[: _SIGNATURE_MAX - 1] + "…"


def _body_of(node: Any) -> Any:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in node.named_children:
        if child.type in _BODY_TYPES:
            return child
    return None


def _function_declarator(node: Any) -> Any:
    current = node.child_by_field_name("declarator")
    while current is not None:
        if current.type == "function_declarator":
            return current
        current = current.child_by_field_name("declarator")
    return None


_ATX = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _markdown_headings(text: str) -> list[Symbol]:
    lines = text.split("\n")
    flat: list[tuple[int, Symbol]] = []
    fenced = False
    for number, line in enumerate(lines, start=1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = _ATX.match(line)
        if match:
            level = len(match.group(1))
            flat.append((level, _symbol(f"h{level}", match.group(2).strip(), number, number)))
    total = len(lines) - (1 if text.endswith("\n") else 0)
    # A section runs to the line before the next heading of the same or a higher level.
    for index, (level, symbol) in enumerate(flat):
        symbol["endLine"] = total
        for later_level, later in flat[index + 1 :]:
            if later_level <= level:
                symbol["endLine"] = later["startLine"] - 1
                break
    roots: list[Symbol] = []
    stack: list[tuple[int, Symbol]] = []
    for level, symbol in flat:
        while stack and stack[-1][0] >= level:
            stack.pop()
        (stack[-1][1].setdefault("children", []) if stack else roots).append(symbol)
        stack.append((level, symbol))
    return roots


_DEFINITION_LINE = re.compile(
    r"^\s*(?:(?:export|public|private|protected|static|async|pub(?:\([^)]*\))?|final|abstract|def|local)\s+)*"
    r"(def|class|function|func|fn|sub|proc|procedure|module|interface|struct|enum|trait|impl|namespace|object|"
    r"package|macro)\s+([A-Za-z_$][\w$:.!?]*)"
)


def _line_scan(text: str) -> list[Symbol]:
    """Lines that look like definitions in most languages (a fallback, not a parser)."""
    symbols: list[Symbol] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > 400:
            continue
        match = _DEFINITION_LINE.match(line)
        if match:
            symbols.append(
                _symbol(match.group(1), match.group(2), number, number, " ".join(line.split())[:_SIGNATURE_MAX])
            )
    return symbols
