"""mdfts: a tree of markdown docs → one versioned, read-only SQLite FTS5 file of sections."""

from __future__ import annotations

from typing import Any

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


__version__: str  # set on first access, by __getattr__ below


def _version() -> str:
    # importlib.metadata costs ~20-60 ms to import: a one-shot `mdfts search` must not pay for it.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mdfts")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()["__version__"] = found = _version()
        return found
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mdfts' has no attribute {name!r}")
