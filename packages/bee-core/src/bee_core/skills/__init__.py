"""The skill bridge: skills from the providers an instance configures with `bee skill bridge add`.

Providers are local Agent Skills directories (:mod:`bee_core.skills.local`) and MCP servers that serve the Skills
extension (:mod:`bee_core.skills.remote`), behind one seam (:class:`~bee_core.skills.model.Provider`). The
:class:`~bee_core.skills.bridge.Bridge` searches, reads and resolves them for bee_skill_search, bee_skill_get and
bee_skill_resolve; :mod:`bee_core.skills.config` holds the configuration and :mod:`bee_core.cli.skill` the
commands. Names load on first use.
"""

from typing import TYPE_CHECKING

from bee_contracts.lazy import lazy_exports

if TYPE_CHECKING:
    from bee_core.skills.bridge import Bridge
    from bee_core.skills.config import DirectoryConfig, McpConfig, load_bridge, save_bridge
    from bee_core.skills.model import Listing, Loaded, Provider, Skill

__all__ = [
    "Bridge",
    "DirectoryConfig",
    "Listing",
    "Loaded",
    "McpConfig",
    "Provider",
    "Skill",
    "load_bridge",
    "save_bridge",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Bridge": "bee_core.skills.bridge",
        "DirectoryConfig": "bee_core.skills.config",
        "Listing": "bee_core.skills.model",
        "Loaded": "bee_core.skills.model",
        "McpConfig": "bee_core.skills.config",
        "Provider": "bee_core.skills.model",
        "Skill": "bee_core.skills.model",
        "load_bridge": "bee_core.skills.config",
        "save_bridge": "bee_core.skills.config",
    },
)
