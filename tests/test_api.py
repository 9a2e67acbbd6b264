"""The public API: every name in mdfts.__all__ imports from the package root and works twice, no
submodule shadows one, and the read functions close the connections they open."""

from __future__ import annotations

import json
import os
import pkgutil
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import mdfts
from mdfts.build import BuildResult
from mdfts.write import WriteStats

from conftest import FIXTURE_DOCS, run_cli

REF = "services/payments.md#rollback-procedure"


def _hit_fields() -> dict[str, Any]:
    return dict(id=1, ref="a.md#a", path="a.md", heading="A", trail=("A",), anchor="a", level=1, start_line=1,
                end_line=2, body="# A\n", score=1.0, rank=1)


def _calls(db: Path, tmp: Path) -> dict[str, Callable[[], Any]]:
    """One realistic call of each public callable, on the fixture index."""
    runs = iter(range(100))

    def index() -> Any:
        with mdfts.open_index(db) as ix:
            return (ix.path, ix.meta["documents"], ix.info()["compatible"], len(ix.run("documents", glob="*")))

    return {
        "open_index": index,
        "Index": lambda: _closed_after(mdfts.Index(db)),
        "build_index": lambda: mdfts.build_index([FIXTURE_DOCS], tmp / f"b{next(runs)}.db").stats.sections,
        "BuildResult": lambda: BuildResult(tmp / "x.db", WriteStats(1, 2, 3, 4), 1).files,
        "search": lambda: [h.path for h in mdfts.search(db, "payments rollback")],
        "show": lambda: mdfts.show(db, REF).id,
        "neighbors": lambda: [(h.relation, h.id) for h in mdfts.neighbors(db, REF)],
        "token": lambda: [h.id for h in mdfts.token(db, "PAYMENTS_DB_URL")],
        "outline": lambda: [e.to_dict() for e in mdfts.outline(db, "services/payments.md")],
        "context": lambda: mdfts.context(db, "how do I roll back payments?", max_tokens=500).text,
        "rrf_merge": lambda: [h.index for h in mdfts.rrf_merge({"a": mdfts.search(db, "payments")}, 3)],
        "Hit": lambda: mdfts.Hit(**_hit_fields()).to_dict(),
        "Outline": lambda: mdfts.Outline("a.md", "A", ()).to_dict(),
        "OutlineEntry": lambda: mdfts.OutlineEntry(1, "a.md#a", "a.md", 1, "A", "a", 1, 2, 3, 1).to_dict(),
        "DocumentEntry": lambda: mdfts.DocumentEntry(1, "a.md", "A", 3, 1).to_dict(),
        "SectionPage": lambda: _section_page(db),
        "SectionLink": lambda: (mdfts.SectionLink(3, "Rollback").heading, mdfts.SectionLink(3, "R") == mdfts.SectionLink(3, "R")),
        "TokenEntry": lambda: mdfts.TokenEntry("PAYMENTS_DB_URL", "env_var").kind,
        "Context": lambda: mdfts.context(db, "payments", max_tokens=300).used,
        "RefError": lambda: isinstance(mdfts.RefError("x"), mdfts.MdftsError),
        "split_sections": lambda: [s.heading for s in mdfts.split_sections("a.md", "# A\n\ntext\n## B\n").sections],
        "Document": lambda: mdfts.Document("a.md", "A", {}, "", 0, 1).front_matter_json,
        "Section": lambda: mdfts.Section(path="a.md", ordinal=0, level=1, heading="A", trail=("A",), anchor="a",
                                         start_line=1, end_line=1, parent=None, body="# A", text="A").anchor,
        "ExactToken": lambda: mdfts.ExactToken("PAYMENTS_DB_URL.", "env_var", "text").norm,
        "MdftsError": lambda: str(mdfts.MdftsError("x")),
        "SourceError": lambda: str(mdfts.SourceError("a.md", 3, "bad")),
        "IndexVersionError": lambda: isinstance(mdfts.IndexVersionError("x"), mdfts.MdftsError),
        "QueryError": lambda: isinstance(mdfts.QueryError("x"), mdfts.MdftsError),
    }


def _section_page(db: Path) -> Any:
    with mdfts.open_index(db) as ix:
        page = ix.section_page(ix.show(REF).id)
        assert isinstance(page, mdfts.SectionPage)
        return (page.section.id, [link.heading for link in page.ancestors], [t.kind for t in page.tokens])


def _closed_after(ix: Any) -> Any:
    try:
        return ix.meta["schema_version"]
    finally:
        ix.close()


def test_all_lists_the_public_api() -> None:
    assert {"open_index", "Index", "build_index", "search", "MdftsError", "Section", "Document",
            "__version__"} <= set(mdfts.__all__)
    # What Index.section_page returns is importable from the package, as every other record is.
    from mdfts import records

    assert (mdfts.SectionPage, mdfts.SectionLink, mdfts.TokenEntry) == (
        records.SectionPage, records.SectionLink, records.TokenEntry)
    assert len(set(mdfts.__all__)) == len(mdfts.__all__)


def test_no_submodule_is_named_like_a_public_name() -> None:
    modules = {m.name for m in pkgutil.iter_modules(mdfts.__path__)}
    assert "lookup" in modules and "index" in modules
    assert not modules & set(mdfts.__all__)


def test_every_public_callable_works_twice(fixture_db: Path, tmp_path: Path) -> None:
    calls = _calls(fixture_db, tmp_path)
    for name in mdfts.__all__:
        value = getattr(mdfts, name)
        if name == "__version__":
            assert isinstance(value, str) and value
            continue
        assert callable(value), name
        assert name in calls, f"{name} is public: give it a call in _calls"
        first, second = calls[name](), calls[name]()
        assert first == second, name
        assert first, name  # something real came back
        assert getattr(mdfts, name) is value, f"{name} changed between accesses"



def _python(code: str, *args: Path) -> subprocess.CompletedProcess[str]:
    """`python -c CODE ARGS...` in a fresh process, its output captured as text."""
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True)

def test_fresh_interpreter_imports_each_name_twice(fixture_db: Path) -> None:
    # A process of its own: no other test has imported the submodules first.
    code = (
        "import sys, mdfts\n"
        "for name in mdfts.__all__:\n"
        "    exec(f'from mdfts import {name} as a')\n"
        "    exec(f'from mdfts import {name} as b')\n"
        "    assert a is b, name\n"
        "hits = [mdfts.search(sys.argv[1], 'payments rollback') for _ in range(2)]\n"
        "assert hits[0] == hits[1] and hits[0]\n"
        "print(len(mdfts.__all__))\n"
    )
    done = _python(code, fixture_db)
    assert (done.returncode, done.stderr) == (0, "")
    assert int(done.stdout) == len(mdfts.__all__)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[sqlite3.Connection]]:
    """Every connection sqlite3.connect hands out while the test runs (real ones, only recorded)."""
    made: list[sqlite3.Connection] = []
    real = sqlite3.connect

    def recording(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real(*args, **kwargs)
        made.append(conn)
        return conn

    monkeypatch.setattr(sqlite3, "connect", recording)
    yield made


def _is_closed(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("select 1")
    except sqlite3.ProgrammingError:
        return True
    return False


def test_read_functions_close_their_connections(fixture_db: Path, tmp_path: Path,
                                                 opened: list[sqlite3.Connection]) -> None:
    from mdfts import lookup
    from mdfts.browse import generated_settings
    from mdfts.diff import diff_indexes
    from mdfts.evaluate import evaluate
    from mdfts.index import index_info

    queries = tmp_path / "q.jsonl"
    queries.write_text('{"q": "payments rollback", "gold": [{"path": "services/payments.md", "line": 1}]}\n')
    calls: list[Callable[[], Any]] = [
        lambda: mdfts.search(fixture_db, "payments"),
        lambda: list(lookup.search_many(fixture_db, ["payments", "rollback"])),
        lambda: next(iter(lookup.search_many(fixture_db, ["payments", "rollback"]))),  # left unfinished
        lambda: mdfts.show(fixture_db, REF),
        lambda: mdfts.neighbors(fixture_db, REF),
        lambda: mdfts.outline(fixture_db),
        lambda: mdfts.token(fixture_db, "PAYMENTS_DB_URL"),
        lambda: mdfts.context(fixture_db, "payments rollback"),
        lambda: lookup.run_named(fixture_db, "documents", {}),
        lambda: lookup.run_named_sql(fixture_db, "search"),
        lambda: lookup.list_queries(fixture_db),
        lambda: index_info(fixture_db),
        lambda: evaluate(fixture_db, queries),
        lambda: diff_indexes(fixture_db, fixture_db),
        lambda: generated_settings([fixture_db]),
        lambda: mdfts.open_index(fixture_db).__enter__().__exit__(None, None, None),
    ]
    for n, call in enumerate(calls):
        before = len(opened)
        call()
        import gc

        gc.collect()  # an unfinished generator is closed when collected
        assert len(opened) > before, n
        assert all(_is_closed(c) for c in opened[before:]), f"call {n} left a connection open"


def test_a_failed_open_closes_its_connection(tmp_path: Path, opened: list[sqlite3.Connection]) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as made:
        made.execute("create table t (x)")
    made.close()
    with pytest.raises(mdfts.IndexVersionError, match="not an mdfts index"):
        mdfts.open_index(other)
    assert opened[1:] and all(_is_closed(c) for c in opened[1:])


@pytest.mark.parametrize(
    ("module", "never"),
    [
        ("mdfts.index", {"mdfts.write", "mdfts.build", "mdfts.browse", "mdfts.sections", "markdown_it"}),
        ("mdfts.lookup", {"mdfts.write", "mdfts.build", "mdfts.browse", "mdfts.sections", "markdown_it"}),
        ("mdfts.browse", {"mdfts.write", "mdfts.build", "mdfts.sections"}),
        ("mdfts.build", {"mdfts.browse", "mdfts.datasette_plugin", "datasette", "mdfts.lookup"}),
        ("mdfts.artifact", {"mdfts.write", "mdfts.index", "mdfts.queries"}),
    ],
)
def test_no_backward_imports(module: str, never: set[str]) -> None:
    """Readers do not load the writer, and the build loads no Datasette settings: both sides
    share mdfts.artifact instead."""
    code = f"import sys, {module}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert module in loaded and "mdfts.artifact" in loaded
    assert not loaded & never


def test_a_file_that_cannot_be_opened_says_why(fixture_db: Path) -> None:
    # SQLite says only "unable to open database file", and it read as "not an SQLite database":
    # out of file descriptors (a server with many indexes open), or no permission to read it.
    code = (
        "import resource, sys, mdfts\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
        "kept = []\n"
        "try:\n"
        "    while True:\n"
        "        kept.append(mdfts.open_index(sys.argv[1]))\n"
        "except mdfts.MdftsError as err:\n"
        "    print(type(err).__name__, err, sep=': ')\n"
    )
    done = _python(code, fixture_db)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"MdftsError: {fixture_db}: cannot open the index file (Too many open files)\n"


@pytest.mark.skipif(sys.platform == "win32", reason="no permission bits")
def test_an_unreadable_file_says_why(fixture_db: Path) -> None:
    # Root reads any file: then the lookup runs as nobody (setpriv), as in test_bad_input.py, from
    # a folder nobody may enter (pytest's tmp_path is private to us).
    as_nobody = os.geteuid() == 0
    if as_nobody and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permission bits cannot be tested")
    folder = Path(tempfile.mkdtemp(prefix="mdfts-perm-"))
    try:
        folder.chmod(0o755)
        db = folder / "locked.db"
        db.write_bytes(fixture_db.read_bytes())
        db.chmod(0)
        code = ("import sys, mdfts\n"
                "try:\n"
                "    mdfts.open_index(sys.argv[1])\n"
                "except mdfts.MdftsError as err:\n"
                "    print(type(err).__name__, err, sep=': ')\n")
        cmd = [sys.executable, "-c", code, str(db)]
        if as_nobody:
            cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    finally:
        shutil.rmtree(folder)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"MdftsError: {db}: cannot open the index file (Permission denied)\n"


def _damaged(db: Path, out: Path, how: str) -> Path:
    """A copy of the index `db`, cut short or with bytes of its stored search query garbled."""
    data = db.read_bytes()
    if how == "truncated":
        out.write_bytes(data[: len(data) // 2])  # a download or a copy that stopped half way
        return out
    conn = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True)
    sql = conn.execute("select sql from mdfts_queries where name = 'search'").fetchone()[0].encode()
    conn.close()
    middle = sql[len(sql) // 2:][:32]  # bytes of text, within one page: the file's structure stays whole
    assert data.count(middle) == 1
    out.write_bytes(data.replace(middle, b"\xff" * len(middle)))
    return out


@pytest.mark.parametrize(("how", "reason"), [("truncated", "database disk image is malformed"),
                                             ("garbled-text", "Could not decode to UTF-8 column 'sql'")])
def test_a_damaged_index_says_so_in_one_line(fixture_db: Path, tmp_path: Path, how: str, reason: str) -> None:
    # A truncated file was "not an SQLite database": it is one, cut short. Text that is not UTF-8
    # was quoted into the message, line breaks and all.
    db = _damaged(fixture_db, tmp_path / "damaged.db", how)
    message = f"{db}: damaged or truncated index file ({reason}); build or copy it again"
    with pytest.raises(mdfts.IndexVersionError) as caught:
        with mdfts.open_index(db) as ix:
            ix.search("payments rollback")
    assert str(caught.value) == message
    for command in (["info", db], ["datasette-metadata", db]):
        result = run_cli(command)
        assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {message}\n"), command


def test_a_garbled_section_fails_its_query_in_one_line(fixture_db: Path, tmp_path: Path) -> None:
    # sqlite3 quotes text that is not UTF-8 into its message, whole: a body of many lines made a
    # message of many lines.
    data = fixture_db.read_bytes()
    with mdfts.open_index(fixture_db) as ix:
        body = ix.show(REF)
        assert isinstance(body, mdfts.Hit)
    text = body.body.encode()
    garbled = text[:12] + b"\xff" + text[13:]
    assert data.count(text) == 1
    db = tmp_path / "garbled.db"
    db.write_bytes(data.replace(text, garbled))
    with mdfts.open_index(db) as ix, pytest.raises(mdfts.QueryError) as caught:
        ix.show(REF)
    assert str(caught.value) == f"query 'section' failed (id={body.id}): Could not decode to UTF-8 column 'body'"


def test_to_dict_is_what_the_cli_prints_as_json(fixture_db: Path, tmp_path: Path) -> None:
    # One JSON vocabulary: a record's to_dict() is the object `mdfts ... --json` prints for it.
    def printed(*args: object) -> Any:
        done = run_cli([*args, "--json"])
        assert (done.exit_code, done.stderr) == (0, ""), done.output
        return json.loads(done.stdout)

    db = fixture_db
    with mdfts.open_index(db) as ix:
        hits = ix.search("payments rollback", limit=10)
        assert printed("search", db, "payments rollback") == [h.to_dict(content_alias=True) for h in hits]
        assert printed("show", db, REF) == [ix.show(REF).to_dict()]
        assert printed("show", db, REF, "--neighbors") == [h.to_dict() for h in ix.neighbors(REF)]
        assert printed("token", db, "PAYMENTS_DB_URL") == [h.to_dict() for h in ix.token("PAYMENTS_DB_URL")]
        assert printed("show", db, "services/payments.md") == ix.show("services/payments.md").to_dict()
        assert printed("show", db, "services/") == [d.to_dict() for d in ix.outline("services/")]
        ctx = ix.context("how do I roll back payments?", max_tokens=800, format="json")
        assert printed("context", db, "how do I roll back payments?", "--budget", 800) == ctx.to_dict()
        with pytest.raises(mdfts.MdftsError, match="format='json'"):
            ix.context("how do I roll back payments?", max_tokens=800).to_dict()
        page = ix.section_page(ix.show(REF).id)
        assert page is not None
        data = page.to_dict()  # no command prints a page: its parts are the ones they print
        assert data["section"] == ix.show(REF).to_dict()
        assert data["parent"] == {"id": page.parent.id, "heading": page.parent.heading}  # type: ignore[union-attr]
        assert data["tokens"] and all(set(t) == {"token", "kind"} for t in data["tokens"])
    built = printed("build", FIXTURE_DOCS, "-o", tmp_path / "cli.db")
    result = mdfts.build_index([FIXTURE_DOCS], tmp_path / "api.db")
    data = result.to_dict()
    assert list(data) == list(built)
    assert data["output"] == str(tmp_path / "api.db") and 0 < data["seconds"]
    for varies in ("output", "seconds", "cpu_seconds"):
        del data[varies], built[varies]
    assert data == built


def test_a_cut_context_names_the_call_read_on_gives(sample_db: Path) -> None:
    # Each front end names its own call that reads a cut match on (mdfts show --from-line, MCP
    # fetch(..., from_line=N), Mdfts_fetch); without read_on the note stays `fetch REF`.
    with mdfts.open_index(sample_db) as ix:
        plain = ix.context("how do I roll back payments", max_tokens=300).text
        named = ix.context("how do I roll back payments", max_tokens=300,
                           read_on=lambda h, n: f"ix.show({h.ref!r}) from line {n}").text
    assert "cut for the budget; fetch runbooks/payments.md#rollback-procedure]" in plain
    assert re.search(r"\[… lines (\d+)-103 cut for the budget; "
                     r"ix\.show\('runbooks/payments\.md#rollback-procedure'\) from line \1\]", named), named
