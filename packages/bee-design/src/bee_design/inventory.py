"""Everything imported and mapped under a root, read once per call: manifests, mappings, computed states."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from bee_contracts import BeeError, ErrorCode
from bee_design.bundle.manifest import Element, Manifest
from bee_design.bundle.store import BundleStore, check_id
from bee_design.layout import DesignFiles
from bee_design.mapping import ElementState, MapFile, Mapping, state_of


def split_id(qualified: str) -> tuple[str, str]:
    """``bundle:element`` -> ``(bundle, element)``."""
    bundle, _, element = qualified.partition(":")
    return bundle, element


@dataclass
class Inventory:
    files: DesignFiles
    store: BundleStore
    manifests: dict[str, Manifest]
    mappings: dict[str, Mapping]
    only: str | None = None
    _states: dict[str, ElementState] = field(default_factory=dict)

    @classmethod
    def load(cls, files: DesignFiles, bundle: str | None = None) -> Inventory:
        """The bundles under the root (only ``bundle`` when given) and the whole mapping file.

        Raises:
            BeeError: ``not_found`` for an unknown ``bundle``; ``hash_mismatch`` for a manifest changed after
                import; ``invalid_argument`` for a malformed mapping file.
        """
        store = BundleStore(files)
        ids = [check_id(bundle)] if bundle is not None else store.ids()
        manifests = {bundle_id: store.load(bundle_id) for bundle_id in ids}
        return cls(files, store, manifests, MapFile(files).load(), bundle)

    def element(self, qualified: str) -> tuple[Manifest, Element]:
        """The manifest and element named ``bundle:element``.

        Raises:
            BeeError: ``not_found`` naming the imported bundles or the closest element ids.
        """
        bundle, name = split_id(qualified)
        manifest = self.manifests.get(bundle) or self.store.load(bundle)
        self.manifests[bundle] = manifest
        element = manifest.element_index.get(name)
        if element is None:
            close = difflib.get_close_matches(name, list(manifest.element_index), n=5, cutoff=0.4)
            hint = f"did you mean {', '.join(manifest.qualified(c) for c in close)}?" if close else ""
            raise BeeError(
                ErrorCode.NOT_FOUND,
                f"bundle {bundle!r} has no element {name!r}; {hint or 'bee_design_list shows its elements'}".rstrip(),
                details={"id": qualified, "bundle": bundle},
            )
        return manifest, element

    def state(self, manifest: Manifest, element: Element) -> ElementState:
        qualified = manifest.qualified(element.id)
        if qualified not in self._states:
            self._states[qualified] = state_of(self.files, element.digest, self.mappings.get(qualified))
        return self._states[qualified]

    def orphans(self) -> dict[str, ElementState]:
        """Mappings whose element no imported bundle holds (of the one bundle, when the inventory is filtered)."""
        found = {}
        for qualified, mapping in sorted(self.mappings.items()):
            bundle, name = split_id(qualified)
            if self.only is not None and bundle != self.only:
                continue
            if bundle in self.manifests and name in self.manifests[bundle].element_index:
                continue
            found[qualified] = state_of(self.files, None, mapping)
        return found
