"""The edge's connection registry as a pure object: connections are plain objects, the clock plain numbers."""

import logging

import pytest

from bee_hostkit.http_connections import CONNECTION_LOG_INTERVAL, Connections


class Conn:
    """A connection that records whether the registry closed it to make room."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False

    def close_idle(self) -> None:
        self.closed = True

    def __repr__(self) -> str:
        return self.name


def opened(registry: Connections, peer: str, count: int, now: float = 0.0) -> list[Conn]:
    conns = [Conn(f"{peer}#{n}") for n in range(count)]
    for conn in conns:
        assert registry.open(conn, peer, now)
    return conns


def test_an_address_over_its_cap_closes_its_own_longest_waiting_connection() -> None:
    registry = Connections(100, 3)
    a = opened(registry, "a", 3)
    b = opened(registry, "b", 2)
    newcomer = Conn("a#new")
    assert registry.open(newcomer, "a", 1.0)
    assert [c.closed for c in a] == [True, False, False] and not any(c.closed for c in b)
    assert registry.count == 5


def test_an_address_whose_connections_are_all_in_use_is_refused_and_others_are_not() -> None:
    registry = Connections(100, 2)
    a = opened(registry, "a", 2)
    for conn in a:
        registry.busy(conn)
    assert not registry.open(Conn("a#new"), "a", 1.0)
    assert not any(c.closed for c in a) and registry.count == 2
    assert registry.open(Conn("b#0"), "b", 1.0)
    # Once one is done with its request (waiting again), it makes room.
    registry.idle(a[1])
    assert registry.open(Conn("a#later"), "a", 2.0) and a[1].closed and not a[0].closed


def test_the_total_cap_closes_a_connection_of_the_address_holding_the_most_waiting_ones() -> None:
    registry = Connections(6, 6)
    few = opened(registry, "few", 2)
    many = opened(registry, "many", 4)
    assert registry.open(Conn("other"), "other", 1.0)
    assert many[0].closed and not any(c.closed for c in few)
    # In use, a connection is not counted as waiting: "few" now has more waiting ones.
    for conn in many[1:]:
        registry.busy(conn)
    assert registry.open(Conn("other#2"), "other", 2.0)
    assert few[0].closed


def test_a_connection_waiting_again_goes_to_the_back_and_a_lingering_one_to_the_front() -> None:
    registry = Connections(100, 3)
    first, second, third = opened(registry, "a", 3)
    registry.busy(first)
    registry.idle(first)  # answered, waiting for its next request: the most recent now
    registry.idle(third, first=True)  # lingering after a refusal: the first to go
    assert registry.open(Conn("a#4"), "a", 1.0) and third.closed
    assert registry.open(Conn("a#5"), "a", 1.0) and second.closed
    assert not first.closed


def test_closing_is_counted_once_and_unknown_connections_are_ignored() -> None:
    registry = Connections(3, 3)
    a = opened(registry, "a", 3)
    registry.closed(a[0])
    registry.closed(a[0])
    registry.closed(Conn("stranger"))
    registry.idle(Conn("stranger"))
    registry.busy(Conn("stranger"))
    assert registry.count == 2
    assert registry.open(Conn("b"), "b", 1.0) and not any(c.closed for c in a)


def test_the_per_address_cap_never_exceeds_the_total() -> None:
    assert Connections(5, 100).per_peer == 5


def test_making_room_and_refusing_are_logged_once_an_interval(caplog: pytest.LogCaptureFixture) -> None:
    registry = Connections(100, 1)
    with caplog.at_level(logging.WARNING, logger="bee.hostkit.edge"):
        conns = opened(registry, "a", 1)
        for n in range(50):  # each newcomer closes the one before it: reported at once, then counted
            conns.append(Conn(f"a#{n + 1}"))
            assert registry.open(conns[-1], "a", 0.5)
        registry.busy(conns[-1])
        assert not registry.open(Conn("a#refused"), "a", 1.0)
        assert len(caplog.records) == 1
        assert not registry.open(Conn("a#later"), "a", 0.5 + CONNECTION_LOG_INTERVAL)
    assert [r.getMessage() for r in caplog.records] == [
        "connections: closed 1 that were not in use to make room, refused 0 (the limits: 1 per client address, "
        "100 in all)",
        "connections: closed 49 that were not in use to make room, refused 2 (the limits: 1 per client address, "
        "100 in all)",
    ]
