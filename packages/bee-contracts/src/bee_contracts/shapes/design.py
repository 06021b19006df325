"""Design tool shapes: TypedDicts generated from the Design catalog. Do not edit; run `./dev docs`."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict


class DesignListArgs(TypedDict):
    bundle: NotRequired[str]
    kind: NotRequired[Literal["screen", "component", "style", "asset"]]


class DesignListDataBundleElementSource(TypedDict):
    path: str
    symbol: str | None


class DesignListDataBundleElement(TypedDict):
    id: str
    kind: Literal["screen", "component", "style", "asset"]
    entry: str
    state: Literal["imported", "mapped", "stale", "missing"]
    reasons: list[str]
    dependsOn: list[str]
    sources: list[DesignListDataBundleElementSource]


class DesignListDataBundle(TypedDict):
    id: str
    path: str
    digest: str
    importedAt: str
    fileCount: int
    bytes: int
    elements: list[DesignListDataBundleElement]


class DesignListDataOrphan(TypedDict):
    id: str
    state: Literal["missing"]
    reasons: list[str]


class DesignListDataStates(TypedDict):
    imported: int
    mapped: int
    stale: int
    missing: int


class DesignListData(TypedDict):
    mapFile: str
    bundles: list[DesignListDataBundle]
    orphans: list[DesignListDataOrphan]
    states: DesignListDataStates


class DesignListResult(TypedDict):
    schemaVersion: Literal[1]
    ok: Literal[True]
    trusted: Literal[False]
    acceptance: Literal[False]
    data: DesignListData


class DesignSliceArgs(TypedDict):
    id: str
    budgetBytes: int


class DesignSliceDataFile(TypedDict):
    path: str
    element: str
    role: Literal["entry", "own", "dependency"]
    mediaType: str
    size: int
    sha256: str
    text: NotRequired[str]
    cut: NotRequired[bool]
    omitted: NotRequired[Literal["binary", "budget"]]


class DesignSliceDataSource(TypedDict):
    path: str
    symbol: str | None
    sha256: str | None
    mappedSha256: str
    size: int | None
    text: NotRequired[str]
    cut: NotRequired[bool]
    omitted: NotRequired[Literal["binary", "budget", "gone"]]


class DesignSliceDataMissingItem(TypedDict):
    what: Literal["reference", "mapping", "source"]
    subject: str
    reason: str


class DesignSliceData(TypedDict):
    id: str
    kind: Literal["screen", "component", "style", "asset"]
    state: Literal["imported", "mapped", "stale", "missing"]
    reasons: list[str]
    complete: bool
    dependsOn: list[str]
    files: list[DesignSliceDataFile]
    sources: list[DesignSliceDataSource]
    omittedFiles: int
    missing: list[DesignSliceDataMissingItem]


class DesignSliceResult(TypedDict):
    schemaVersion: Literal[1]
    ok: Literal[True]
    trusted: Literal[False]
    acceptance: Literal[False]
    resultBytes: int
    data: DesignSliceData


class DesignVerifyArgs(TypedDict):
    bundle: NotRequired[str]


class DesignVerifyDataChecked(TypedDict):
    bundles: int
    files: int
    elements: int
    mappings: int
    specs: int


class DesignVerifyDataStates(TypedDict):
    imported: int
    mapped: int
    stale: int
    missing: int


class DesignVerifyDataFailure(TypedDict):
    check: Literal["manifest", "file", "graph", "mapping", "spec"]
    code: str
    subject: str
    message: str


class DesignVerifyData(TypedDict):
    intact: bool
    checked: DesignVerifyDataChecked
    states: DesignVerifyDataStates
    failures: list[DesignVerifyDataFailure]


class DesignVerifyResult(TypedDict):
    schemaVersion: Literal[1]
    ok: Literal[True]
    trusted: Literal[False]
    acceptance: Literal[False]
    data: DesignVerifyData


class VisualReportArgs(TypedDict):
    spec: str
    evidence: str
    elements: NotRequired[list[str]]
    viewports: NotRequired[list[str]]


class VisualReportSpec(TypedDict):
    name: str
    path: str
    digest: str


class VisualReportEvidence(TypedDict):
    path: str
    producer: str | None
    browser: str | None
    verified: bool


class VisualReportSummary(TypedDict):
    compared: int
    passed: int
    failed: int
    ignored: int


class VisualReportFindingTolerance(TypedDict):
    threshold: float
    antialiasing: Literal["ignore", "count"]
    maxDiffPixels: int | None
    maxDiffRatio: float | None


class Shift(TypedDict):
    dx: int
    dy: int
    explained: float


class VisualReportFinding(TypedDict):
    element: str
    viewport: str
    region: str | None
    status: Literal["pass", "fail", "ignored"]
    reasons: list[str]
    comparedPixels: int
    differingPixels: int
    antialiasedPixels: int
    ratio: float
    tolerance: VisualReportFindingTolerance
    boxes: list[list[int]]
    moreBoxes: int
    shift: Shift | None
    referenceSize: list[int]
    evidenceSize: list[int]


class VisualReportLimitation(TypedDict):
    kind: Literal[
        "evidence-unverified",
        "evidence-changed",
        "missing-evidence",
        "unspecified-evidence",
        "browser-mismatch",
        "font-mismatch",
    ]
    message: str
    element: str | None
    viewport: str | None


class VisualReportResult(TypedDict):
    schemaVersion: Literal[1]
    ok: Literal[True]
    trusted: Literal[False]
    acceptance: Literal[False]
    decision: Literal["pass", "fail", "inconclusive"]
    spec: VisualReportSpec
    evidence: VisualReportEvidence
    summary: VisualReportSummary
    findings: list[VisualReportFinding]
    limitations: list[VisualReportLimitation]
