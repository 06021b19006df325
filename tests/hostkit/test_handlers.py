"""bound_handlers: handlers named module:function, bound to the host's context, imported on their first call."""

import sys

from bee_hostkit import bound_handlers, local_call


def test_a_handlers_module_is_imported_on_its_first_call_and_gets_the_context(tmp_path, monkeypatch):
    (tmp_path / "bee_lazy_tools.py").write_text(
        "def echo(context, call):\n    return {'context': context, 'args': dict(call.args)}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "bee_lazy_tools", raising=False)

    handlers = bound_handlers("the context", {"echo_tool": "bee_lazy_tools:echo"})
    assert handlers["echo_tool"].__name__ == "echo"
    assert "bee_lazy_tools" not in sys.modules  # binding imports nothing

    answer = handlers["echo_tool"](local_call("echo_tool", {"word": "hi"}))
    assert answer == {"context": "the context", "args": {"word": "hi"}}
    assert "bee_lazy_tools" in sys.modules
