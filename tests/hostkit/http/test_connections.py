"""The edge's connection registry as a pure object: connections are plain objects, the clock plain numbers."""

import logging

import pytest

from bee_hostkit.http.connections import CONNECTION_LOG_INTERVAL, Connections, Waiting


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
    registry.waits(a[1], Waiting.SERVED)
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


def test_the_total_cap_takes_the_earliest_class_first_whoever_holds_more() -> None:
    registry = Connections(6, 6)
    served = opened(registry, "pool", 5)
    for conn in served:
        registry.waits(conn, Waiting.SERVED)  # a client's pooled connections, answered
    (silent,) = opened(registry, "flood", 1)
    assert registry.open(Conn("new"), "new", 1.0)
    assert silent.closed and not any(c.closed for c in served)


def test_connections_make_room_in_the_order_of_what_they_wait_for() -> None:
    registry = Connections(100, 5)
    conns = opened(registry, "a", 5)
    served, partial, shed, silent, refused = conns
    registry.waits(served, Waiting.SERVED)
    registry.waits(partial, Waiting.PARTIAL)
    registry.waits(shed, Waiting.SHED)
    registry.waits(refused, Waiting.REFUSED)
    closed_in_order = []
    for n in range(5):
        newcomer = Conn(f"new#{n}")
        assert registry.open(newcomer, "a", 1.0)
        registry.busy(newcomer)  # its request is being served
        closed_in_order += [c for c in conns if c.closed and c not in closed_in_order]
    assert closed_in_order == [refused, shed, silent, partial, served]


def test_a_connection_waiting_again_goes_to_the_back_of_its_class() -> None:
    registry = Connections(100, 3)
    first, second, third = opened(registry, "a", 3)
    registry.busy(first)
    registry.waits(first, Waiting.SILENT)  # the most recent of its class now
    assert registry.open(Conn("a#4"), "a", 1.0) and second.closed
    assert registry.open(Conn("a#5"), "a", 1.0) and third.closed
    assert not first.closed


def test_closing_is_counted_once_and_unknown_connections_are_ignored() -> None:
    registry = Connections(3, 3)
    a = opened(registry, "a", 3)
    registry.closed(a[0])
    registry.closed(a[0])
    registry.closed(Conn("stranger"))
    registry.waits(Conn("stranger"), Waiting.SERVED)
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


def test_room_counts_the_connections_accepted_but_not_yet_opened() -> None:
    # asyncio makes the protocol a turn before it tells it of its connection: the edge's loop accepts no more at once
    # than fit, so those are counted from the moment they exist.
    registry = Connections(10, 10)
    opened(registry, "a", 4)
    for _ in range(3):
        registry.expect()
    assert registry.room() == 3
    assert registry.open(Conn("b#0"), "b", 1.0)
    assert registry.room() == 3 and registry.expected == 2
    for _ in range(10):
        registry.expect()
    assert registry.room() == 0
