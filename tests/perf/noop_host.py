"""Bee's host seam with nothing behind it: one no-op tool served through bee-hostkit over Bee's capped stdio.

The peer of tests/perf/minimal_server.py in the per-call benchmark: both answer the same trivial call, so the
difference is what Bee's seam costs (catalog, argument validation, the call object, the worker thread, the result
guard, the capped transport).
"""

from bee_contracts import ToolSpec
from bee_hostkit import Host, serve_stdio

ECHO = ToolSpec(
    host="core",
    name="echo",
    title="Echo",
    description="Answers ok.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    annotations={"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False},
)

if __name__ == "__main__":
    serve_stdio(Host("noop", [ECHO], {"echo": lambda call: {"ok": True}}))
