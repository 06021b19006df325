"""bee_design_list: imported bundles, their elements, dependencies and computed mapping states."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from bee_design import layout
from bee_design.context import DesignContext
from bee_design.envelope import SCHEMA_VERSION
from bee_design.inventory import Inventory
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.design import (
        DesignListArgs,
        DesignListData,
        DesignListDataBundle,
        DesignListDataBundleElement,
        DesignListDataOrphan,
        DesignListResult,
    )


def bee_design_list(ctx: DesignContext, call: Call[DesignListArgs]) -> DesignListResult:
    """List the bundles (or one, ``args["bundle"]``) with their elements (of ``args["kind"]``, when given).

    Raises:
        BeeError: ``not_found`` for an unknown bundle; ``hash_mismatch`` for a manifest changed after import;
            ``invalid_argument`` for a malformed mapping file.
    """
    args = call.args
    inventory = Inventory.load(ctx.files, args.get("bundle"))
    kind = args.get("kind")
    counts: Counter[str] = Counter()
    bundles: list[DesignListDataBundle] = []
    for manifest in inventory.manifests.values():
        elements: list[DesignListDataBundleElement] = []
        for element in manifest.elements:
            if kind is not None and element.kind != kind:
                continue
            state = inventory.state(manifest, element)
            counts[state.state] += 1
            mapping = inventory.mappings.get(manifest.qualified(element.id))
            elements.append(
                {
                    "id": manifest.qualified(element.id),
                    "kind": element.kind,
                    "entry": element.entry,
                    "state": state.state,
                    "reasons": state.reasons,
                    "dependsOn": [manifest.qualified(dep) for dep in element.depends_on],
                    "sources": [{"path": s.path, "symbol": s.symbol} for s in mapping.sources] if mapping else [],
                }
            )
        bundles.append(
            {
                "id": manifest.bundle,
                "path": inventory.store.bundle_path(manifest.bundle),
                "digest": manifest.digest,
                "importedAt": manifest.imported_at,
                "fileCount": len(manifest.files),
                "bytes": manifest.total_bytes,
                "elements": elements,
            }
        )
    orphans: list[DesignListDataOrphan] = []
    for qualified, state in inventory.orphans().items():
        counts["missing"] += 1
        orphans.append({"id": qualified, "state": "missing", "reasons": state.reasons})
    data: DesignListData = {
        "mapFile": layout.MAP_FILE,
        "bundles": bundles,
        "orphans": orphans,
        "states": {
            "imported": counts["imported"],
            "mapped": counts["mapped"],
            "stale": counts["stale"],
            "missing": counts["missing"],
        },
    }
    return {"schemaVersion": SCHEMA_VERSION, "ok": True, "trusted": False, "acceptance": False, "data": data}
