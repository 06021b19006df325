"""Manifests: files with sha256, discovered and declared elements, dependencies, digests, cycles."""

import json
from collections.abc import Mapping
from typing import Any

import pytest

from bee_contracts import BeeError
from bee_design.bundle.building import build_manifest
from bee_design.bundle.manifest import parse_manifest
from bee_design.bundle.reading import BundleFile, RawBundle, read_bundle
from bee_design.digests import of_bytes
from tests.design.helpers import SHOP


def raw(files: Mapping[str, str | bytes]) -> RawBundle:
    return RawBundle(
        "folder",
        "t",
        tuple(BundleFile(p, d.encode() if isinstance(d, str) else d) for p, d in sorted(files.items())),
    )


def test_the_fixture_bundle_is_discovered_as_screens_components_styles_and_assets() -> None:
    manifest = build_manifest(read_bundle(SHOP), "shop", "2026-01-01T00:00:00+00:00")
    kinds = {e.id: e.kind for e in manifest.elements}
    assert kinds == {
        "components/button.html": "component",
        "fonts/icons.woff2": "asset",
        "img/logo.png": "asset",
        "index.html": "screen",
        "styles/main.css": "style",
        "styles/tokens.css": "style",
    }
    index = manifest.element_index["index.html"]
    assert index.files == ("index.html", "app.js")  # the script is no element: the screen owns it
    assert index.depends_on == ("components/button.html", "img/logo.png", "styles/main.css")
    assert manifest.element_index["styles/main.css"].depends_on == ("styles/tokens.css",)
    assert manifest.element_index["styles/tokens.css"].depends_on == ("fonts/icons.woff2",)
    for entry in manifest.files:
        assert (
            entry.sha256 == of_bytes((SHOP / entry.path).read_bytes())
            and entry.size == (SHOP / entry.path).stat().st_size
        )


def test_every_element_digest_covers_what_it_depends_on() -> None:
    before = build_manifest(raw({"a.html": '<link href="s.css">', "s.css": "p{}", "b.html": "<p>"}), "t", "now")
    after = build_manifest(raw({"a.html": '<link href="s.css">', "s.css": "p{color:red}", "b.html": "<p>"}), "t", "now")
    changed = {e.id for e in before.elements if e.digest != after.element_index[e.id].digest}
    assert changed == {"a.html", "s.css"}
    assert before.digest != after.digest


def test_references_record_declared_and_discovered_dependencies_with_their_status() -> None:
    manifest = build_manifest(
        raw(
            {
                "index.html": '<img src="gone.png"><link href="https://cdn.example/x.css"><script src="app.js">',
                "app.js": "",
            }
        ),
        "t",
        "now",
    )
    statuses = {(r.source, r.ref): (r.status, r.target) for r in manifest.references}
    assert statuses == {
        ("index.html", "gone.png"): ("missing", "gone.png"),
        ("index.html", "https://cdn.example/x.css"): ("external", None),
        ("index.html", "app.js"): ("resolved", "app.js"),
    }


def test_a_declaration_names_the_elements_and_their_dependencies() -> None:
    declaration = {
        "elements": [
            {"id": "home", "kind": "screen", "entry": "index.html", "dependsOn": ["button"]},
            {"id": "button", "kind": "component", "entry": "button.html", "files": ["button.css"]},
        ]
    }
    manifest = build_manifest(
        raw(
            {"bee-design.json": json.dumps(declaration), "index.html": "<p>", "button.html": "<b>", "button.css": "b{}"}
        ),
        "t",
        "now",
    )
    assert [e.id for e in manifest.elements] == ["button", "home"]
    assert manifest.element_index["home"].depends_on == ("button",)
    assert manifest.element_index["button"].files == ("button.html", "button.css")
    assert {(r.source, r.ref, r.via) for r in manifest.references} == {
        ("button.html", "button.css", "declared"),
        ("index.html", "button", "declared"),
    }


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"elements": []}, "has 0 items"),
        ({"elements": [{"id": "a", "kind": "page", "entry": "a.html"}]}, "use one of screen"),
        ({"elements": [{"id": "a", "kind": "screen", "entry": "gone.html"}]}, "'gone.html', which is not a file"),
        (
            {"elements": [{"id": "a", "kind": "screen", "entry": "a.html", "dependsOn": ["b"]}]},
            "'b', which is not declared",
        ),
        (
            {
                "elements": [
                    {"id": "a", "kind": "screen", "entry": "a.html"},
                    {"id": "a", "kind": "style", "entry": "a.html"},
                ]
            },
            "twice",
        ),
    ],
)
def test_a_malformed_declaration_is_refused_saying_what_to_fix(declaration: str | dict[str, Any], message: str) -> None:
    text = declaration if isinstance(declaration, str) else json.dumps(declaration)
    with pytest.raises(BeeError, match=message) as caught:
        build_manifest(raw({"bee-design.json": text, "a.html": "<p>"}), "t", "now")
    assert caught.value.code == "invalid_argument"


def test_a_dependency_cycle_is_refused_with_the_cycle_spelled_out() -> None:
    files = {"a.css": '@import "b.css";', "b.css": '@import "c.css";', "c.css": '@import "a.css";'}
    with pytest.raises(BeeError) as caught:
        build_manifest(raw(files), "t", "now")
    assert caught.value.code == "invalid_argument"
    assert "t:a.css → t:b.css → t:c.css → t:a.css" in caught.value.message
    assert caught.value.details == {"cycles": [["t:a.css", "t:b.css", "t:c.css", "t:a.css"]]}


def test_a_declared_cycle_is_refused_too() -> None:
    declaration = {
        "elements": [
            {"id": "a", "kind": "component", "entry": "a.html", "dependsOn": ["b"]},
            {"id": "b", "kind": "component", "entry": "b.html", "dependsOn": ["a"]},
        ]
    }
    with pytest.raises(BeeError, match="t:a → t:b → t:a"):
        build_manifest(raw({"bee-design.json": json.dumps(declaration), "a.html": "", "b.html": ""}), "t", "now")


def test_a_manifest_round_trips_and_detects_any_change_after_import() -> None:
    manifest = build_manifest(read_bundle(SHOP), "shop", "now")
    data = manifest.to_bytes()
    assert parse_manifest("shop", data) == manifest
    tampered = json.loads(data)
    tampered["elements"][0]["kind"] = "screen" if tampered["elements"][0]["kind"] != "screen" else "asset"
    with pytest.raises(BeeError, match="no longer matches its own digest") as caught:
        parse_manifest("shop", json.dumps(tampered).encode())
    assert caught.value.code == "hash_mismatch"
    with pytest.raises(BeeError, match="breaks the manifest schema"):
        parse_manifest("shop", b'{"schemaVersion": 1}')
    with pytest.raises(BeeError, match="not valid JSON"):
        parse_manifest("shop", b"{")
    with pytest.raises(BeeError, match="names bundle 'shop'"):
        parse_manifest("other", data)


def test_a_hostile_web_of_cycles_is_refused_with_a_bounded_message() -> None:
    # 3,000 stylesheets in a chain, each also importing the first: a back edge (and a cycle as long as the chain
    # so far) per file. Spelled in full that was 63 MB of message after half a minute.
    n = 3000
    files = {f"a{i:04}.css": f'@import "a{i + 1:04}.css"; @import "a0000.css";' for i in range(n - 1)}
    files[f"a{n - 1:04}.css"] = '@import "a0000.css";'
    with pytest.raises(BeeError) as caught:
        build_manifest(raw(files), "t", "now")
    assert caught.value.code == "invalid_argument" and "(the first 10 shown)" in caught.value.message
    assert len(caught.value.message) < 10_000
    assert caught.value.details is not None
    assert len(caught.value.details["cycles"]) == 10


def test_a_long_cycle_is_spelled_shortened() -> None:
    files = {f"a{i:03}.css": f'@import "a{(i + 1) % 100:03}.css";' for i in range(100)}
    with pytest.raises(BeeError) as caught:
        build_manifest(raw(files), "t", "now")
    first, last = [f"t:a{i:03}.css" for i in range(6)], [f"t:a{i:03}.css" for i in (96, 97, 98, 99, 0)]
    assert caught.value.details == {"cycles": [[*first, "… 89 more …", "t:a095.css", *last]]}
    assert " → ".join([*first, "… 89 more …", "t:a095.css", *last]) in caught.value.message
