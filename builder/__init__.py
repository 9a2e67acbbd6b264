"""mdfts: a tree of markdown docs → one versioned, read-only SQLite FTS5 file of sections."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True

__all__ = [
    "open_index", "Index", "build_index", "BuildResult",
    "search", "show", "neighbors", "token", "outline", "context", "rrf_merge",
    "Hit", "Outline", "OutlineEntry", "DocumentEntry", "SectionPage", "SectionLink", "TokenEntry", "Context",
    "RefError",
    "split_sections", "Document", "Section", "ExactToken",
    "MdftsError", "SourceError", "IndexVersionError", "QueryError",
    "__version__",
]

# Each public name and the module that defines it. Imported on first use, so that querying an
# index never loads markdown-it. No public name may be a submodule's name (`mdfts.search` was
# one: importing the submodule replaced the function); tests/test_api.py checks that.
_LAZY = {
    "open_index": "mdfts.index",
    "Index": "mdfts.index",
    "build_index": "mdfts.build",
    "BuildResult": "mdfts.build",
    "search": "mdfts.lookup",
    "show": "mdfts.lookup",
    "token": "mdfts.lookup",
    "context": "mdfts.lookup",
    "neighbors": "mdfts.lookup",
    "outline": "mdfts.lookup",
    "rrf_merge": "mdfts.lookup",
    "Hit": "mdfts.records",
    "Outline": "mdfts.records",
    "OutlineEntry": "mdfts.records",
    "DocumentEntry": "mdfts.records",
    "SectionPage": "mdfts.records",
    "SectionLink": "mdfts.records",
    "TokenEntry": "mdfts.records",
    "Context": "mdfts.prompt",
    "RefError": "mdfts.refs",
    "split_sections": "mdfts.sections",
    "Document": "mdfts.sections",
    "Section": "mdfts.sections",
    "ExactToken": "mdfts.tokens",
    "MdftsError": "mdfts.errors",
    "SourceError": "mdfts.errors",
    "IndexVersionError": "mdfts.errors",
    "QueryError": "mdfts.errors",
}

if TYPE_CHECKING:
    from typing import Any

    from mdfts.build import BuildResult, build_index
    from mdfts.errors import IndexVersionError, MdftsError, QueryError, SourceError
    from mdfts.index import Index, open_index
    from mdfts.lookup import context, neighbors, outline, rrf_merge, search, show, token
    from mdfts.prompt import Context
    from mdfts.records import DocumentEntry, Hit, Outline, OutlineEntry, SectionLink, SectionPage, TokenEntry
    from mdfts.refs import RefError
    from mdfts.sections import Document, Section, split_sections
    from mdfts.tokens import ExactToken

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

        # Cached as a global: the next access does not come back here.
        globals()[name] = found = getattr(importlib.import_module(_LAZY[name]), name)
        return found
    raise AttributeError(f"module 'mdfts' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
