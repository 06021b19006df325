"""bound_handlers: a tool's handler found from its name, bound to the host's context, imported on its first call."""

import sys
from pathlib import Path

import pytest

from bee_contracts import ToolSpec
from bee_hostkit import bound_handlers, local_call
from bee_hostkit.handlers import handler_module, load_handler


def _spec(name: str) -> ToolSpec:
    schema = {"type": "object"}
    hints = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    return ToolSpec(
        host="test",
        name=name,
        title=name,
        description=name,
        input_schema=schema,
        output_schema=schema,
        annotations=hints,
    )


def test_a_handler_module_is_named_after_its_tool_without_the_bee_prefix() -> None:
    assert handler_module("bee_core.handlers", "bee_context_packet") == "bee_core.handlers.context_packet"
    assert handler_module("bee_tracker.handlers", "add_note") == "bee_tracker.handlers.add_note"


def test_a_handlers_module_is_imported_on_its_first_call_and_gets_the_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bee_lazy_tools").mkdir()
    (tmp_path / "bee_lazy_tools" / "__init__.py").write_text("")
    (tmp_path / "bee_lazy_tools" / "echo.py").write_text(
        "def bee_echo(context, call):\n    return {'context': context, 'args': dict(call.args)}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in ("bee_lazy_tools", "bee_lazy_tools.echo"):
        monkeypatch.delitem(sys.modules, module, raising=False)

    handlers = bound_handlers("the context", "bee_lazy_tools", [_spec("bee_echo")])
    assert list(handlers) == ["bee_echo"] and handlers["bee_echo"].__name__ == "bee_echo"
    assert "bee_lazy_tools.echo" not in sys.modules  # binding imports nothing

    answer = handlers["bee_echo"](local_call("bee_echo", {"word": "hi"}))
    assert answer == {"context": "the context", "args": {"word": "hi"}}
    assert "bee_lazy_tools.echo" in sys.modules


def test_a_tool_without_its_handler_fails_naming_the_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "bee_empty_tools").mkdir()
    (tmp_path / "bee_empty_tools" / "__init__.py").write_text("")
    with pytest.raises(ModuleNotFoundError, match=r"bee_empty_tools\.missing"):
        load_handler("bee_empty_tools", "bee_missing")
