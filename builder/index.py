"""Open a built index read-only and check that this mdfts can read it."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from mdfts.errors import IndexVersionError, MdftsError
from mdfts.write import APPLICATION_ID, SCHEMA_VERSION


def open_index(path: Path, check: bool = True) -> sqlite3.Connection:
    """A read-only, immutable connection: no -journal, -wal or -shm file is ever created."""
    if not path.is_file():
        raise MdftsError(f"{path}: no such index file")
    uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
    try:
        db = sqlite3.connect(uri, uri=True)
        app_id = db.execute("pragma application_id").fetchone()[0]
        version = db.execute("pragma user_version").fetchone()[0]
    except sqlite3.DatabaseError as err:
        raise IndexVersionError(f"{path}: not an SQLite database ({err})") from None
    if check:
        if app_id != APPLICATION_ID:
            db.close()
            raise IndexVersionError(f"{path}: not an mdfts index (application_id {app_id}); build one with mdfts build")
        if version != SCHEMA_VERSION:
            db.close()
            raise IndexVersionError(f"{path}: schema {version}, this mdfts reads {SCHEMA_VERSION}; rebuild it")
    return db


def read_meta(db: sqlite3.Connection) -> dict[str, str]:
    return dict(db.execute("select key, value from mdfts_meta order by key").fetchall())


def index_info(path: Path) -> dict[str, Any]:
    """Meta, counts and compatibility of an index, as one JSON-ready object."""
    db = open_index(path, check=False)
    try:
        app_id = db.execute("pragma application_id").fetchone()[0]
        version = db.execute("pragma user_version").fetchone()[0]
        is_mdfts = app_id == APPLICATION_ID
        meta = read_meta(db) if is_mdfts else {}
        queries = [r[0] for r in db.execute("select name from mdfts_queries order by name")] if is_mdfts else []
    except sqlite3.DatabaseError as err:
        raise IndexVersionError(f"{path}: not an mdfts index ({err})") from None
    finally:
        db.close()
    from mdfts import __version__

    compatible = is_mdfts and version == SCHEMA_VERSION
    return {
        "path": str(path),
        "bytes": path.stat().st_size,
        "application_id": app_id,
        "schema_version": version,
        "readable_schema_version": SCHEMA_VERSION,
        "compatible": compatible,
        "mdfts_version": __version__,
        "meta": meta,
        "queries": queries,
    }
