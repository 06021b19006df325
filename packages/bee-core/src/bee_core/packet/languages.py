"""Which language a file is, and the tree-sitter grammar tables that drive its outline.

Grammars come from per-language wheels that ship their compiled parser (nothing is downloaded); each is imported
the first time a file of its language is outlined. A grammar table says which node types are definitions (and of
what kind), which ones are scopes whose bodies hold further definitions, and which are wrappers to look through.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any


@dataclass(frozen=True)
class Grammar:
    """How to outline one language with tree-sitter."""

    language: str
    module: str
    definitions: dict[str, str]
    scopes: frozenset[str] = frozenset()
    wrappers: frozenset[str] = frozenset()
    function: str = "language"


_JS_DEFS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "class": "class",
    "method_definition": "method",
    "variable_declarator": "function",  # only when its value is a function or class; see outline._js_value_kind
}
_JS_WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"})
_TS_DEFS = {
    **_JS_DEFS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "namespace",
    "function_signature": "function",
    "method_signature": "method",
    "abstract_method_signature": "method",
}
_TS_SCOPES = frozenset(
    {"class_declaration", "class", "abstract_class_declaration", "interface_declaration", "internal_module", "module"}
)
_C_DEFS = {
    "function_definition": "function",
    "declaration": "function",  # a prototype, only when it declares a function; see outline._c_prototype
    "struct_specifier": "struct",
    "union_specifier": "union",
    "enum_specifier": "enum",
    "type_definition": "type",
}

GRAMMARS: dict[str, Grammar] = {
    "python": Grammar(
        "python",
        "tree_sitter_python",
        {"function_definition": "function", "class_definition": "class"},
        scopes=frozenset({"class_definition"}),
        wrappers=frozenset({"decorated_definition"}),
    ),
    "javascript": Grammar(
        "javascript", "tree_sitter_javascript", _JS_DEFS, frozenset({"class_declaration", "class"}), _JS_WRAPPERS
    ),
    "typescript": Grammar(
        "typescript",
        "tree_sitter_typescript",
        _TS_DEFS,
        _TS_SCOPES,
        _JS_WRAPPERS | {"ambient_declaration"},
        function="language_typescript",
    ),
    "tsx": Grammar(
        "tsx", "tree_sitter_typescript", _TS_DEFS, _TS_SCOPES, _JS_WRAPPERS | {"ambient_declaration"}, "language_tsx"
    ),
    "go": Grammar(
        "go",
        "tree_sitter_go",
        {
            "function_declaration": "function",
            "method_declaration": "method",
            "type_spec": "type",
            "type_alias": "type",
        },
        wrappers=frozenset({"type_declaration"}),
    ),
    "rust": Grammar(
        "rust",
        "tree_sitter_rust",
        {
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "union_item": "union",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
            "type_item": "type",
            "const_item": "const",
            "static_item": "static",
            "macro_definition": "macro",
        },
        scopes=frozenset({"trait_item", "impl_item", "mod_item"}),
    ),
    "java": Grammar(
        "java",
        "tree_sitter_java",
        {
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "record",
            "annotation_type_declaration": "annotation",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
        },
        scopes=frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            }
        ),
        wrappers=frozenset({"enum_body_declarations"}),
    ),
    "csharp": Grammar(
        "csharp",
        "tree_sitter_c_sharp",
        {
            "namespace_declaration": "namespace",
            "file_scoped_namespace_declaration": "namespace",
            "class_declaration": "class",
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "record",
            "delegate_declaration": "delegate",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "destructor_declaration": "destructor",
            "property_declaration": "property",
            "event_declaration": "event",
            "operator_declaration": "operator",
        },
        scopes=frozenset(
            {
                "namespace_declaration",
                "class_declaration",
                "struct_declaration",
                "interface_declaration",
                "record_declaration",
            }
        ),
    ),
    "c": Grammar(
        "c", "tree_sitter_c", _C_DEFS, wrappers=frozenset({"preproc_ifdef", "preproc_if", "linkage_specification"})
    ),
    "cpp": Grammar(
        "cpp",
        "tree_sitter_cpp",
        {**_C_DEFS, "class_specifier": "class", "namespace_definition": "namespace", "field_declaration": "function"},
        scopes=frozenset({"class_specifier", "struct_specifier", "namespace_definition"}),
        wrappers=frozenset({"template_declaration", "preproc_ifdef", "preproc_if", "linkage_specification"}),
    ),
}

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".cs": "csharp",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
}


@lru_cache(maxsize=4096)
def language_of(path: str) -> str:
    """The language name for a repository path: a tree-sitter grammar, ``markdown``, or ``text``.

    Memoized: a packet asks for every selection's path on every call, and the answer depends on the path alone.
    """
    return EXTENSIONS.get(PurePosixPath(path).suffix.lower(), "text")


class _Parsers(threading.local):
    def __init__(self) -> None:
        self.by_language: dict[str, Any] = {}


_local = _Parsers()
_languages: dict[str, Any] = {}
_languages_lock = threading.Lock()


def parser_for(language: str) -> Any:
    """A tree-sitter parser for ``language``, one per thread (parsers are not thread-safe)."""
    parser = _local.by_language.get(language)
    if parser is None:
        from tree_sitter import Parser

        parser = Parser(_language(language))
        _local.by_language[language] = parser
    return parser


def _language(language: str) -> Any:
    with _languages_lock:
        compiled = _languages.get(language)
        if compiled is None:
            from tree_sitter import Language

            grammar = GRAMMARS[language]
            compiled = Language(getattr(importlib.import_module(grammar.module), grammar.function)())
            _languages[language] = compiled
        return compiled
