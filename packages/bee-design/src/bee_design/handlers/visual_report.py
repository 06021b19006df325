"""bee_visual_report: captured evidence against a visual spec; an untrusted assessment, never approval."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bee_design.context import DesignContext
from bee_design.visual.report import build_report
from bee_hostkit import Call

if TYPE_CHECKING:
    from bee_contracts.shapes.design import VisualReportArgs, VisualReportResult


def bee_visual_report(ctx: DesignContext, call: Call[VisualReportArgs]) -> VisualReportResult:
    """Compare the evidence folder ``args["evidence"]`` with spec ``args["spec"]`` (never launches a browser).

    Raises:
        BeeError: ``not_found`` for an unknown spec or evidence folder; ``invalid_argument`` for a malformed
            spec or unknown element/viewport filters; ``hash_mismatch`` for reference images changed since the spec
            recorded them; ``outside_root`` for an evidence path leaving the root.
    """
    args = call.args
    return build_report(ctx.files, args["spec"], args["evidence"], args.get("elements"), args.get("viewports"))
