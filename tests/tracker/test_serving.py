"""How `bee tracker serve` shares its limits among `--workers N`, and the options it refuses before starting."""

from pathlib import Path

import pytest

from bee_tracker.config import TrackerConfig
from bee_tracker.serving import _limits, worker_share

PG = "postgresql://bee@127.0.0.1:5432/bee"


def test_the_limits_are_totals_divided_evenly_among_the_workers() -> None:
    config = TrackerConfig(home=Path("/nowhere"), store_url=PG, max_in_flight=100, max_connections=20)
    share = worker_share(config, 3)
    assert (share.max_in_flight, share.max_connections) == (33, 6)  # rounded down: never more than the totals
    assert (config.max_in_flight, config.max_connections) == (100, 20)
    assert worker_share(config, 2).max_in_flight == 50


@pytest.mark.parametrize("store", [None, "/tmp/tracker.db", "sqlite:///tmp/tracker.db"])
def test_several_workers_need_postgresql(store: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BEE_TRACKER_STORE", raising=False)
    with pytest.raises(ValueError, match="--workers 2 needs a PostgreSQL store"):
        worker_share(TrackerConfig(home=Path("/nowhere"), store_url=store), 2)


def test_the_store_may_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BEE_TRACKER_STORE", PG)
    assert worker_share(TrackerConfig(home=Path("/nowhere")), 2).max_connections == 10


def test_a_limit_smaller_than_the_number_of_workers_is_refused() -> None:
    config = TrackerConfig(home=Path("/nowhere"), store_url=PG, max_in_flight=3)
    with pytest.raises(ValueError, match="--max-in-flight 3 cannot be shared by 4 workers"):
        worker_share(config, 4)


def test_the_queue_target_and_its_floor_reach_the_edge_whole_in_every_worker() -> None:
    config = TrackerConfig(home=Path("/nowhere"), store_url=PG, max_queue_seconds=0.4, min_in_flight=8)
    share = worker_share(config, 4)
    limits = _limits(share)
    assert (limits.max_in_flight, limits.max_queue_seconds, limits.min_in_flight) == (25, 0.4, 8)
    # 0 is the CLI's way to say count alone.
    assert _limits(TrackerConfig(home=Path("/nowhere"), max_queue_seconds=0)).max_queue_seconds is None


@pytest.mark.parametrize("ttl", ["0", "604801", "a while"])
def test_a_claim_ttl_out_of_its_bounds_is_refused_before_anything_starts(tmp_path: Path, ttl: str) -> None:
    from tests.harness.collab import bee_here

    home = tmp_path / "home"
    done = bee_here("tracker", "serve", "--home", str(home), "--claim-ttl", ttl, cwd=tmp_path)
    assert done.returncode == 2
    assert "--claim-ttl" in done.stderr and ("1<=x<=604800" in done.stderr or "not a valid integer" in done.stderr)
    assert not home.exists()
