"""Counted nouns: one is singular, every other count plural."""

from bee_contracts.words import counted


def test_one_is_singular_and_every_other_count_is_plural() -> None:
    assert counted(1, "bundle") == "1 bundle"
    assert counted(0, "bundle") == "0 bundles"
    assert counted(2, "failure") == "2 failures"
    assert counted(3, "entry") == "3 entries"
    assert counted(2, "person", "people") == "2 people"
