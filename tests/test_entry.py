"""The light entry point: search, show and token print what the click CLI prints, without click."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from pathlib import Path

import pytest

from mdfts.entry import read_args

pytestmark = pytest.mark.integration  # every case runs real processes

ROLLBACK = "runbooks/payments.md#rollback-procedure"
CLICK = "import sys; from mdfts.cli import cli; cli.main(sys.argv[1:], prog_name='mdfts')"


def _run(argv: list[str], click: bool, stdin: str | None = None) -> tuple[int, str, str]:
    cmd = [sys.executable, "-c", CLICK, *argv] if click else [sys.executable, "-m", "mdfts", *argv]
    p = subprocess.run(cmd, capture_output=True, text=True, input=stdin, timeout=60)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["search", "{db}", "payments rollback"],
        ["search", "{db}", "payments rollback", "--json", "-k", "2"],
        ["search", "--limit=3", "{db}", "PAYMENTS_DB_URL"],
        ["search", "{db}", "-k3", "--", "--force-with-lease"],
        ["search", "{db}", "zzqx nothing matches"],
        ["search", "{db}", "?!"],
        ["search", "{db}", "x", "-k", "0"],  # out of range: click's message
        ["search", "{db}", "x", "-k", "\u00b2"],  # str.isdigit() but not int(): was a traceback
        ["token", "{db}", "E1027", "--limit=\u00b2"],
        ["search", "{db}"],  # no query: click's usage error
        ["search", "{db}", "x", "--sql"],
        ["search", "{missing}", "x"],
        ["show", "{db}", ROLLBACK],
        ["show", "{db}", ROLLBACK, "--neighbors", "--json"],
        ["show", "{db}", "runbooks/payments.md"],
        ["show", "{db}", "runbooks/payments.md#no-such-anchor"],
        ["token", "{db}", "PAYMENTS_DB_URL", "--json"],
        ["token", "{db}", "-k", "1", "--", "--force-with-lease"],
        ["token", "{db}", "NO_SUCH_TOKEN_HERE"],
        ["search", "--help"],
    ],
)
def test_the_fast_path_prints_what_click_prints(sample_db: Path, tmp_path: Path, args: list[str]) -> None:
    argv = [a.format(db=sample_db, missing=tmp_path / "missing.db") for a in args]
    assert _run(argv, click=False) == _run(argv, click=True)


def test_queries_from_a_file_print_what_click_prints(sample_db: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text("payments rollback\n\nE1027\n", encoding="utf-8")
    for argv in (["search", str(sample_db), "--queries", str(questions), "-k", "2"],
                 ["search", str(sample_db), "--queries", "-", "--json"]):
        fast = _run(argv, click=False, stdin="payments rollback\n")
        assert fast == _run(argv, click=True, stdin="payments rollback\n")
        assert fast[0] == 0 and fast[1].count("\n") >= 1


@pytest.mark.parametrize(
    ("argv", "read"),
    [
        (["search", "d.db", "q"], ("search", ["d.db", "q"], {"-k": 10})),
        (["search", "d.db", "-k", "5", "--json", "q"], ("search", ["d.db", "q"], {"-k": 5, "--json": True})),
        (["token", "d.db", "--", "-x"], ("token", ["d.db", "-x"], {"-k": 20})),
        (["show", "d.db", "12", "--neighbors"], ("show", ["d.db", "12"], {"--neighbors": True})),
        (["search", "d.db", "--queries", "-"], ("search", ["d.db"], {"--queries": "-", "-k": 10})),
        (["search", "d.db", "q", "--sql"], None),
        (["search", "d.db", "q", "-k", "1001"], None),
        (["search", "d.db", "q", "--queries", "-"], None),
        (["show", "d.db", "12", "-k", "3"], None),
        (["build", "docs", "-o", "d.db"], None),
        (["search", "d.db", "q", "extra"], None),
        ([], None),
    ],
)
def test_read_args(argv: list[str], read: object) -> None:
    assert read_args(argv) == read


def test_a_one_shot_search_imports_no_click(sample_db: Path) -> None:
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "mdfts", "search", str(sample_db), "rollback"],
                       capture_output=True, text=True, timeout=60, check=True)
    imported = {line.split("|")[-1].strip() for line in p.stderr.splitlines() if line.startswith("import time:")}
    assert "mdfts.lookup" in imported
    assert not imported & {"click", "markdown_it", "yaml", "mdfts.cli", "mdfts.build", "mdfts.prompt"}


def _imported(args: list[str]) -> set[str]:
    """The modules a process importing mdfts.entry and running `mdfts ARGS` loads (-X importtime),
    beyond what the bare interpreter (site, .pth files) already loads."""
    def modules(code: str, *argv: str) -> set[str]:
        p = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *argv],
                           capture_output=True, text=True, timeout=60, check=True)
        return {line.split("|")[-1].strip() for line in p.stderr.splitlines() if line.startswith("import time:")}

    return modules("import sys; from mdfts.entry import main; main(sys.argv[1:])", *args) - modules("pass")


@pytest.mark.parametrize(
    "args",
    [["search", "{db}", "rollback"], ["search", "{db}", "--json", "PAYMENTS_DB_URL"],
     ["show", "{db}", ROLLBACK], ["token", "{db}", "PAYMENTS_DB_URL"]],
    ids=["search", "search-json", "show", "token"],
)
def test_a_lookup_builds_no_typing_or_dataclass_machinery(sample_db: Path, args: list[str]) -> None:
    # typing (~2 ms), dataclasses (~5 ms with inspect, ast, dis), contextlib and the source-link
    # and near-miss helpers are what a one-shot lookup used to import before it printed a line.
    imported = _imported([a.format(db=sample_db) for a in args])
    assert "mdfts.records" in imported
    assert not imported & {"typing", "dataclasses", "inspect", "contextlib", "difflib", "string", "html",
                           "importlib.metadata", "click"}


def _readline(proc: subprocess.Popen[str], timeout: float = 30.0) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout), "no answer: the process did not flush its line"
    return proc.stdout.readline()


def test_queries_from_stdin_answer_each_line_before_the_next_arrives(sample_db: Path) -> None:
    # What an agent does: keep one process, send a query, wait for its line, send the next.
    proc = subprocess.Popen([sys.executable, "-m", "mdfts", "search", str(sample_db), "--queries", "-", "-k", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": ""})
    assert proc.stdin is not None
    try:
        answers = []
        for q in ("payments rollback", "PAYMENTS_DB_URL", "on-call escalation"):
            proc.stdin.write(q + "\n")
            proc.stdin.flush()
            answers.append(json.loads(_readline(proc)))
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()
    assert [a["query"] for a in answers] == ["payments rollback", "PAYMENTS_DB_URL", "on-call escalation"]
    assert all(len(a["results"]) == 1 for a in answers)
    assert answers[0]["results"][0]["path"] == "runbooks/payments.md"


@pytest.mark.parametrize("argv", [["search", "{db}", "payments rollback", "--json", "-k", "50"],
                                  ["search", "{db}", "--queries", "{q}", "--json"],
                                  ["token", "{db}", "PAYMENTS_DB_URL"], ["show", "{db}", ROLLBACK]],
                         ids=["search", "queries", "token", "show"])
def test_every_line_arrives_though_the_process_skips_its_teardown(sample_db: Path, tmp_path: Path,
                                                                  argv: list[str]) -> None:
    # The fast path ends its process with os._exit (mdfts.entry._end), which drops whatever a
    # stream still buffers: a pipe from a shell without PYTHONUNBUFFERED must still get it all.
    questions = tmp_path / "q.txt"
    questions.write_text("payments rollback\nE1027\nhow do I page ledger?\n" * 40, encoding="utf-8")
    args = [a.format(db=sample_db, q=questions) for a in argv]
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    fast, click = (subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=buffered)
                   for cmd in ([sys.executable, "-m", "mdfts", *args], [sys.executable, "-c", CLICK, *args]))
    assert (fast.returncode, fast.stdout, fast.stderr) == (click.returncode, click.stdout, click.stderr)
    assert fast.returncode == 0 and fast.stdout.count("\n") >= 1
