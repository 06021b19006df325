"""Tracker tool shapes: TypedDicts generated from the Tracker catalog. Do not edit; run `./dev docs`."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class AddNoteArgs(TypedDict):
    id: str
    text: str
    idempotency_key: NotRequired[str]
    actor: NotRequired[str]


class AddNoteData(TypedDict):
    id: str
    status: str
    assignee: NotRequired[str | None]
    state_revision: int
    activity_revision: int
    last_activity_at: str
    replayed: NotRequired[bool]
    comment: dict[str, Any]


class AddNoteResult(TypedDict):
    data: AddNoteData


class ClaimArgs(TypedDict):
    id: NotRequired[str]
    priority: NotRequired[int]
    labels: NotRequired[list[str]]
    lease_seconds: NotRequired[int]
    idempotency_key: NotRequired[str]
    actor: NotRequired[str]


class ClaimDataIssue(TypedDict):
    id: Any
    title: Any
    status: Any
    priority: Any
    issue_type: NotRequired[Any]
    assignee: NotRequired[Any]
    labels: NotRequired[Any]
    updated_at: NotRequired[Any]
    state_revision: NotRequired[Any]


class ClaimData(TypedDict):
    id: NotRequired[str]
    status: NotRequired[str]
    assignee: NotRequired[str | None]
    state_revision: NotRequired[int]
    activity_revision: NotRequired[int]
    last_activity_at: NotRequired[str]
    replayed: NotRequired[bool]
    claimed: bool
    already_held: NotRequired[bool]
    lease_seconds: NotRequired[int | None]
    lease_expires_at: NotRequired[str | None]
    reclaimed_from: NotRequired[str]
    issue: NotRequired[ClaimDataIssue]


class ClaimResult(TypedDict):
    data: ClaimData


class CompleteArgs(TypedDict):
    id: str
    summary: NotRequired[str]
    evidence: NotRequired[str]
    expected_revision: NotRequired[int]
    claim_next: bool
    lease_seconds: NotRequired[int]
    idempotency_key: NotRequired[str]
    actor: NotRequired[str]


class CompleteDataNextIssue(TypedDict):
    id: Any
    title: Any
    status: Any
    priority: Any
    issue_type: NotRequired[Any]
    assignee: NotRequired[Any]
    labels: NotRequired[Any]
    updated_at: NotRequired[Any]
    state_revision: NotRequired[Any]


class CompleteDataNext(TypedDict):
    id: NotRequired[str]
    status: NotRequired[str]
    assignee: NotRequired[str | None]
    state_revision: NotRequired[int]
    activity_revision: NotRequired[int]
    last_activity_at: NotRequired[str]
    replayed: NotRequired[bool]
    claimed: bool
    already_held: NotRequired[bool]
    lease_seconds: NotRequired[int | None]
    lease_expires_at: NotRequired[str | None]
    reclaimed_from: NotRequired[str]
    issue: NotRequired[CompleteDataNextIssue]


class CompleteData(TypedDict):
    id: str
    status: str
    assignee: NotRequired[str | None]
    state_revision: int
    activity_revision: int
    last_activity_at: str
    replayed: NotRequired[bool]
    completed: NotRequired[bool]
    next: NotRequired[CompleteDataNext]


class CompleteResult(TypedDict):
    data: CompleteData


class CreateArgs(TypedDict):
    title: str
    description: NotRequired[str]
    design: NotRequired[str]
    acceptance_criteria: NotRequired[str]
    notes: NotRequired[str]
    priority: NotRequired[int]
    issue_type: NotRequired[str]
    labels: NotRequired[list[str]]
    parent: NotRequired[str]
    prerequisites: NotRequired[list[str]]
    external_ref: NotRequired[str]
    idempotency_key: NotRequired[str]
    actor: NotRequired[str]


class CreateData(TypedDict):
    id: str
    status: str
    assignee: NotRequired[str | None]
    state_revision: int
    activity_revision: int
    last_activity_at: str
    replayed: NotRequired[bool]
    created: NotRequired[bool]


class CreateResult(TypedDict):
    data: CreateData


class GetArgs(TypedDict):
    id: str
    comments_limit: int


class GetDataDependsOnItem(TypedDict):
    id: str
    type: str
    title: str | None
    status: str | None
    exists: bool


class GetDataDependent(TypedDict):
    id: str
    type: str
    title: str | None
    status: str | None
    exists: bool


class GetDataHistoryItem(TypedDict):
    at: str
    actor: str
    tool: str
    changes: dict[str, Any]


class GetDataClaim(TypedDict):
    holder: str
    since: str | None
    lease_seconds: int | None
    lease_expires_at: str | None
    expired: bool
    expires_in_seconds: float | None


class GetData(TypedDict):
    issue: dict[str, Any]
    depends_on: list[GetDataDependsOnItem]
    depends_on_count: int
    dependents: list[GetDataDependent]
    dependents_count: int
    ready: bool
    blocked_by: list[str]
    comment_count: int
    history: list[GetDataHistoryItem]
    history_count: int
    state_revision: int
    activity_revision: int
    last_activity_at: str
    claim: NotRequired[GetDataClaim]


class GetResult(TypedDict):
    data: GetData


class HandoffArgs(TypedDict):
    id: str
    done: NotRequired[str]
    remaining: NotRequired[str]
    next: NotRequired[str]
    release: bool
    expected_revision: NotRequired[int]
    idempotency_key: NotRequired[str]
    actor: NotRequired[str]


class HandoffData(TypedDict):
    id: str
    status: str
    assignee: NotRequired[str | None]
    state_revision: int
    activity_revision: int
    last_activity_at: str
    replayed: NotRequired[bool]
    comment: dict[str, Any]
    released: NotRequired[bool]


class HandoffResult(TypedDict):
    data: HandoffData


class LeaseGetArgs(TypedDict):
    id: str


class LeaseGetData(TypedDict):
    id: str
    space: str
    holder: str
    checkout_id: str
    ttl_seconds: int
    joined_at: str
    renewed_at: str
    expires_at: str
    left_at: str | None
    live: bool
    expires_in_seconds: float
    now: str


class LeaseGetResult(TypedDict):
    data: LeaseGetData


class LeaseJoinArgs(TypedDict):
    space: str
    checkout_id: str
    ttl_seconds: int


class LeaseJoinData(TypedDict):
    id: str
    space: str
    holder: str
    checkout_id: str
    ttl_seconds: int
    joined_at: str
    renewed_at: str
    expires_at: str
    left_at: str | None
    live: bool
    expires_in_seconds: float
    now: str
    created: bool


class LeaseJoinResult(TypedDict):
    data: LeaseJoinData


class LeaseLeaveArgs(TypedDict):
    id: str


class LeaseLeaveData(TypedDict):
    id: str
    space: str
    holder: str
    checkout_id: str
    ttl_seconds: int
    joined_at: str
    renewed_at: str
    expires_at: str
    left_at: str | None
    live: bool
    expires_in_seconds: float
    now: str
    left: bool


class LeaseLeaveResult(TypedDict):
    data: LeaseLeaveData


class LeaseRenewArgs(TypedDict):
    id: str
    ttl_seconds: NotRequired[int]


class LeaseRenewData(TypedDict):
    id: str
    space: str
    holder: str
    checkout_id: str
    ttl_seconds: int
    joined_at: str
    renewed_at: str
    expires_at: str
    left_at: str | None
    live: bool
    expires_in_seconds: float
    now: str


class LeaseRenewResult(TypedDict):
    data: LeaseRenewData


class LinkArgs(TypedDict):
    id: str
    target: str
    type: str
    action: Literal["add", "remove"]
    idempotency_key: NotRequired[str]
    actor: NotRequired[str]


class LinkData(TypedDict):
    id: str
    status: str
    assignee: NotRequired[str | None]
    state_revision: int
    activity_revision: int
    last_activity_at: str
    replayed: NotRequired[bool]
    changed: NotRequired[bool]
    action: NotRequired[str]
    target: NotRequired[str]
    type: NotRequired[str]


class LinkResult(TypedDict):
    data: LinkData


class ReadyArgs(TypedDict):
    priority: NotRequired[int]
    labels: NotRequired[list[str]]
    limit: int
    offset: int
    whole: bool


class ReadyDataIssue(TypedDict):
    id: Any
    title: Any
    status: Any
    priority: Any
    issue_type: NotRequired[Any]
    assignee: NotRequired[Any]
    labels: NotRequired[Any]
    updated_at: NotRequired[Any]
    state_revision: NotRequired[Any]
    record: NotRequired[dict[str, Any]]
    comment_count: NotRequired[int]
    dependent_count: NotRequired[int]
    blocked_by: NotRequired[list[str]]


class ReadyData(TypedDict):
    issues: list[ReadyDataIssue]
    total: int
    offset: int
    has_more: bool


class ReadyResult(TypedDict):
    data: ReadyData


class ReleaseArgs(TypedDict):
    id: str
    reason: NotRequired[str]
    expected_revision: NotRequired[int]
    idempotency_key: NotRequired[str]
    actor: NotRequired[str]


class ReleaseData(TypedDict):
    id: str
    status: str
    assignee: NotRequired[str | None]
    state_revision: int
    activity_revision: int
    last_activity_at: str
    replayed: NotRequired[bool]
    released: NotRequired[bool]


class ReleaseResult(TypedDict):
    data: ReleaseData


class SearchArgs(TypedDict):
    query: NotRequired[str]
    status: NotRequired[list[str]]
    assignee: NotRequired[str]
    labels: NotRequired[list[str]]
    issue_type: NotRequired[str]
    limit: int
    offset: int
    whole: bool


class SearchDataIssue(TypedDict):
    id: Any
    title: Any
    status: Any
    priority: Any
    issue_type: NotRequired[Any]
    assignee: NotRequired[Any]
    labels: NotRequired[Any]
    updated_at: NotRequired[Any]
    state_revision: NotRequired[Any]
    record: NotRequired[dict[str, Any]]
    comment_count: NotRequired[int]
    dependent_count: NotRequired[int]
    blocked_by: NotRequired[list[str]]


class SearchData(TypedDict):
    issues: list[SearchDataIssue]
    total: int
    offset: int
    has_more: bool


class SearchResult(TypedDict):
    data: SearchData


class UpdateArgs(TypedDict):
    id: str
    title: NotRequired[str]
    description: NotRequired[str]
    design: NotRequired[str]
    acceptance_criteria: NotRequired[str]
    notes: NotRequired[str]
    status: NotRequired[str]
    priority: NotRequired[int]
    issue_type: NotRequired[str]
    assignee: NotRequired[str | None]
    external_ref: NotRequired[str | None]
    defer_until: NotRequired[str | None]
    labels: NotRequired[list[str]]
    add_labels: NotRequired[list[str]]
    remove_labels: NotRequired[list[str]]
    expected_revision: NotRequired[int]
    idempotency_key: NotRequired[str]
    actor: NotRequired[str]


class UpdateData(TypedDict):
    id: str
    status: str
    assignee: NotRequired[str | None]
    state_revision: int
    activity_revision: int
    last_activity_at: str
    replayed: NotRequired[bool]
    updated: NotRequired[bool]


class UpdateResult(TypedDict):
    data: UpdateData
