"""Design bundles: reading a folder or zip safely (:mod:`.reading`), the references a file makes
(:mod:`.references`, with the linear HTML tokenizer of :mod:`.markup`), elements, their graph and digests
(:mod:`.building`, :mod:`.graph`), the immutable manifest (:mod:`.manifest`) and the store of imported bundles
(:mod:`.store`)."""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_design.bundle.building import build_manifest
    from bee_design.bundle.manifest import Element, Manifest, parse_manifest
    from bee_design.bundle.reading import RawBundle, read_bundle
    from bee_design.bundle.store import BundleStore

__all__ = ["BundleStore", "Element", "Manifest", "RawBundle", "build_manifest", "parse_manifest", "read_bundle"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BundleStore": "bee_design.bundle.store",
        "Element": "bee_design.bundle.manifest",
        "Manifest": "bee_design.bundle.manifest",
        "RawBundle": "bee_design.bundle.reading",
        "build_manifest": "bee_design.bundle.building",
        "parse_manifest": "bee_design.bundle.manifest",
        "read_bundle": "bee_design.bundle.reading",
    },
)
