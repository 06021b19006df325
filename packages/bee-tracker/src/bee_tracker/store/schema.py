"""Schema migrations for both dialects: numbered steps applied in order, recorded in ``meta.schema_version``."""

from __future__ import annotations

from typing import Any

_ISSUE_COLUMNS = """
  id TEXT PRIMARY KEY,
  title TEXT NOT NULL DEFAULT '',
  description TEXT, design TEXT, acceptance_criteria TEXT, notes TEXT,
  status TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 2,
  issue_type TEXT NOT NULL DEFAULT 'task',
  assignee TEXT, owner TEXT,
  created_at TEXT, created_by TEXT, updated_at TEXT, closed_at TEXT, close_reason TEXT,
  external_ref TEXT, defer_until TEXT,
  created_epoch {real}, defer_epoch {real},
  extra TEXT NOT NULL DEFAULT '{{}}',
  key_order TEXT,
  raw_line TEXT,
  raw_revision INTEGER,
  position BIGINT,
  state_revision INTEGER NOT NULL DEFAULT 1,
  activity_revision INTEGER NOT NULL DEFAULT 1,
  last_activity_at TEXT NOT NULL
"""

#: Indexes each new issue for search on SQLite (a bulk import drops it and indexes its issues at once instead).
SQLITE_FTS_INSERT_TRIGGER = """CREATE TRIGGER issues_fts_insert AFTER INSERT ON issues BEGIN
  INSERT INTO issues_fts (rowid, title, description, design, acceptance_criteria, notes)
  VALUES (new.rowid, new.title, new.description, new.design, new.acceptance_criteria, new.notes);
END"""

_COMMON = [
    "CREATE INDEX issues_ready ON issues (status, priority, created_epoch, id)",
    "CREATE INDEX issues_assignee ON issues (assignee)",
    """CREATE TABLE labels (
  issue_id TEXT NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (issue_id, label))""",
    "CREATE INDEX labels_label ON labels (label)",
    """CREATE TABLE dependencies (
  issue_id TEXT NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
  depends_on_id TEXT NOT NULL,
  type TEXT NOT NULL,
  created_at TEXT, created_by TEXT, metadata TEXT,
  extra TEXT NOT NULL DEFAULT '{}',
  position INTEGER NOT NULL,
  PRIMARY KEY (issue_id, depends_on_id, type))""",
    "CREATE INDEX dependencies_target ON dependencies (depends_on_id, type)",
    """CREATE TABLE idempotency (
  actor TEXT NOT NULL, key TEXT NOT NULL, tool TEXT NOT NULL, request_sha TEXT NOT NULL,
  response TEXT NOT NULL, created_at TEXT NOT NULL,
  PRIMARY KEY (actor, key))""",
]

# Migration 2: the history of every write (events), and the lines import keeps verbatim without making them live
# issues (kept_records: Beads tombstones, `_type` records other than issues, header lines, and lines whose id an
# earlier line of the same file already took). Their position shares the number space of issues.position, so an
# export interleaves them exactly where they were.
_EVENTS = """CREATE TABLE events (
  seq {key},
  issue_id TEXT NOT NULL,
  at TEXT NOT NULL,
  actor TEXT NOT NULL,
  tool TEXT NOT NULL,
  changes TEXT NOT NULL)"""
_KEPT = """CREATE TABLE kept_records (
  seq {key},
  position BIGINT NOT NULL,
  kind TEXT NOT NULL,
  issue_id TEXT,
  identity TEXT NOT NULL,
  line TEXT NOT NULL)"""
_MIGRATION_2 = [
    "CREATE INDEX events_issue ON events (issue_id, seq)",
    "CREATE INDEX kept_records_issue ON kept_records (issue_id)",
    "CREATE INDEX kept_records_identity ON kept_records (kind, identity)",
]
# Migration 3: the leases that bind a checkout to a collaboration space (Bee's own extension, see
# bee_tracker.leases). expires_epoch decides liveness; leaving sets it to the moment of leaving.
_LEASES = """CREATE TABLE leases (
  id TEXT PRIMARY KEY,
  space TEXT NOT NULL,
  holder TEXT NOT NULL,
  checkout_id TEXT NOT NULL,
  ttl_seconds INTEGER NOT NULL,
  joined_at TEXT NOT NULL,
  renewed_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  expires_epoch {real} NOT NULL,
  left_at TEXT)"""
_MIGRATION_3 = [
    "CREATE INDEX leases_binding ON leases (holder, space, checkout_id, expires_epoch)",
    "CREATE INDEX leases_expiry ON leases (expires_epoch)",
]
# Migration 4: the web board (bee_tracker.board). A signed-in person's session, found by the sha256 of its cookie
# (the cookie itself is never stored), with its CSRF token; the one-time sign-in links already spent, kept until
# they would have expired anyway; and an index that makes the board's change check (the newest activity) cheap.
_BOARD_SESSIONS = """CREATE TABLE board_sessions (
  id_sha TEXT PRIMARY KEY,
  actor TEXT NOT NULL,
  csrf TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_epoch {real} NOT NULL)"""
_BOARD_LINKS = """CREATE TABLE board_links (
  jti_sha TEXT PRIMARY KEY,
  expires_epoch {real} NOT NULL)"""
_MIGRATION_4 = [
    "CREATE INDEX board_sessions_expiry ON board_sessions (expires_epoch)",
    "CREATE INDEX board_links_expiry ON board_links (expires_epoch)",
    "CREATE INDEX issues_activity ON issues (last_activity_at)",
]
# Migration 5: what readiness and search read instead of recomputing (bee_tracker.store.readiness, .keys), one
# narrow row per issue, kept by the writer in the same transaction as every change: whether Beads keeps the issue
# as a wisp and whether it is pinned (from its imported line), whether it is eligible (open, not pinned, not a wisp,
# work), active (not closed or pinned, not a wisp), blocked (Beads' computed blocked set), held (a child of a
# blocked issue), ready apart from time, the latest defer_until among its parents, the lower-cased id, title and
# external_ref that substring search matches, and copies of the status, priority, created and defer times the lists
# filter and order by. A narrow row is cheap to rewrite (an import's rebuild never rewrites the wide issue rows);
# the indexes serve each list's order (priority, newest first, id; no created_at last) from its rows alone: SQLite's
# DESC already sorts NULL last, PostgreSQL's must be told.
_READINESS = """CREATE TABLE readiness (
  issue_id TEXT PRIMARY KEY REFERENCES issues(id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  priority INTEGER NOT NULL,
  created_epoch {real}, defer_epoch {real}, parent_defer_epoch {real},
  is_wisp INTEGER NOT NULL DEFAULT 0,
  is_pinned INTEGER NOT NULL DEFAULT 0,
  is_eligible INTEGER NOT NULL DEFAULT 0,
  is_active INTEGER NOT NULL DEFAULT 0,
  is_blocked INTEGER NOT NULL DEFAULT 0,
  is_held INTEGER NOT NULL DEFAULT 0,
  is_ready INTEGER NOT NULL DEFAULT 0,
  key_id TEXT NOT NULL, key_title TEXT NOT NULL, key_ref TEXT)"""


def _migration_5(real: str, newest_first: str) -> list[str]:
    return [
        _READINESS.format(real=real),
        # The trailing columns make each index cover its list's filter, so a total counts index entries only.
        f"CREATE INDEX readiness_ready ON readiness (is_ready, priority, created_epoch {newest_first}, issue_id, "
        "defer_epoch, parent_defer_epoch)",
        f"CREATE INDEX readiness_active ON readiness (is_active, priority, created_epoch {newest_first}, issue_id, "
        "status, is_blocked, is_held)",
        f"CREATE INDEX readiness_status ON readiness (status, priority, created_epoch {newest_first}, issue_id)",
        # The board's most recently closed, in order from the index (closed_at newest first, none last).
        f"CREATE INDEX issues_closed ON issues (status, closed_at {newest_first}, id)",
    ]


# Migration 6: an import finds the issues it wrote (and no others) by their position: to index them for search, to
# build their readiness and check their dependencies for cycles, at a cost that follows the import, not the store.
_MIGRATION_6 = ["CREATE INDEX issues_position ON issues (position)"]

# Migration 7: signing in the way MCP clients expect (bee_tracker.oauth): the built-in authorization server's
# signing keys, the clients it knows (registered, or fetched Client ID Metadata Documents), the requests waiting in
# a browser (a consent to give, a sign-in at the team's identity provider), the grants a person gave a client, the
# one-time authorization codes and the refresh tokens of each grant. Codes, refresh tokens and waiting requests are
# found by their sha256 (the values themselves are never stored); used_epoch marks one spent, so a second use is
# seen, on any replica. A board session now carries the scopes it was opened with (NULL: every scope, as before).
_OAUTH = [
    """CREATE TABLE oauth_keys (
  kid TEXT PRIMARY KEY,
  secret TEXT NOT NULL,
  created_epoch {real} NOT NULL)""",
    """CREATE TABLE oauth_clients (
  client_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  metadata TEXT NOT NULL,
  secret TEXT,
  created_epoch {real} NOT NULL,
  fetched_epoch {real})""",
    """CREATE TABLE signin_requests (
  id_sha TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  payload TEXT NOT NULL,
  expires_epoch {real} NOT NULL)""",
    """CREATE TABLE oauth_grants (
  grant_id TEXT PRIMARY KEY,
  actor TEXT NOT NULL,
  client_id TEXT NOT NULL,
  client_name TEXT,
  scopes TEXT NOT NULL,
  resource TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_epoch {real} NOT NULL,
  refreshed_epoch {real},
  revoked_epoch {real},
  revoked_reason TEXT)""",
    """CREATE TABLE oauth_codes (
  code_sha TEXT PRIMARY KEY,
  grant_id TEXT NOT NULL,
  client_id TEXT NOT NULL,
  payload TEXT NOT NULL,
  expires_epoch {real} NOT NULL,
  used_epoch {real})""",
    """CREATE TABLE oauth_refresh (
  token_sha TEXT PRIMARY KEY,
  grant_id TEXT NOT NULL,
  expires_epoch {real} NOT NULL,
  used_epoch {real})""",
    "CREATE INDEX oauth_grants_actor ON oauth_grants (actor, created_epoch)",
    "CREATE INDEX oauth_refresh_grant ON oauth_refresh (grant_id)",
    "CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_epoch)",
    "CREATE INDEX signin_requests_expiry ON signin_requests (expires_epoch)",
    "ALTER TABLE board_sessions ADD COLUMN scopes TEXT",
]


def _migration_7(real: str) -> list[str]:
    return [statement.format(real=real) for statement in _OAUTH]


# Migration 8 (the fleet's work loop): a claim's
# lease (bee_tracker.store.claimlease), one row per claimed issue that has one, judged by the database's clock:
# the holder, how long each renewal lasts (NULL: it never expires, a row kept only to fence out the holder whose
# expired claim this one took), when it was granted and last renewed and when it expires (as written, and as
# seconds since the epoch), the replica that granted it, and the holder it displaced. The readiness row copies the
# expiry of an in-progress claim (lease_epoch): ready offers such an issue once the database's clock passes it, so
# the ready index covers it too. The audit log is the events table, with the replica that wrote each event, and
# indexes for reading it by actor, tool and time.
_CLAIM_LEASES = """CREATE TABLE claim_leases (
  issue_id TEXT PRIMARY KEY REFERENCES issues(id) ON DELETE CASCADE,
  holder TEXT NOT NULL,
  ttl_seconds INTEGER,
  granted_at TEXT NOT NULL,
  heartbeat_at TEXT,
  expires_at TEXT,
  expires_epoch {real},
  granted_node TEXT,
  lost_by TEXT,
  lost_at TEXT)"""


def _migration_8(real: str, newest_first: str) -> list[str]:
    return [
        _CLAIM_LEASES.format(real=real),
        "CREATE INDEX claim_leases_expiry ON claim_leases (expires_epoch)",
        f"ALTER TABLE readiness ADD COLUMN lease_epoch {real}",
        "DROP INDEX readiness_ready",
        f"CREATE INDEX readiness_ready ON readiness (is_ready, priority, created_epoch {newest_first}, issue_id, "
        "defer_epoch, parent_defer_epoch, lease_epoch)",
        "ALTER TABLE events ADD COLUMN replica TEXT",
        "CREATE INDEX events_actor ON events (actor, seq)",
        "CREATE INDEX events_tool ON events (tool, seq)",
        "CREATE INDEX events_at ON events (at)",
    ]


SQLITE: list[list[str]] = [
    [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE issues (" + _ISSUE_COLUMNS.format(real="REAL") + ")",
        *_COMMON,
        """CREATE TABLE comments (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  issue_id TEXT NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
  comment_id TEXT NOT NULL, int_id INTEGER,
  author TEXT, text TEXT NOT NULL, created_at TEXT,
  extra TEXT NOT NULL DEFAULT '{}')""",
        "CREATE INDEX comments_issue ON comments (issue_id, seq)",
        "CREATE INDEX comments_int_id ON comments (int_id)",
        """CREATE VIRTUAL TABLE issues_fts USING fts5(
  title, description, design, acceptance_criteria, notes, tokenize = 'unicode61')""",
        SQLITE_FTS_INSERT_TRIGGER,
        """CREATE TRIGGER issues_fts_update AFTER UPDATE OF title, description, design, acceptance_criteria, notes
  ON issues BEGIN
  DELETE FROM issues_fts WHERE rowid = old.rowid;
  INSERT INTO issues_fts (rowid, title, description, design, acceptance_criteria, notes)
  VALUES (new.rowid, new.title, new.description, new.design, new.acceptance_criteria, new.notes);
END""",
        """CREATE TRIGGER issues_fts_delete AFTER DELETE ON issues BEGIN
  DELETE FROM issues_fts WHERE rowid = old.rowid;
END""",
    ],
    [
        _EVENTS.format(key="INTEGER PRIMARY KEY AUTOINCREMENT"),
        _KEPT.format(key="INTEGER PRIMARY KEY AUTOINCREMENT"),
        *_MIGRATION_2,
    ],
    [_LEASES.format(real="REAL"), *_MIGRATION_3],
    [_BOARD_SESSIONS.format(real="REAL"), _BOARD_LINKS.format(real="REAL"), *_MIGRATION_4],
    _migration_5("REAL", "DESC"),
    _MIGRATION_6,
    _migration_7("REAL"),
    _migration_8("REAL", "DESC"),
]

POSTGRES: list[list[str]] = [
    [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE issues ("
        + _ISSUE_COLUMNS.format(real="DOUBLE PRECISION")
        + """,
  search tsvector GENERATED ALWAYS AS (to_tsvector('simple',
    coalesce(title, '') || ' ' || coalesce(description, '') || ' ' || coalesce(design, '') || ' ' ||
    coalesce(acceptance_criteria, '') || ' ' || coalesce(notes, ''))) STORED)""",
        *_COMMON,
        "CREATE INDEX issues_search ON issues USING GIN (search)",
        "CREATE SEQUENCE comment_ids",
        """CREATE TABLE comments (
  seq BIGSERIAL PRIMARY KEY,
  issue_id TEXT NOT NULL REFERENCES issues(id) ON DELETE CASCADE,
  comment_id TEXT NOT NULL, int_id BIGINT,
  author TEXT, text TEXT NOT NULL, created_at TEXT,
  extra TEXT NOT NULL DEFAULT '{}')""",
        "CREATE INDEX comments_issue ON comments (issue_id, seq)",
    ],
    [_EVENTS.format(key="BIGSERIAL PRIMARY KEY"), _KEPT.format(key="BIGSERIAL PRIMARY KEY"), *_MIGRATION_2],
    [_LEASES.format(real="DOUBLE PRECISION"), *_MIGRATION_3],
    [_BOARD_SESSIONS.format(real="DOUBLE PRECISION"), _BOARD_LINKS.format(real="DOUBLE PRECISION"), *_MIGRATION_4],
    _migration_5("DOUBLE PRECISION", "DESC NULLS LAST"),
    _MIGRATION_6,
    _migration_7("DOUBLE PRECISION"),
    _migration_8("DOUBLE PRECISION", "DESC NULLS LAST"),
]

LATEST = len(SQLITE)
assert len(POSTGRES) == LATEST, "every migration exists for both dialects"


def apply(tx: Any, steps: list[list[str]], *, has_meta: bool) -> int:
    """Apply the migrations of ``steps`` not yet recorded in ``meta``; return the schema version.

    ``tx`` is an open write transaction (see :mod:`.db`); statements run without parameters.
    """
    version = 0
    if has_meta:
        found = tx.row("SELECT value FROM meta WHERE key = 'schema_version'")
        version = int(found[0]) if found else 0
    for number, statements in enumerate(steps[version:], start=version + 1):
        for statement in statements:
            tx.run(statement)
        tx.run(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [str(number)],
        )
    return max(version, LATEST)
