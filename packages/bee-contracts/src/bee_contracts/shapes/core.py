"""Core tool shapes: TypedDicts generated from the Core catalog. Do not edit; run `./dev docs`."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class ArtifactQueryArgs(TypedDict):
    id: str
    queryJson: str
    budgetBytes: int


class ArtifactQueryRow(TypedDict):
    index: int
    lineNumber: NotRequired[int]
    value: Any


class ArtifactQueryResult(TypedDict):
    id: str
    kind: Literal["json", "jsonl"]
    totalRows: int
    matchedRows: int
    offset: int
    limit: int
    returned: int
    nextOffset: int | None
    rows: list[ArtifactQueryRow]
    resultBytes: int


class ArtifactReadArgs(TypedDict):
    id: str
    offsetBytes: int
    lengthBytes: int


class ArtifactReadResult(TypedDict):
    id: str
    sourceSha256: str
    sourceBytes: int
    offsetBytes: int
    lengthBytes: int
    nextOffsetBytes: int | None
    base64: str


class ArtifactSearchArgs(TypedDict):
    text: str
    ids: NotRequired[list[str]]
    limit: int
    offset: int
    budgetBytes: int


class ArtifactSearchCount(TypedDict):
    id: str
    name: str
    matches: int


class ArtifactSearchMatch(TypedDict):
    id: str
    lineNumber: int
    byteOffset: int
    lineBytes: int
    line: str
    cut: bool
    excerptOffsetBytes: NotRequired[int]


class ArtifactSearchResult(TypedDict):
    text: str
    totalMatches: int
    artifactsSearched: int
    counts: list[ArtifactSearchCount]
    damagedSkipped: int
    offset: int
    limit: int
    returned: int
    nextOffset: int | None
    matches: list[ArtifactSearchMatch]
    resultBytes: int


class CompressionRecoverArgs(TypedDict):
    id: str
    budgetBytes: int


class CompressionRecoverResult(TypedDict):
    id: str
    text: str
    sha256: str
    bytes: int
    createdAt: str
    method: str
    resultBytes: int


class ContextCompressArgs(TypedDict):
    text: str
    contentKind: str
    ratePercent: int


class ContextCompressResult(TypedDict):
    text: str
    compressed: bool
    enabled: bool
    semanticRisk: bool
    id: str | None
    originalSha256: str
    method: str
    ratePercent: int
    inputBytes: int
    inputTokens: int
    outputBytes: int
    outputTokens: int
    note: str


class ContextPacketArgs(TypedDict):
    manifestJson: str
    budgetBytes: int


class ContextPacketItem(TypedDict):
    id: str
    path: str
    representation: Literal["index", "outline", "body"]
    required: bool
    sha256: str
    bytes: int
    lines: NotRequired[int]
    language: NotRequired[str]
    binary: bool
    outlineSource: NotRequired[Literal["tree-sitter", "headings", "lines"]]
    symbols: NotRequired[list[dict[str, Any]]]
    symbol: NotRequired[str]
    startLine: NotRequired[int]
    endLine: NotRequired[int]
    text: NotRequired[str]


class ContextPacketOmittedItem(TypedDict):
    id: str
    required: bool
    reason: Literal["budget", "dependency_omitted"]
    bytes: int


class ContextPacketResult(TypedDict):
    status: Literal["complete", "incomplete", "needs_refinement"]
    complete: bool
    budgetBytes: int
    resultBytes: int
    items: list[ContextPacketItem]
    omitted: list[ContextPacketOmittedItem]
    overByBytes: NotRequired[int]


class PlanNextArgs(TypedDict):
    planId: str
    limit: int


class PlanNextStep(TypedDict):
    id: str
    title: str
    contract: str


class PlanNextOmitted(TypedDict):
    ready: int
    waiting: int
    claimed: int
    held: int
    reported_complete: int


class PlanNextResult(TypedDict):
    planId: str
    space: str
    steps: list[PlanNextStep]
    hasMore: bool
    omitted: PlanNextOmitted


class PlanShowArgs(TypedDict):
    planId: str


class PlanShowStep(TypedDict):
    id: str
    title: str
    contract: str
    state: Literal["ready", "waiting", "claimed", "held", "reported_complete"]
    status: str
    owner: str | None
    after: list[str]


class PlanShowResult(TypedDict):
    planId: str
    space: str
    title: str
    status: str
    steps: list[PlanShowStep]


class RepresentationDecodeArgs(TypedDict):
    packet: str
    budgetBytes: int


class RepresentationDecodeResult(TypedDict):
    json: str
    jsonBytes: int
    packetBytes: int
    resultBytes: int


class RepresentationEncodeArgs(TypedDict):
    json: str
    encoding: Literal["auto", "columnar", "compact", "json"]
    tokenizer: Literal["o200k", "cl100k"]
    budgetBytes: int


class RepresentationEncodeResult(TypedDict):
    packet: str
    encoding: Literal["auto", "columnar", "compact", "json"]
    tokenizer: Literal["o200k", "cl100k"]
    inputBytes: int
    inputTokens: int
    minifiedBytes: int
    minifiedTokens: int
    packetBytes: int
    packetTokens: int
    resultBytes: int


class SkillGetArgs(TypedDict):
    path: str


class SkillGetResult(TypedDict):
    path: str
    name: str
    description: str
    provider: str
    prerequisites: list[str]
    body: str
    sha256: str
    bytes: int


class SkillResolveArgs(TypedDict):
    path: str


class SkillResolveSkill(TypedDict):
    path: str
    name: str
    description: str
    provider: str
    prerequisites: list[str]
    body: str
    sha256: str
    bytes: int


class SkillResolveResult(TypedDict):
    path: str
    skills: list[SkillResolveSkill]


class SkillSearchArgs(TypedDict):
    query: str
    limit: int


class SkillSearchMatch(TypedDict):
    path: str
    name: str
    description: str
    provider: str
    score: float


class SkillSearchUnreadableItem(TypedDict):
    path: str
    error: str


class SkillSearchResult(TypedDict):
    matches: list[SkillSearchMatch]
    total: int
    unreadable: list[SkillSearchUnreadableItem]
