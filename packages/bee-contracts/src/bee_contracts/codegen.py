"""Generate :mod:`bee_contracts.shapes`: TypedDicts of every tool's arguments and result, from the catalogs.

A development tool (``./dev docs`` runs it; a test fails when the committed modules drift from the catalogs). It
drives datamodel-code-generator, which is a development dependency only: the generated modules import nothing but
``typing``. Names come from tool names — ``bee_context_packet`` gives ``ContextPacketArgs`` and
``ContextPacketResult``, ``add_note`` gives ``AddNoteArgs`` — and a nested object is named after its tool and the
property that holds it (``ArtifactSearchMatch`` for an item of ``matches``).

An argument with a schema default is required in its Args TypedDict: the host fills defaults in before a handler
runs, so the handler always sees it.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any

from bee_contracts.catalog import HOSTS, ToolSpec, load_catalog

SHAPES = Path(__file__).parent / "shapes"

_ROOT = "Shapes"

_HEADER = '''"""{host} tool shapes: TypedDicts generated from the {host} catalog. Do not edit; run `./dev docs`."""
'''


def stem(tool: str) -> str:
    """The class-name stem of a tool: ``bee_artifact_search`` -> ``ArtifactSearch``."""
    return "".join(part.capitalize() for part in tool.removeprefix("bee_").split("_"))


def _singular(name: str) -> str:
    """The item of a list is named in the singular: ``Matches`` -> ``Match``, ``Entries`` -> ``Entry``."""
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith(("ches", "shes", "sses", "xes")):
        return name[:-2]
    if name.endswith("s") and not name.endswith("ss"):
        return name[:-1]
    return name + "Item"


def _titled(schema: Any, title: str, names: set[str]) -> Any:
    """A copy of ``schema`` whose object schemas carry unique titles, so the generator names them predictably.

    Raises:
        ValueError: two nested objects would get the same name (rename a property or give one a title).
    """
    if not isinstance(schema, dict):
        return schema
    schema = dict(schema)
    if schema.get("type") == "object" and "properties" in schema:
        if title in names:
            raise ValueError(f"two generated shapes would be called {title}")
        names.add(title)
        schema["title"] = title
    stem_of = title.removesuffix("Args").removesuffix("Result")
    properties = schema.get("properties")
    if isinstance(properties, dict):
        schema["properties"] = {name: _titled(value, stem_of + stem(name), names) for name, value in properties.items()}
    items = schema.get("items")
    if isinstance(items, dict):
        schema["items"] = _titled(items, _singular(title), names)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            schema[key] = [_titled(option, f"{title}{i}", names) for i, option in enumerate(schema[key], start=1)]
    return schema


def _arguments(spec: ToolSpec) -> dict[str, Any]:
    schema = copy.deepcopy(spec.input_schema)
    properties = schema.get("properties", {})
    defaulted = [name for name, prop in properties.items() if isinstance(prop, dict) and "default" in prop]
    schema["required"] = [name for name in properties if name in {*schema.get("required", []), *defaulted}]
    return schema


def combined_schema(host: str) -> dict[str, Any]:
    """One JSON Schema whose ``$defs`` are every tool's Args and Result of ``host``, titled for naming."""
    defs: dict[str, Any] = {}
    names: set[str] = set()
    for spec in load_catalog(host):
        name = stem(spec.name)
        defs[f"{name}Args"] = _titled(_arguments(spec), f"{name}Args", names)
        defs[f"{name}Result"] = _titled(copy.deepcopy(spec.output_schema), f"{name}Result", names)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": _ROOT, "type": "object", "$defs": defs}


def generate(host: str) -> str:
    """The source of ``bee_contracts/shapes/<host>.py``."""
    from datamodel_code_generator import generate as run
    from datamodel_code_generator.enums import DataModelType, InputFileType
    from datamodel_code_generator.format import Formatter, PythonVersion

    source = run(
        json.dumps(combined_schema(host)),
        input_file_type=InputFileType.JsonSchema,
        output_model_type=DataModelType.TypingTypedDict,
        target_python_version=PythonVersion.PY_311,
        use_standard_collections=True,
        use_union_operator=True,
        use_closed_typed_dict=False,  # mypy does not read PEP 728 yet
        use_title_as_name=True,
        collapse_root_models=True,
        formatters=[Formatter.RUFF_FORMAT],
        disable_timestamp=True,
        use_double_quotes=True,
        custom_file_header=_HEADER.format(host=host.capitalize()),
    )
    # The generator always emits the (empty) root schema as a class; only the $defs are shapes.
    text = str(source).replace(f"class {_ROOT}(TypedDict):\n    pass\n", "")
    return re.sub(r"\n{4,}", "\n\n\n", text).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else SHAPES
    target.mkdir(parents=True, exist_ok=True)
    for host in HOSTS:
        if load_catalog(host):
            (target / f"{host}.py").write_text(generate(host), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
