"""The checkout a stdio host serves and the instance it selects: one rule for both hosts and the warm front end."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bee_contracts import BeeError
from bee_contracts.layout import Checkout, checkout_instance, select_instance


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "repo").mkdir()
    return (tmp_path / "repo").resolve()


def test_the_instance_is_the_one_chosen_else_the_environments_else_the_checkouts(repo: Path) -> None:
    assert Checkout.select(str(repo), None, {}) == Checkout(str(repo), str(repo / ".bee"))
    assert Checkout.select(str(repo), None, {"BEE_INSTANCE_ROOT": "/x/../y"}).instance == "/y"
    assert Checkout.select(str(repo), "/given", {"BEE_INSTANCE_ROOT": "/y"}).instance == "/given"
    assert select_instance(str(repo), None, {"BEE_INSTANCE_ROOT": "~/inst"}) == os.path.expanduser("~/inst")


def test_the_checkout_is_resolved_and_a_relative_one_is_refused_only_when_it_must_be_absolute(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "sub").mkdir()
    (repo / "link").symlink_to(repo / "sub")
    monkeypatch.chdir(repo)
    assert Checkout.select("link", None, {}).path == str(repo / "sub")
    assert Checkout.select(".", None, {}).path == str(repo)
    with pytest.raises(BeeError, match="is relative; pass an absolute path") as caught:
        Checkout.select("link", None, {}, absolute=True)
    assert caught.value.code == "invalid_argument"
    assert Checkout.find("link", None, {}, absolute=True) is None
    assert Checkout.select(str(repo / "link"), None, {}, absolute=True).path == str(repo / "sub")


@pytest.mark.parametrize(
    ("given", "said"),
    [("missing", "does not exist; pass an existing directory"), ("file", "is not a directory"), ("", "is empty")],
)
def test_a_checkout_that_is_no_directory_is_refused_saying_why(repo: Path, given: str, said: str) -> None:
    (repo / "file").write_text("x")
    path = str(repo / given) if given else ""
    with pytest.raises(BeeError, match=said) as caught:
        Checkout.select(path, None, {}, absolute=True)
    assert caught.value.code == "invalid_argument"
    assert Checkout.find(path, None, {}, absolute=True) is None


def test_a_dot_bee_linking_out_is_refused_unless_an_instance_is_chosen_and_one_inside_is_followed(
    repo: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "other" / ".bee"
    elsewhere.mkdir(parents=True)
    (repo / ".bee").symlink_to(elsewhere)
    for refuse in (lambda: Checkout.select(str(repo), None, {}), lambda: checkout_instance(repo)):
        with pytest.raises(BeeError, match="outside the checkout; Bee does not follow it") as caught:
            refuse()
        assert caught.value.code == "outside_root" and caught.value.details == {
            "instance": str(repo / ".bee"),
            "target": str(elsewhere),
        }
    assert Checkout.find(str(repo), None, {}) is None
    assert Checkout.select(str(repo), str(elsewhere), {}).instance == str(elsewhere)
    assert Checkout.select(str(repo), None, {"BEE_INSTANCE_ROOT": str(elsewhere)}).instance == str(elsewhere)
    (repo / ".bee").unlink()
    (repo / "state").mkdir()
    (repo / ".bee").symlink_to(repo / "state")
    assert Checkout.select(str(repo), None, {}).instance == str(repo / "state")
    assert checkout_instance(repo) == repo / ".bee"
