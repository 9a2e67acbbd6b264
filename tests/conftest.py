"""Shared fixtures: the fixture docs, indexes built once per session, and CLI helpers.

Everything here is built from files in this repository (tests/fixtures/docs, sample/docs):
the suite never needs ../shared.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mdfts.build import build_index
from mdfts.cli import cli

REPO = Path(__file__).resolve().parent.parent
FIXTURE_DOCS = Path(__file__).resolve().parent / "fixtures" / "docs"
SAMPLE_DOCS = REPO / "sample" / "docs"
QUERIES_DIR = REPO / "queries"

# Every process a test starts runs as from a user's shell. Some machines (this project's own
# dev box among them) export PYTHONUNBUFFERED=1, which flushes every write and so hides a
# process that forgets to flush its output before it ends.
os.environ.pop("PYTHONUNBUFFERED", None)


def fixture_text(name: str) -> str:
    """A fixture file's text, decoded the way the build decodes it (BOM kept, line endings kept)."""
    return (FIXTURE_DOCS / name).read_bytes().decode("utf-8")


def run_cli(args: Sequence[str], input: str | None = None) -> Result:
    """Run `mdfts ARGS` in-process; stdout and stderr are kept apart."""
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def connect_ro(db: Path) -> sqlite3.Connection:
    """A read-only connection, as a consumer would open the artifact."""
    return sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True)


@pytest.fixture
def docs_dir(tmp_path: Path) -> Path:
    """A writable copy of tests/fixtures/docs, for tests that add or break files."""
    dst = tmp_path / "docs"
    shutil.copytree(FIXTURE_DOCS, dst)
    return dst


@pytest.fixture
def built_db(docs_dir: Path, tmp_path: Path) -> Path:
    """A fresh index of `docs_dir`, for tests that rebuild over it or change it."""
    out = tmp_path / "out" / "index.db"
    build_index([docs_dir], out)
    return out


@pytest.fixture(scope="session")
def fixture_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of tests/fixtures/docs, built once; read-only tests only."""
    out = tmp_path_factory.mktemp("fixture-index") / "fixtures.db"
    build_index([FIXTURE_DOCS], out)
    return out


@pytest.fixture(scope="session")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of sample/docs, built once; read-only tests only."""
    out = tmp_path_factory.mktemp("sample-index") / "sample.db"
    build_index([SAMPLE_DOCS], out)
    return out


@pytest.fixture(scope="session")
def parent_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """top.md: `# Top` over 500 children of 1.2 KB each (child 0 .. child 499)."""
    docs = tmp_path_factory.mktemp("parent-docs")
    (docs / "top.md").write_text("# Top\n\nrollback intro\n\n"
                                 + "".join(f"## child {i}\n\n" + "words " * 200 + "\n\n" for i in range(500)))
    out = tmp_path_factory.mktemp("parent-index") / "top.db"
    build_index([docs], out)
    return out


@pytest.fixture
def bodies_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Characters of `body` each stored query returns, as Index.run is called, in order."""
    from mdfts.index import Index

    read: list[int] = []
    real = Index.run

    def spy(self: Index, name: str, **params: Any) -> list[dict[str, Any]]:
        rows = real(self, name, **params)
        read.append(sum(len(r.get("body") or "") for r in rows))
        return rows

    monkeypatch.setattr(Index, "run", spy)
    return read


@pytest.fixture
def fixture_conn(fixture_db: Path) -> Iterator[sqlite3.Connection]:
    conn = connect_ro(fixture_db)
    conn.row_factory = sqlite3.Row
    yield conn
    conn.close()


def require_sqlite3_binary() -> str:
    path = shutil.which("sqlite3")
    if path is None:
        pytest.skip("the sqlite3 command-line shell is not installed (apt-get install sqlite3)")
    return path


# --- Datasette in process ------------------------------------------------------------------

class InProcessDatasette:
    """A Datasette set up the way `mdfts serve` sets it up (the same `serve_args`), answered by
    Datasette's own test client (`datasette.client`) in this process: no port, no subprocess.
    `others` are databases `mdfts serve` would refuse (not indexes), served beside them."""

    def __init__(self, dbs: Sequence[Path], allow_sql: bool = False, allow_download: bool = False,
                 time_limit_ms: int = 1000, others: Sequence[Path] = (), metadata: dict[str, Any] | None = None) -> None:
        from datasette.app import Datasette

        from mdfts.browse import serve_args

        args = serve_args(list(dbs), "127.0.0.1", 0, allow_sql, allow_download, time_limit_ms)
        settings = {name: _setting(value) for flag, name, value in zip(args, args[1:], args[2:], strict=False)
                    if flag == "--setting"}
        immutables = [value for flag, value in itertools.pairwise(args) if flag == "--immutable"]
        immutables += [str(path) for path in others]
        self._loop = asyncio.new_event_loop()
        self.datasette = Datasette(immutables=immutables, settings=settings, metadata=metadata)
        self._loop.run_until_complete(self.datasette.invoke_startup())

    def get(self, path: str, actor: dict[str, Any] | None = None) -> tuple[int, str]:
        """(status, body) of a GET of `path` (starting with /), as `actor` when given (signed in
        with Datasette's ds_actor cookie); redirects are not followed."""
        response = self._loop.run_until_complete(self.datasette.client.get(path, cookies=self._cookies(actor)))
        return response.status_code, response.text

    def location(self, path: str, actor: dict[str, Any] | None = None) -> tuple[int, str | None]:
        """(status, Location header) of a GET of `path`: where a redirect goes."""
        response = self._loop.run_until_complete(self.datasette.client.get(path, cookies=self._cookies(actor)))
        return response.status_code, response.headers.get("location")

    def _cookies(self, actor: dict[str, Any] | None) -> dict[str, str]:
        return {} if actor is None else {"ds_actor": self.datasette.sign({"a": actor}, "actor")}

    def get_json(self, path: str) -> Any:
        status, body = self.get(path)
        assert status == 200, body[:500]
        return json.loads(body)

    def close(self) -> None:
        self._loop.close()


def _setting(value: str) -> bool | int | str:
    return {"on": True, "off": False}.get(value, int(value) if value.isdigit() else value)


@pytest.fixture(scope="module")
def datasette_client() -> Iterator[Callable[..., InProcessDatasette]]:
    """Make `InProcessDatasette(dbs, allow_sql=..., ...)` clients; all are closed afterwards."""
    pytest.importorskip("datasette", reason="Datasette is not installed: pip install -e '.[datasette]'")
    made: list[InProcessDatasette] = []

    def make(*dbs: Path, **options: Any) -> InProcessDatasette:
        made.append(InProcessDatasette(dbs, **options))
        return made[-1]

    yield make
    for client in made:
        client.close()
