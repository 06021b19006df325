"""Discovery tool shapes: TypedDicts generated from the Discovery catalog. Do not edit; run `./dev docs`."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class ToolInvokeArgs(TypedDict):
    name: str
    arguments: dict[str, Any]


class ToolInvokeResult(TypedDict):
    pass


class ToolSchemaArgs(TypedDict):
    name: str


class ToolSchemaResult(TypedDict):
    name: str
    title: str
    description: str
    inputSchema: dict[str, Any]
    outputSchema: dict[str, Any]
    annotations: dict[str, Any]


class ToolSearchArgs(TypedDict):
    query: NotRequired[str]
    limit: int


class ToolSearchTool(TypedDict):
    name: str
    title: str
    summary: str
    score: NotRequired[float]


class ToolSearchResult(TypedDict):
    tools: list[ToolSearchTool]
    total: int
