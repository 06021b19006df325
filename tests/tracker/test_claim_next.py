"""The next item in one step: claim without an id takes the first issue of ready's order that nobody holds, and
complete can claim the next in the same call (Beads' ``close --claim-next``)."""

from concurrent.futures import ThreadPoolExecutor

from bee_tracker.store import SqlStore
from tests.tracker.calls import ALICE, BOB, call, created_second, new, refused
from tests.tracker.test_claim_leases import CAROL, expired_claim


def test_claim_without_an_id_takes_ready_issues_in_ready_order(store: SqlStore) -> None:
    low = new(store, "low", priority=3)
    older = new(store, "older urgent", priority=1)
    newer = new(store, "newer urgent", priority=1)
    order = [issue["id"] for issue in call(store, "ready", ALICE)["issues"]]
    # Most urgent, then newest by the whole second Beads keeps, then id (both urgent ones were created now).
    assert order == [*sorted([newer, older], key=lambda issue_id: (-created_second(store, issue_id), issue_id)), low]
    taken = [call(store, "claim", actor) for actor in (ALICE, BOB, CAROL)]
    assert [answer["id"] for answer in taken] == order
    assert [answer["issue"]["id"] for answer in taken] == order
    assert [answer["assignee"] for answer in taken] == [ALICE, BOB, CAROL]
    assert taken[0]["issue"]["status"] == "in_progress"
    assert call(store, "claim", ALICE) == {"claimed": False}


def test_claim_without_an_id_takes_ready_filters(store: SqlStore) -> None:
    new(store, "plain", priority=0)
    wanted = new(store, "ui work", priority=2, labels=["ui", "web"])
    new(store, "ui but later", priority=3, labels=["ui"])
    assert call(store, "claim", ALICE, labels=["ui", "web"])["id"] == wanted
    assert call(store, "claim", ALICE, priority=2, labels=["ui"]) == {"claimed": False}
    assert call(store, "claim", ALICE, priority=3)["issue"]["title"] == "ui but later"


def test_claim_without_an_id_passes_over_held_and_blocked_issues(store: SqlStore) -> None:
    blocker = new(store, "blocker", priority=4)
    new(store, "blocked", priority=0, prerequisites=[blocker])
    assigned = new(store, "assigned", priority=0)
    call(store, "update", BOB, id=assigned, assignee=BOB)  # open but held by BOB (his claim, by the claim rules)
    assert assigned in [issue["id"] for issue in call(store, "ready", ALICE)["issues"]]
    assert call(store, "claim", ALICE)["id"] == blocker


def test_claim_without_an_id_takes_an_expired_claim(store: SqlStore) -> None:
    stranded, _ = expired_claim(store)
    taken = call(store, "claim", BOB)
    assert (taken["id"], taken["reclaimed_from"]) == (stranded, ALICE)


def test_an_id_with_the_filters_is_refused(store: SqlStore) -> None:
    issue_id = new(store)
    error = refused(store, "invalid_argument", "claim", ALICE, id=issue_id, priority=2)
    assert "without id" in error.message
    assert call(store, "get", ALICE, id=issue_id)["issue"]["status"] == "open"


def test_complete_claims_the_next_issue_the_completion_made_ready(store: SqlStore) -> None:
    first = new(store, "first", priority=4)
    then = new(store, "then", priority=0, prerequisites=[first])
    call(store, "claim", ALICE, id=first)
    done = call(store, "complete", ALICE, id=first, summary="done", claim_next=True, lease_seconds=600)
    assert (done["status"], done["completed"]) == ("closed", True)
    assert done["next"]["claimed"] is True and done["next"]["id"] == then
    assert (done["next"]["assignee"], done["next"]["lease_seconds"]) == (ALICE, 600)
    assert call(store, "complete", ALICE, id=then, claim_next=True)["next"] == {"claimed": False}


def test_complete_without_claim_next_claims_nothing(store: SqlStore) -> None:
    first = new(store, "first")
    waiting = new(store, "waiting")
    done = call(store, "complete", ALICE, id=first)
    assert "next" not in done
    assert call(store, "get", ALICE, id=waiting)["issue"]["status"] == "open"


def test_racing_claims_of_the_next_issue_each_get_a_different_one(store: SqlStore) -> None:
    """Threads in one process, each its own transaction (PostgreSQL: its own connection); the same race over real
    HTTP, across replicas, is tests/e2e/test_tracker_claim_next.py."""
    ids = {new(store, f"task {n}") for n in range(40)}
    actors = [f"agent-{n}@example.com" for n in range(8)]

    def drain(actor: str) -> list[str]:
        taken = []
        while (answer := call(store, "claim", actor))["claimed"]:
            taken.append(answer["id"])
        return taken

    with ThreadPoolExecutor(len(actors)) as pool:
        results = list(pool.map(drain, actors))
    claimed = [issue_id for taken in results for issue_id in taken]
    assert sorted(claimed) == sorted(ids)  # every issue once, none twice
