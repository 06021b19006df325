"""What listing the core tools costs an agent, in o200k tokens: the catalog stays within its budget and the
discovery view within its share (tests/perf/bench_tokens.py measures the same on a running host)."""

import json

from bee_contracts import load_catalog
from bee_core.representation.tokens import count_tokens

#: Budgets from the core host's design: the whole catalog, and the discovery view's share of it.
CATALOG_BUDGET = 6000
DISCOVERY_SHARE = 0.15


def listing_tokens(host: str) -> int:
    tools = [spec.to_wire() for spec in load_catalog(host)]
    return count_tokens(json.dumps({"tools": tools}, separators=(",", ":"), ensure_ascii=False))


def test_the_core_catalog_fits_its_token_budget() -> None:
    assert listing_tokens("core") <= CATALOG_BUDGET


def test_the_discovery_view_costs_a_small_share_of_the_full_listing() -> None:
    assert listing_tokens("discovery") <= DISCOVERY_SHARE * listing_tokens("core")
