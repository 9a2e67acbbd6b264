"""mdfts: a tree of markdown docs → one versioned, read-only SQLite FTS5 file of sections."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    __version__ = version("mdfts")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["build_index", "search", "split_sections", "Document", "Section", "MdftsError", "__version__"]

# Imported on first use, so that querying an index never loads markdown-it.
_LAZY = {
    "build_index": "mdfts.build",
    "search": "mdfts.search",
    "split_sections": "mdfts.sections",
    "Document": "mdfts.sections",
    "Section": "mdfts.sections",
    "MdftsError": "mdfts.errors",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mdfts' has no attribute {name!r}")
