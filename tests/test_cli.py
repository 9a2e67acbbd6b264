"""The `mdfts` command: each verb's output, exit codes, and one-line errors without tracebacks."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from mdfts import __version__
from mdfts.artifact import SCHEMA_VERSION
from mdfts.cli import cli

from conftest import FIXTURE_DOCS, REPO, run_cli


def test_version() -> None:
    result = run_cli(["--version"])
    assert (result.exit_code, result.stdout) == (0, f"mdfts, version {__version__}\n")


def test_help_lists_every_command() -> None:
    result = run_cli(["--help"])
    assert result.exit_code == 0
    for command in ("build", "info", "search", "show", "token", "query", "context", "eval"):
        assert re.search(rf"^  {command}\s", result.stdout, re.M), command
        assert run_cli([command, "-h"]).exit_code == 0


def test_help_says_where_to_start() -> None:
    # `mdfts` alone is a new user's first command: it should show the first two to run.
    text = run_cli(["--help"]).stdout
    assert ("  Start with:\n    mdfts build docs/ -o docs.db\n"
            "    mdfts search docs.db \"how do I roll back payments?\"\n") in text


def test_build_then_info(tmp_path: Path) -> None:
    out = tmp_path / "dist" / "docs.db"
    result = run_cli(["build", FIXTURE_DOCS, "-o", out])
    assert result.exit_code == 0 and result.stdout == ""
    assert re.fullmatch(rf"{re.escape(str(out))}: \d+ documents, \d+ sections, [\d,]+ exact tokens, [\d,]+ bytes in "
                        r"\d+\.\d\ds\n", result.stderr)
    info = json.loads(run_cli(["info", out, "--json"]).stdout)
    assert (info["schema_version"], info["compatible"], info["meta"]["source"]) == (SCHEMA_VERSION, True, "docs")
    assert info["queries"] == ["documents", "neighbors", "outline", "search", "section", "token"]
    text = run_cli(["info", out]).stdout
    assert f"schema            {SCHEMA_VERSION} (this mdfts reads {SCHEMA_VERSION}: compatible)" in text


def test_build_quiet_prints_nothing(tmp_path: Path) -> None:
    result = run_cli(["build", FIXTURE_DOCS, "-o", tmp_path / "q.db", "--quiet"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_build_on_error_skip(docs_dir: Path, tmp_path: Path) -> None:
    (docs_dir / "bad.md").write_bytes(b"# ok\n\xff\n")
    result = run_cli(["build", docs_dir, "-o", tmp_path / "s.db", "-q", "--on-error", "skip"])
    assert (result.exit_code, result.stderr) == (0, "Warning: bad.md:2: not valid UTF-8; skipped\n")


def test_search_text(fixture_db: Path) -> None:
    result = run_cli(["search", fixture_db, "payments rollback PAYMENTS_DB_URL", "-k", "2"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert re.fullmatch(r" 1\. services/payments\.md:10-18  payments > Rollback procedure  \[\d+\.\d{3}\]", lines[0])
    assert lines[1].startswith("    ") and "[" in lines[1]  # a snippet with the match marked
    assert sum(1 for line in lines if re.match(r" ?\d+\. ", line)) == 2


def test_search_json(fixture_db: Path) -> None:
    result = run_cli(["search", fixture_db, "E1027", "--json"])
    hits = json.loads(result.stdout)
    assert result.exit_code == 0 and hits
    assert set(hits[0]) == {"rank", "id", "ref", "path", "heading", "trail", "anchor", "level", "start_line",
                            "end_line", "score", "exact", "snippet", "url", "body", "content"}
    assert hits[0]["content"] == hits[0]["body"] and hits[0]["url"] is None  # no --source-url at build
    assert (hits[0]["path"], hits[0]["heading"]) == ("services/payments.md", "E1027 idempotency conflicts")
    assert hits[0]["exact"] is True  # E1027 is an identifier, and this section holds it


def test_search_no_hits_says_so(fixture_db: Path) -> None:
    result = run_cli(["search", fixture_db, "zzzqqqxxx"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "no section matches: 'zzzqqqxxx'\n")
    assert run_cli(["search", fixture_db, "zzzqqqxxx", "--json"]).stdout == "[]\n"


def test_search_batch_one_line_per_input_line(fixture_db: Path, tmp_path: Path) -> None:
    queries = ["E1027", "", "rollback", "E1027", "!!!", "  ", "STRIPE_WEBHOOK_SECRET"]
    qfile = tmp_path / "q.txt"
    qfile.write_text("\n".join(queries) + "\n", encoding="utf-8")
    result = run_cli(["search", fixture_db, "--queries", qfile, "--json", "-k", "3"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == len(queries)
    objs = [json.loads(line) for line in lines]
    assert [o["query"] for o in objs] == queries
    assert objs[0] == objs[3]  # a repeated query gives the same line
    assert [len(o["results"]) for o in objs][1::3] == [0, 0]  # blank line, and a line of spaces
    assert objs[4]["results"] == []
    first = objs[0]["results"][0]
    assert {"id", "path", "heading", "trail", "anchor", "start_line", "end_line", "score", "content"} <= set(first)
    assert first["content"].startswith("### `E1027` idempotency conflicts")
    assert all(len(o["results"]) <= 3 for o in objs)


@pytest.mark.parametrize("light", [False, True], ids=["click", "light-entry"])
def test_search_batch_splits_lines_on_newline_only(fixture_db: Path, tmp_path: Path, light: bool) -> None:
    # str.splitlines() and text-mode files also break at U+2028, form feed, \x1c and a lone \r:
    # one input line gave several result lines. A CRLF's \r is dropped; bad UTF-8 is replaced.
    queries = ["E1027\u2028rollback", "a\x0cb", "c\x1cd", "e\rf", "crlf", "bad\ufffd"]
    raw = "\n".join(queries[:4]).encode() + b"\ncrlf\r\nbad\xff\n"
    qfile = tmp_path / "q.txt"
    qfile.write_bytes(raw)
    args = ["search", str(fixture_db), "--queries", str(qfile), "-k", "1"]
    if light:  # `mdfts` (mdfts.entry) runs search without click
        done = subprocess.run([sys.executable, "-m", "mdfts", *args], capture_output=True, text=True, timeout=120)
        code, out = done.returncode, done.stdout
    else:
        result = run_cli(args)
        code, out = result.exit_code, result.stdout
    lines = out.split("\n")
    assert code == 0 and lines[-1] == ""
    assert [json.loads(line)["query"] for line in lines[:-1]] == queries


@pytest.mark.parametrize("light", [False, True], ids=["click", "light-entry"])
def test_search_batch_reads_at_most_a_mebibyte_of_a_line(fixture_db: Path, tmp_path: Path, light: bool) -> None:
    # A line was read whole before its search: `--queries /dev/zero` (one endless line) grew until
    # the kernel killed the process. search.sql reads the first 2,000 characters of it anyway.
    qfile = tmp_path / "q.txt"
    qfile.write_bytes(b"E1027 " + b"x" * (3 << 20) + b"\nrollback\n")
    args = ["search", str(fixture_db), "--queries", str(qfile), "-k", "1"]
    if light:
        done = subprocess.run([sys.executable, "-m", "mdfts", *args], capture_output=True, text=True, timeout=120)
        code, out = done.returncode, done.stdout
    else:
        result = run_cli(args)
        code, out = result.exit_code, result.stdout
    objs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [len(o["query"]) for o in objs] == [1 << 20, 8]
    assert [o["results"][0]["heading"] for o in objs] == ["E1027 idempotency conflicts", "Rollback procedure"]


@pytest.mark.parametrize("light", [False, True], ids=["click", "light-entry"])
def test_search_batch_from_a_closed_stdin_is_a_usage_error(fixture_db: Path, light: bool) -> None:
    # A process started with no stdin (a daemon, `<&-`): both paths died with a traceback.
    how = ["-m", "mdfts"] if light else ["-c", "import sys; from mdfts.cli import cli; cli.main(sys.argv[1:])"]
    done = subprocess.run([sys.executable, *how, "search", str(fixture_db), "--queries", "-"], capture_output=True,
                          text=True, timeout=120, preexec_fn=lambda: os.close(0))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("\nError: Invalid value for '--queries': stdin is closed\n"), done.stderr


def test_search_batch_from_stdin(fixture_db: Path) -> None:
    result = run_cli(["search", fixture_db, "--queries", "-", "--json"], input="E1027\nrollback\n")
    assert [json.loads(line)["query"] for line in result.stdout.splitlines()] == ["E1027", "rollback"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["search", "{db}"], "give a QUERY, or --queries FILE"),
        (["search", "{db}", "x", "--queries", "-"], "give QUERY or --queries, not both"),
        (["search", "{db}", "x", "-k", "0"], "Invalid value for '-k' / '--limit'"),
        (["query", "{db}", "token", "--param", "nope"], "--param takes NAME=VALUE, not 'nope'"),
        (["query", "{db}", "token", "-p", "=E1027"], "--param takes NAME=VALUE, not '=E1027'"),
        (["query", "{db}", "token", "-p", "token=E1027", "-p", ":token=E1028"], "--param token is given twice"),
        (["build", "-o", "x.db"], "Missing argument 'SOURCES...'"),
        (["nosuchcommand"], "No such command 'nosuchcommand'"),
    ],
    ids=["no-query", "query-and-file", "bad-k", "bad-param", "param-without-name", "param-twice", "no-sources",
         "unknown-command"],
)
def test_usage_errors_exit_2(fixture_db: Path, args: list[str], error: str) -> None:
    result = run_cli([a.format(db=fixture_db) for a in args], input="")
    assert result.exit_code == 2
    assert error in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("command", "what"), [("search", "QUERY"), ("token", "TOKEN"), ("context", "QUESTION")])
def test_an_unknown_option_says_how_to_give_text_that_starts_with_a_dash(fixture_db: Path, command: str,
                                                                       what: str) -> None:
    result = run_cli([command, fixture_db, "--force-with-lease"])
    assert result.exit_code == 2
    assert result.stderr.endswith(
        f"Error: No such option '--force-with-lease'. If it is the {what}, put it after '--': "
        f"mdfts {command} DB -- --force-with-lease\n")


def test_an_option_typo_still_gets_click_suggestion_alone(fixture_db: Path) -> None:
    result = run_cli(["search", fixture_db, "rollback", "--explian"])
    assert result.exit_code == 2
    assert result.stderr.endswith("Error: No such option '--explian'. Did you mean '--explain'?\n")


@pytest.mark.parametrize("command", [["search", "{dir}", "rollback"], ["info", "{dir}"], ["serve", "{dir}"],
                                     ["diff", "{db}", "{dir}"], ["build", "{dir}", "-o", "{db}", "--previous", "{dir}"]],
                         ids=["search", "info", "serve", "diff", "previous"])
def test_a_folder_given_for_an_index_says_how_to_build_one(fixture_db: Path, command: list[str]) -> None:
    result = run_cli([a.format(dir=FIXTURE_DOCS, db=fixture_db) for a in command])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].endswith(
        f"{str(FIXTURE_DOCS)!r} is a folder, not an index file; to index the markdown in it: "
        f"mdfts build {FIXTURE_DOCS} -o docs.db")


def test_a_folder_given_as_the_output_says_to_name_the_file(tmp_path: Path) -> None:
    result = run_cli(["build", FIXTURE_DOCS, "-o", tmp_path])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: Invalid value for '-o' / '--output': {str(tmp_path)!r} is a folder; give the file to write, "
        f"e.g. {tmp_path / 'docs.db'}")


def test_show_by_id_and_by_anchor(fixture_db: Path) -> None:
    by_anchor = run_cli(["show", fixture_db, "services/payments.md#rollback-procedure", "--json"])
    [row] = json.loads(by_anchor.stdout)
    assert (row["heading"], row["start_line"], row["end_line"]) == ("Rollback procedure", 10, 18)
    by_id = run_cli(["show", fixture_db, str(row["id"])])
    assert by_id.stdout.startswith(f"[{row['id']}] services/payments.md#rollback-procedure  services/payments.md:10-18\n"
                                   "## Rollback procedure\n")


def test_show_from_a_line_prints_the_rest_of_the_section(fixture_db: Path) -> None:
    # A cut context block names where the rest starts; `mdfts show` could only print the section
    # from its first line again.
    ref = "services/payments.md#rollback-procedure"
    result = run_cli(["show", fixture_db, ref, "--from-line", "14"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (f"[38] {ref}  services/payments.md:10-18 (from line 14)\n```bash\n"
                             "# go back one revision\nkubectl rollout undo deployment/payments --to-revision=41\n```\n")
    [row] = json.loads(run_cli(["show", fixture_db, ref, "--from-line", "14", "--json"]).stdout)
    assert (row["from_line"], row["body"]) == (14, "```bash\n# go back one revision\n"
                                                   "kubectl rollout undo deployment/payments --to-revision=41\n```\n")
    assert run_cli(["show", fixture_db, ref, "--from-line", "1"]).stdout == run_cli(["show", fixture_db, ref]).stdout
    past = run_cli(["show", fixture_db, ref, "--from-line", "19"])
    assert (past.exit_code, past.stderr) == (1, f"Error: --from-line 19 is past what {ref!r} reads (lines 10-18)\n")
    for args, error in [([ref, "--neighbors"], "--from-line reads one section's REF, not with --neighbors"),
                        (["services/payments.md"], "services/payments.md: a document; --from-line goes with a "
                                                   "section's REF (PATH#ANCHOR)")]:
        refused = run_cli(["show", fixture_db, *args, "--from-line", "12"])
        assert (refused.exit_code, refused.stderr) == (1, f"Error: {error}\n")


def test_show_neighbors(fixture_db: Path) -> None:
    result = run_cli(["show", fixture_db, "services/payments.md#required-env-vars", "--neighbors", "--json"])
    rows = json.loads(result.stdout)
    assert [(r["relation"], r["heading"]) for r in rows] == [
        ("self", "Required ENV vars"), ("parent", "payments"), ("previous", "payments"),
        ("next", "Rollback procedure"),
    ]
    nested = json.loads(run_cli(["show", fixture_db, "nesting.md#top", "--neighbors", "--json"]).stdout)
    assert [(r["relation"], r["heading"]) for r in nested] == [
        ("self", "Top"), ("next", "Child a"), ("child", "Child a"), ("child", "Child b"),
    ]


def test_show_neighbors_of_a_document_is_an_error_as_in_python(fixture_db: Path) -> None:
    """--neighbors asks for a section's relatives: a document's path is refused as Index.neighbors
    refuses it, not answered with its outline as if the flag were not there."""
    result = run_cli(["show", fixture_db, "services/payments.md", "--neighbors"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("Error: services/payments.md: a document, not a section; "
                             "give PATH#ANCHOR or PATH:LINE\n")
    assert run_cli(["show", fixture_db, "services/payments.md"]).exit_code == 0  # its outline


def test_show_a_folder_lists_its_documents_as_index_outline_does(fixture_db: Path) -> None:
    result = run_cli(["show", fixture_db, "services/"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        "path                         title              sections  lines",
        "---------------------------  -----------------  --------  -----",
        "services/env-vars.md         ENV var reference  1         7",
        "services/payments-worker.md  payments-worker    3         16",
        "services/payments.md         payments           5         23",
    ]
    rows = json.loads(run_cli(["show", fixture_db, "services/", "--json"]).stdout)
    assert [r["path"] for r in rows] == ["services/env-vars.md", "services/payments-worker.md", "services/payments.md"]
    missing = run_cli(["show", fixture_db, "service/"])
    assert (missing.exit_code, missing.stdout, missing.stderr) == (
        1, "", "Error: no document's path starts with 'service/'\n")


def test_show_lead_section_by_empty_anchor(fixture_db: Path) -> None:
    [row] = json.loads(run_cli(["show", fixture_db, "lead_text.md#", "--json"]).stdout)
    assert (row["level"], row["start_line"]) == (0, 2)


def test_show_takes_the_refs_it_prints_for_a_file_name_with_a_hash(tmp_path: Path) -> None:
    """`c#sharp.md#sub` read as document `c`, anchor `sharp.md#sub`: a printed ref did not resolve."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "c#sharp.md").write_text("# Sharp\n\nzebraone\n\n## Sub\n\nzebratwo\n", encoding="utf-8")
    db = tmp_path / "index.db"
    assert run_cli(["build", docs, "-o", db, "-q"]).exit_code == 0
    [hit] = json.loads(run_cli(["search", db, "zebratwo", "--json", "-k", "1"]).stdout)
    assert hit["ref"] == "c#sharp.md#sub"
    shown = run_cli(["show", db, hit["ref"]])
    assert (shown.exit_code, shown.stderr) == (0, "")
    assert shown.stdout.startswith(f"[{hit['id']}] c#sharp.md#sub  c#sharp.md:5-7\n## Sub\n")
    outline = run_cli(["show", db, "c#sharp.md"])
    assert (outline.exit_code, outline.stdout.splitlines()[0]) == (0, "c#sharp.md — Sharp")
    missing = run_cli(["show", db, "c#sharp.md#nope"])
    assert (missing.exit_code, missing.stderr) == (1, "Error: no section 'c#sharp.md#nope'; nearest anchors in "
                                                      "c#sharp.md: #sharp, #sub\n")


def test_token(fixture_db: Path) -> None:
    result = run_cli(["token", fixture_db, "E1027"])
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["id", "ref", "lines", "token", "kind", "exact"]
    assert len(lines) == 3 and "services/payments.md#" in lines[2] and lines[2].split()[-3:] == ["E1027", "error_code", "1"]
    none = run_cli(["token", fixture_db, "NOPE_NOT_HERE"])
    assert (none.exit_code, none.stdout, none.stderr) == (0, "", "no section holds the token 'NOPE_NOT_HERE'\n")


def test_query_list_param_and_sql(fixture_db: Path) -> None:
    listing = run_cli(["query", fixture_db]).stdout
    assert [line.split()[0] for line in listing.splitlines()[2:]] == [
        "documents", "neighbors", "outline", "search", "section", "token"]
    rows = json.loads(run_cli(["query", fixture_db, "outline", "--param", "path=nesting.md", "--json"]).stdout)
    assert [r["heading"] for r in rows] == ["Top", "Child a", "Grandchild", "Child b", "Skipped a level"]
    sql = run_cli(["query", fixture_db, "token", "--sql"]).stdout
    assert sql == (REPO / "queries" / "token.sql").read_text(encoding="utf-8").strip() + "\n"
    assert run_cli(["search", fixture_db, "--sql"]).stdout.startswith("-- search: ")
    assert run_cli(["query", fixture_db, "outline", "-p", "path=missing.md"]).stdout == "(no rows)\n"


@pytest.mark.parametrize("fmt", ["xml", "markdown", "json"])
@pytest.mark.parametrize("budget", [60, 150, 400, 5000])
def test_context_respects_the_budget(sample_db: Path, budget: int, fmt: str) -> None:
    result = run_cli(["context", sample_db, "how do I roll back payments?", "--budget", str(budget), "--format", fmt])
    assert result.exit_code == 0
    used = (len(result.stdout.encode("utf-8")) + 3) // 4  # everything printed, 4 bytes a token
    assert used <= budget
    assert f"{used}" in result.stdout  # the block states its own size
    if budget >= 400:
        assert "runbooks/payments.md:83-" in result.stdout  # the best match (json's frame is dearer: cut)


def test_context_json_flag_is_format_json(sample_db: Path) -> None:
    a = run_cli(["context", sample_db, "rollback", "--json"]).stdout
    b = run_cli(["context", sample_db, "rollback", "--format", "json"]).stdout
    assert a == b and json.loads(a)["documents"][0]["ref"]


def test_context_no_match(fixture_db: Path) -> None:
    result = run_cli(["context", fixture_db, "zzzqqqxxx"])
    assert result.exit_code == 0 and "<document " not in result.stdout
    assert result.stderr == "no section matches: 'zzzqqqxxx'\n"


def test_context_keeps_to_a_path_prefix(sample_db: Path) -> None:
    q = "how do I roll back payments?"
    everywhere = json.loads(run_cli(["context", sample_db, q, "--json"]).stdout)["documents"]
    assert any(not d["ref"].startswith("sops/") for d in everywhere)
    result = run_cli(["context", sample_db, q, "--json", "--path-prefix", "sops/"])
    refs = [d["ref"] for d in json.loads(result.stdout)["documents"]]
    assert result.exit_code == 0 and refs and all(r.startswith("sops/") for r in refs)


def test_context_says_when_no_document_is_under_the_path_prefix(sample_db: Path) -> None:
    result = run_cli(["context", sample_db, "rollback", "--path-prefix", "sop/"])
    assert result.exit_code == 0 and "<document " not in result.stdout
    assert result.stderr == "no document's path starts with 'sop/'\n"


@pytest.mark.parametrize("given", ["./sops/", "/sops/"])
def test_a_path_prefix_written_from_the_shell_names_the_one_to_give(sample_db: Path, given: str) -> None:
    """Paths are stored relative to the source folder: `./sops/` (tab completion) or `/sops/` (a
    site's URL) matches nothing, and the message names the prefix that does."""
    for command in (["search", sample_db, "rollback"], ["context", sample_db, "rollback"]):
        result = run_cli([*command, "--path-prefix", given])
        assert result.stderr == f"no document's path starts with {given!r}; paths are relative to the source folder: 'sops/'\n"


def _write_queries(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_eval(fixture_db: Path, tmp_path: Path) -> None:
    qfile = _write_queries(tmp_path / "q.jsonl", [
        {"id": "1", "q": "E1027", "gold": [{"path": "services/payments.md", "line": 21}], "kind": "exact-token"},
        {"id": "2", "q": "payments rollback", "gold": [{"path": "services/payments.md", "line": 12}], "kind": "service"},
        {"id": "3", "q": "zzzqqqxxx", "gold": [{"path": "nesting.md", "line": 1}], "kind": "service"},
    ])
    result = run_cli(["eval", fixture_db, qfile, "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["kinds"]["all"]["n"] == 3
    assert data["kinds"]["exact-token"]["hit1"] == 1.0
    assert [q["rank"] for q in data["per_query"]][2] is None
    assert data["kinds"]["all"]["hit1"] <= 2 / 3
    text = run_cli(["eval", fixture_db, qfile]).stdout
    assert text.splitlines()[0].split() == ["kind", "n", "hit1", "hit3", "mrr10", "filehit1", "median_chars1"]
    gate = run_cli(["eval", fixture_db, qfile, "--min-hit1", "0.99"])
    assert gate.exit_code == 1
    assert re.fullmatch(r"Error: Hit@1 0\.\d{3} \([0-3] of 3\) is below --min-hit1 0\.99\n", gate.stderr)


def test_eval_mrr10_counts_the_top_ten_only(sample_db: Path, tmp_path: Path) -> None:
    """With -k past 10, a gold hit at rank 12 is in the per-query rank but not in MRR@10."""
    twelfth = json.loads(run_cli(["search", sample_db, "payments", "-k", "20", "--json"]).stdout)[11]
    qfile = _write_queries(tmp_path / "q.jsonl", [
        {"id": "1", "q": "payments", "gold": [{"path": twelfth["path"], "line": twelfth["start_line"]}]},
    ])
    data = json.loads(run_cli(["eval", sample_db, qfile, "-k", "20", "--json"]).stdout)
    assert data["per_query"][0]["rank"] == 12
    assert (data["kinds"]["all"]["hit3"], data["kinds"]["all"]["mrr10"]) == (0.0, 0.0)


def test_eval_limit_below_ten_is_bad_usage(fixture_db: Path, tmp_path: Path) -> None:
    """The columns are Hit@3 and MRR@10 whatever -k is: with -k 1, "Hit@3" was Hit@1."""
    qfile = _write_queries(tmp_path / "q.jsonl", [
        {"id": "1", "q": "E1027", "gold": [{"path": "services/payments.md", "line": 21}]},
    ])
    for k in ("9", "1", "0"):
        result = run_cli(["eval", fixture_db, qfile, "-k", k])
        assert (result.exit_code, result.stdout) == (2, ""), k
        assert result.stderr.endswith(
            f"Error: Invalid value for '-k' / '--limit': {k} is below 10 (MRR@10 needs ten results)\n"), k
    assert run_cli(["eval", fixture_db, qfile, "-k", "10"]).exit_code == 0


def test_eval_min_hit1_bounds(fixture_db: Path, tmp_path: Path) -> None:
    """Hit@1 equal to --min-hit1 passes; nan, which passes every range check, is bad usage."""
    qfile = _write_queries(tmp_path / "q.jsonl", [
        {"id": "1", "q": "E1027", "gold": [{"path": "services/payments.md", "line": 21}]},
        {"id": "2", "q": "zzzqqqxxx", "gold": [{"path": "nesting.md", "line": 1}]},
    ])
    assert run_cli(["eval", fixture_db, qfile, "--min-hit1", "0.5"]).exit_code == 0
    assert run_cli(["eval", fixture_db, qfile, "--min-hit1", "0.51"]).exit_code == 1
    result = run_cli(["eval", fixture_db, qfile, "--min-hit1", "nan"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.endswith("Error: Invalid value for '--min-hit1': nan is not a number\n")


def test_eval_bad_line(fixture_db: Path, tmp_path: Path) -> None:
    qfile = tmp_path / "bad.jsonl"
    qfile.write_text('{"q": "x", "gold": [{"path": "a.md", "line": 1}]}\nnot json\n', encoding="utf-8")
    result = run_cli(["eval", fixture_db, qfile])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {qfile}:2: not a labelled query (")


def test_eval_lines_end_at_newline_only(fixture_db: Path, tmp_path: Path) -> None:
    """JSON may hold U+2028 raw in a string (json.dumps(ensure_ascii=False) writes it so)."""
    qfile = tmp_path / "q.jsonl"
    qfile.write_text('{"q": "E1027\u2028payments", "gold": [{"path": "services/payments.md", "line": 21}]}\n',
                     encoding="utf-8")
    result = run_cli(["eval", fixture_db, qfile, "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout)["kinds"]["all"]["n"] == 1


def test_eval_reads_a_file_with_a_bom(fixture_db: Path, tmp_path: Path) -> None:
    """Editors on Windows start a UTF-8 file with a BOM; the docs may have one, so may the queries."""
    qfile = tmp_path / "q.jsonl"
    qfile.write_bytes(b'\xef\xbb\xbf{"q": "E1027", "gold": [{"path": "services/payments.md", "line": 21}]}\r\n')
    result = run_cli(["eval", fixture_db, qfile, "--json"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert json.loads(result.stdout)["per_query"][0]["q"] == "E1027"


_GOLD_NEEDS = "each gold entry needs 'path' and an integer 'line', 1 or more"
_GOLD = b'[{"path": "a.md", "line": 1}]'  # a well-formed gold list
_KIND_NEEDS = "'kind' needs to be a string other than \"\" and \"all\" (the row of every query)"


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b'{"q": "x", "gold": []}\n{"q": "caf\xe9", "gold": []}\n', "bad.jsonl:2: not valid UTF-8"),
        (b'[1, 2]\n', "bad.jsonl:1: not a labelled query (not a JSON object)"),
        (b'{"q": "x", "gold": ["a.md"]}\n', f"bad.jsonl:1: not a labelled query ({_GOLD_NEEDS})"),
        # json.loads gives bool, a subclass of int, for true; no section holds a line 0
        (b'{"q": "x", "gold": [{"path": "a.md", "line": true}]}\n',
         f"bad.jsonl:1: not a labelled query ({_GOLD_NEEDS})"),
        (b'{"q": "x", "gold": [{"path": "a.md", "line": 0}]}\n', f"bad.jsonl:1: not a labelled query ({_GOLD_NEEDS})"),
        (b'{"q": "x", "gold": ' + _GOLD + b'}\n' + b"[" * 100_000 + b"\n",
         "bad.jsonl:2: not a labelled query (nested too deeply)"),
        (b'{"id": "a", "q": "x", "gold": ' + _GOLD + b'}\n\n{"id": "a", "q": "y", "gold": ' + _GOLD + b'}\n',
         "bad.jsonl:3: not a labelled query (id \"a\" is on line 1 too)"),
        # each was scored once: an empty gold as a miss, "all" and "" into the overall row, 3 as kind "3"
        (b'{"q": "x", "gold": []}\n', "bad.jsonl:1: not a labelled query ('gold' is empty: it could never be a hit)"),
        (b'{"q": "x", "gold": ' + _GOLD + b', "kind": "all"}\n', f"bad.jsonl:1: not a labelled query ({_KIND_NEEDS})"),
        (b'{"q": "x", "gold": ' + _GOLD + b', "kind": ""}\n', f"bad.jsonl:1: not a labelled query ({_KIND_NEEDS})"),
        (b'{"q": "x", "gold": ' + _GOLD + b', "kind": 3}\n', f"bad.jsonl:1: not a labelled query ({_KIND_NEEDS})"),
        (b'{"q": "x", "gold": ' + _GOLD + b', "kind": null}\n', f"bad.jsonl:1: not a labelled query ({_KIND_NEEDS})"),
    ],
    ids=["latin-1", "array", "gold-string", "line-true", "line-0", "deep", "duplicate-id",
         "gold-empty", "kind-all", "kind-empty", "kind-number", "kind-null"],
)
def test_eval_bad_file_is_one_line(fixture_db: Path, tmp_path: Path, content: bytes, error: str) -> None:
    (tmp_path / "bad.jsonl").write_bytes(content)
    result = run_cli(["eval", fixture_db, tmp_path / "bad.jsonl"])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {tmp_path}/{error}\n")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["info", "{tmp}/missing.db"], "{tmp}/missing.db: no such index file"),
        (["info", "/dev/null"], "/dev/null: not an index file (not a regular file)"),
        (["search", "{tmp}/notdb.db", "x"], "{tmp}/notdb.db: not an SQLite database (file is not a database)"),
        (["search", "{tmp}/other.db", "x"], "{tmp}/other.db: not an mdfts index (application_id 0); build one with mdfts build"),
        (["build", "{tmp}/nodocs", "-o", "{tmp}/x.db"], "{tmp}/nodocs: no such file or folder"),
        (["query", "{db}", "nope"], "no query named 'nope'; this index has: documents, neighbors, outline, search, section, token"),
        (["query", "{db}", "token", "-p", "bogus=1"], "query 'token' takes :token, :limit; not :bogus"),
        (["query", "{db}", "search", "-p", "q=x", "-p", "limit=abc"], "query 'search' failed (limit='abc', q='x'): datatype mismatch"),
        (["show", "{db}", "nope.md#x"], "no document 'nope.md' in this index; nearest documents: bom.md, "
                                         "nesting.md, lone_cr.md, no_headings.md, unclosed_fence.md"),
        (["show", "{db}", "nesting.md#chld-a"], "no section 'nesting.md#chld-a'; nearest anchors in nesting.md: "
                                                 "#child-a, #child-b, #grandchild"),
        (["show", "{db}", "999999"], "no section with id 999999 in this index"),
        # Past SQLite's 64-bit integers, and digits int() does not take (str.isdigit() does): tracebacks once.
        (["show", "{db}", "99999999999999999999999"], "no section with id 99999999999999999999999 in this index"),
        (["show", "{db}", "\u00b2"], "no document '\u00b2' in this index; nearest documents: atx_closing.md, bom.md, "
                                      "crlf.md, diacritics.md, duplicate_headings.md"),
        (["query", "{db}", "documents", "-p", "limit=\u00b2"], "query 'documents' failed (limit='\u00b2'): datatype mismatch"),
        (["query", "{db}", "section", "-p", "id=99999999999999999999999"],
         "query 'section' failed (id=99999999999999999999999): Python int too large to convert to SQLite INTEGER"),
        (["eval", "{db}", "{tmp}/none.jsonl"], "{tmp}/none.jsonl: cannot read: No such file or directory"),
        # The silent cases: each was exit 0 once.
        (["info", "{tmp}/notdb.db"], "{tmp}/notdb.db: not an SQLite database (file is not a database)"),
        (["info", "{tmp}/other.db"], "{tmp}/other.db: not an mdfts index (application_id 0); build one with mdfts build"),
        (["search", "rollback"], "rollback: no such index file"),
        (["query", "{db}", "token"], "query 'token': missing required parameter :token"),
        (["query", "{db}", "outline", "--json"], "query 'outline': missing required parameter :path"),
        (["build", "{tmp}/empty", "-o", "{tmp}/x.db"],
         "{tmp}/empty: no file matches --include *.md *.markdown; nothing to index (--allow-empty builds an empty index)"),
        (["build", "{tmp}/docs", "-o", "{tmp}/x.db", "--include", "*.rst", "--include", "*.txt"],
         "{tmp}/docs: no file matches --include *.rst *.txt; nothing to index (--allow-empty builds an empty index)"),
        (["build", "{tmp}/docs", "{tmp}/empty", "-o", "{tmp}/x.db", "--exclude", "*.md"],
         "{tmp}/docs, {tmp}/empty: no file matches --include *.md *.markdown, less --exclude *.md; "
         "nothing to index (--allow-empty builds an empty index)"),
    ],
    ids=["missing-db", "info-device", "not-sqlite", "not-mdfts", "missing-docs", "unknown-query", "unknown-param", "bad-limit",
         "unknown-document", "unknown-anchor", "unknown-id", "huge-id", "superscript-id", "superscript-param",
         "huge-param", "missing-queries", "info-not-sqlite", "info-not-mdfts",
         "search-without-db", "missing-param", "missing-param-json", "empty-folder", "include-matches-nothing",
         "exclude-leaves-nothing"],
)
def test_errors_are_one_line(fixture_db: Path, tmp_path: Path, args: list[str], error: str) -> None:
    (tmp_path / "notdb.db").write_bytes(b"this is not sqlite, just some bytes" * 10)
    sqlite_other = tmp_path / "other.db"
    import sqlite3

    sqlite3.connect(sqlite_other).execute("create table t(x)").connection.close()
    (tmp_path / "empty").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n")
    fill = {"tmp": str(tmp_path), "db": str(fixture_db)}
    result = run_cli([a.format(**fill) for a in args])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {error.format(**fill)}\n")
    assert not (tmp_path / "x.db").exists()


def test_info_and_search_refuse_a_non_index_with_one_message(tmp_path: Path) -> None:
    import sqlite3

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t(x)").connection.close()
    info, search = run_cli(["info", other]), run_cli(["search", other, "x"])
    assert (info.exit_code, info.stdout) == (search.exit_code, search.stdout) == (1, "")
    assert info.stderr == search.stderr and "not an mdfts index" in info.stderr


def test_allow_empty_builds_an_index_of_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = tmp_path / "x.db"
    result = run_cli(["build", tmp_path / "empty", "-o", out, "--allow-empty"])
    assert result.exit_code == 0, result.stderr
    info = json.loads(run_cli(["info", out, "--json"]).stdout)
    assert (info["meta"]["files"], info["meta"]["documents"]) == (0, 0)


def test_a_failed_empty_build_keeps_the_old_index(built_db: Path, tmp_path: Path) -> None:
    before = built_db.read_bytes()
    (tmp_path / "empty").mkdir()
    result = run_cli(["build", tmp_path / "empty", "-o", built_db])
    assert result.exit_code == 1 and "no file matches" in result.stderr
    assert built_db.read_bytes() == before


def test_ctrl_c_exits_130(fixture_db: Path) -> None:
    """A real SIGINT to a real process, while it waits for its next query on stdin."""
    import signal

    # (SIGINT back to its default in the child: a test run started in the background has it
    # ignored, and the child would inherit that)
    proc = subprocess.Popen([sys.executable, "-m", "mdfts", "search", str(fixture_db), "--queries", "-", "-k", "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("payments rollback\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["query"] == "payments rollback"  # it is in the loop
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, err.strip()) == (130, "Interrupted.")


def _commands() -> list[tuple[str, click.Command]]:
    assert isinstance(cli, click.Group)
    return sorted(cli.commands.items())


def test_no_short_option_means_two_things() -> None:
    meaning: dict[str, set[str]] = {}
    for _, command in _commands():
        for param in command.params:
            if isinstance(param, click.Option):
                longs = [o for o in param.opts if o.startswith("--")]
                for short in (o for o in param.opts + param.secondary_opts if not o.startswith("--")):
                    meaning.setdefault(short, set()).update(longs)
    assert meaning and {s: m for s, m in meaning.items() if len(m) != 1} == {}


def test_shared_options_are_spelled_the_same_everywhere() -> None:
    """DB, --json and -k/--limit come from one decorator each: one name, one spelling."""
    seen = {"db": 0, "json": 0, "limit": 0}
    for name, command in _commands():
        for param in command.params:
            if param.name == "db":
                assert isinstance(param, click.Argument) and param.human_readable_name == "DB", name
                seen["db"] += 1
            elif param.name == "as_json":
                assert param.opts == ["--json"] and (param.help or "").startswith("Print "), name
                seen["json"] += 1
            elif param.name == "k":
                assert param.opts == ["-k", "--limit"], name
                seen["limit"] += 1
            assert param.name != "fmt" or param.opts == ["--format"], name
    assert seen["db"] >= 6 and seen["json"] >= 7 and seen["limit"] >= 4


def test_schema_mismatch_says_rebuild(fixture_db: Path, tmp_path: Path) -> None:
    import shutil
    import sqlite3

    old = tmp_path / "old.db"
    shutil.copyfile(fixture_db, old)
    conn = sqlite3.connect(old)
    conn.execute("pragma user_version = 99")
    conn.close()
    result = run_cli(["search", old, "x"])
    assert (result.exit_code, result.stderr) == (1, f"Error: {old}: schema 99, this mdfts reads {SCHEMA_VERSION}; rebuild it\n")
    info = json.loads(run_cli(["info", old, "--json"]).stdout)
    assert info["compatible"] is False


@pytest.mark.parametrize("args", [["search", "x"], ["show", "1"], ["token", "E1027"], ["context", "x"], ["query"]],
                         ids=["search", "show", "token", "context", "query"])
def test_an_index_without_its_stored_queries_is_refused_in_one_line(fixture_db: Path, tmp_path: Path,
                                                                    args: list[str]) -> None:
    # A traceback once: the stored queries are read on first use, after the index was checked.
    import shutil
    import sqlite3

    broken = tmp_path / "broken.db"
    shutil.copyfile(fixture_db, broken)
    conn = sqlite3.connect(broken)
    conn.execute("drop table mdfts_queries")
    conn.commit()
    conn.close()
    result = run_cli([args[0], broken, *args[1:]])
    error = f"Error: {broken}: not an mdfts index (no such table: mdfts_queries)\n"
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", error)
    assert run_cli(["info", broken]).stderr == error


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (None, "no such index file"),
        (b"not sqlite" * 20, "not an SQLite database (file is not a database)"),
        (b"", "not an mdfts index (application_id 0); build one with mdfts build"),
    ],
    ids=["missing", "not-sqlite", "not-mdfts"],
)
@pytest.mark.parametrize("command", [["search", "x"], ["show", "1"], ["info"]], ids=["search", "show", "info"])
def test_an_index_path_with_a_line_break_is_named_on_one_line(tmp_path: Path, content: bytes | None, error: str,
                                                              command: list[str]) -> None:
    db = tmp_path / "new\nline.db"
    if content is not None:
        db.write_bytes(content)
    result = run_cli([command[0], db, *command[1:]])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {tmp_path}/new\\nline.db: {error}\n")


def test_python_dash_m(fixture_db: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "mdfts", "token", str(fixture_db), "E1027", "--json"],
                         capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout)[0]["token"] == "E1027"
    bad = subprocess.run([sys.executable, "-m", "mdfts", "info", "/nonexistent/x.db"],
                         capture_output=True, text=True, timeout=60)
    assert (bad.returncode, bad.stdout, bad.stderr) == (1, "", "Error: /nonexistent/x.db: no such index file\n")


def test_a_cut_context_names_the_show_command_that_prints_the_rest(sample_db: Path) -> None:
    # The note said `fetch REF`: no mdfts command is called fetch, and `mdfts show REF` printed
    # the section from its first line again. It names the command that prints the rest.
    ref = "runbooks/payments.md#rollback-procedure"
    block = run_cli(["context", sample_db, "how do I roll back payments", "--budget", "300"])
    [note] = [line for line in block.stdout.splitlines() if "cut for the budget" in line]
    found = re.fullmatch(r"\[… lines (\d+)-103 cut for the budget; (mdfts show .*)\]", note)
    assert found, note
    line = int(found[1])
    command = shlex.split(found[2])
    assert command == ["mdfts", "show", str(sample_db), ref, "--from-line", str(line)]
    rest = run_cli(command[1:])
    assert (rest.exit_code, rest.stderr) == (0, "")
    body = json.loads(run_cli(["show", sample_db, ref, "--json"]).stdout)[0]["body"]
    assert rest.stdout == (f"[141] {ref}  runbooks/payments.md:83-103 (from line {line})\n"
                           + "".join(body.splitlines(keepends=True)[line - 83:]).rstrip() + "\n")
