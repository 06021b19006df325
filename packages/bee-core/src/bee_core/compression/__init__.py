"""Optional local prose compression: settings, the method, and the retained originals."""

from bee_core.compression.method import METHOD, compress
from bee_core.compression.settings import CompressionSettings, load_settings, save_settings
from bee_core.compression.store import Retained, RetentionStore

__all__ = [
    "METHOD",
    "CompressionSettings",
    "Retained",
    "RetentionStore",
    "compress",
    "load_settings",
    "save_settings",
]
