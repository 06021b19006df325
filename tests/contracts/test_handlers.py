"""Every tool a catalog lists has its handler where its name says, with the signature its shapes say.

The hosts bind handlers by name (:mod:`bee_hostkit.handlers`), so this test is what checks the binding: each
handler module imports, holds one function named after the tool, and that function is typed
``(context, call: Call[<Tool>Args]) -> <Tool>Result`` with the shapes generated from the tool's catalog entry (the
tracker's: ``(op: Read | Write, args: <Tool>Args) -> <Tool>Data``, a ``Read`` exactly for the read-only tools).
"""

import importlib
import inspect
import pkgutil
import typing
from typing import Any

import pytest

from bee_contracts import load_catalog
from bee_contracts.codegen import stem
from bee_core.context import CoreContext
from bee_design.context import DesignContext
from bee_hostkit import Call
from bee_hostkit.handlers import handler_module, load_handler
from bee_tracker.calls import HANDLERS as TRACKER_HANDLERS
from bee_tracker.store.ops import Read, Write

#: Each stdio host: its handlers package and the context its handlers receive.
HOSTS = {"core": ("bee_core.handlers", CoreContext), "design": ("bee_design.handlers", DesignContext)}

CASES = [(host, spec.name) for host in HOSTS for spec in load_catalog(host)]


def _hints(function: typing.Callable[..., typing.Any], host: str) -> dict[str, typing.Any]:
    """The function's annotations resolved, with its tool shapes (imported only for type checkers) in scope."""
    shapes = importlib.import_module(f"bee_contracts.shapes.{host}")
    scope = {**vars(shapes), **function.__globals__}
    return typing.get_type_hints(function, globalns=scope)


@pytest.mark.parametrize(("host", "tool"), CASES, ids=[tool for _, tool in CASES])
def test_the_handler_is_found_from_the_tool_name_with_the_shapes_of_its_tool(host: str, tool: str) -> None:
    package, context = HOSTS[host]
    handler = load_handler(package, tool)
    assert handler.__name__ == tool
    assert handler.__module__ == handler_module(package, tool)
    shapes = importlib.import_module(f"bee_contracts.shapes.{host}")
    hints = _hints(handler, host)
    first, second = inspect.signature(handler).parameters
    assert hints[first] is context, f"{tool}'s first parameter is not a {context.__name__}"
    args_type: Any = getattr(shapes, f"{stem(tool)}Args")  # a TypedDict class, found by name at run time
    assert hints[second] == Call[args_type]
    assert hints["return"] is getattr(shapes, f"{stem(tool)}Result")


TRACKER = [(spec.name, spec.annotations["readOnlyHint"]) for spec in load_catalog("tracker")]


@pytest.mark.parametrize(("tool", "read_only"), TRACKER, ids=[tool for tool, _ in TRACKER])
def test_the_tracker_handler_is_found_from_the_tool_name_with_the_shapes_of_its_tool(
    tool: str, read_only: bool
) -> None:
    handler = load_handler(TRACKER_HANDLERS, tool)
    assert handler.__name__ == tool
    assert handler.__module__ == handler_module(TRACKER_HANDLERS, tool)
    shapes = importlib.import_module("bee_contracts.shapes.tracker")
    hints = _hints(handler, "tracker")
    first, second = inspect.signature(handler).parameters
    assert hints[first] is (Read if read_only else Write), f"{tool} must take a {'Read' if read_only else 'Write'}"
    assert hints[second] is getattr(shapes, f"{stem(tool)}Args")
    assert hints["return"] is getattr(shapes, f"{stem(tool)}Data")


def test_every_handler_module_is_a_tool_of_the_catalog() -> None:
    """No handler module without a catalog entry: it would be unreachable code."""
    for host, package in [*((host, package) for host, (package, _) in HOSTS.items()), ("tracker", TRACKER_HANDLERS)]:
        modules = {info.name for info in pkgutil.iter_modules(importlib.import_module(package).__path__)}
        assert modules == {spec.name.removeprefix("bee_") for spec in load_catalog(host)}, host
