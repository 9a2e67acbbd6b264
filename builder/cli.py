"""The `mdfts` command: read options → one library call → output. The only module that prints."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from mdfts import output
from mdfts.errors import MdftsError

F = TypeVar("F", bound=Callable[..., Any])


class MdftsGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MdftsError as err:  # the one place library errors become CLI errors (exit 1)
            raise click.ClickException(str(err)) from err
        except BrokenPipeError:  # `mdfts search ... | head`
            sys.stderr.close()
            sys.exit(0)
        except KeyboardInterrupt as err:  # Ctrl-C: 130, not click's 1; SIGTERM (during a build): 143
            click.echo("\nInterrupted.", err=True)
            signum = err.signum if isinstance(err, _Signalled) else signal.SIGINT
            raise click.exceptions.Exit(128 + signum) from None


class TextCommand(click.Command):
    """A command whose text argument may start with "-" (`--force-with-lease` is a fine query):
    click reads it as an unknown option, so its error says how to pass it instead."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as err:
            if err.possibilities:  # a typo of one of our options: click's suggestion is the answer
                raise
            what = next(p.human_readable_name for p in self.params if isinstance(p, click.Argument) and p.name != "db")
            raise click.NoSuchOption(err.option_name, f"{err.message} If it is the {what}, put it after '--': "
                                     f"mdfts {self.name} DB -- {err.option_name}", ctx=ctx) from None


class IndexFile(click.Path):
    """An index file's path (a Path; a folder is refused): a folder there is most often the docs
    or the output folder, so the error says what to give instead."""

    def __init__(self, output: bool = False) -> None:
        super().__init__(path_type=Path, dir_okay=False)
        self.output = output

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and os.path.isdir(value):
            if self.output:
                self.fail(f"{value!r} is a folder; give the file to write, e.g. {Path(value) / 'docs.db'}", param, ctx)
            self.fail(f"{value!r} is a folder, not an index file; to index the markdown in it: "
                      f"mdfts build {value} -o docs.db", param, ctx)
        return super().convert(value, param, ctx)


# Options every command spells the same way.
def db_argument(f: F) -> F:
    """The index file argument, DB."""
    return click.argument("db", type=IndexFile())(f)


def json_option(what: str) -> Callable[[F], F]:
    """`--json` (as_json): print `what` as JSON instead of text."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what}.")


def limit_option(default: int, most: int, what: str = "Results per query.") -> Callable[[F], F]:
    """`-k/--limit` (k): how many results."""
    return click.option("-k", "--limit", "k", type=click.IntRange(1, most), default=default,
                        show_default=True, help=what)


class QueriesFile(click.File):
    """click.File("rb") that names a closed stdin (a daemon, `<&-`) as a bad value, where click
    raised a RuntimeError."""

    def __init__(self) -> None:
        super().__init__("rb")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "-" and sys.stdin is None:
            self.fail("stdin is closed", param, ctx)
        return super().convert(value, param, ctx)


def _a_number(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A FloatRange value that is a number: `nan` passes every bound (no comparison is true)."""
    if value != value:
        unit = " of seconds" if param.metavar == "SECONDS" else ""
        raise click.BadParameter(f"nan is not a number{unit}", ctx, param)
    return value


def _ten_or_more(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """eval's -k: its columns are Hit@3 and MRR@10 whatever -k is, so fewer results would misname them."""
    if value < 10:
        raise click.BadParameter(f"{value} is below 10 (MRR@10 needs ten results)", ctx, param)
    return value


class _Signalled(KeyboardInterrupt):
    """A signal (SIGTERM) that unwinds like Ctrl-C; the exit code says which one it was."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum: int, frame: Any) -> None:
    raise _Signalled(signum)


def _warn(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # click.version_option wants the version up front; reading it imports importlib.metadata,
    # which a one-shot `mdfts search` should not pay for.
    if value and not ctx.resilient_parsing:
        from mdfts import __version__

        click.echo(f"mdfts, version {__version__}")
        ctx.exit()


@click.group(cls=MdftsGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def cli() -> None:
    """Markdown docs → one versioned, read-only SQLite FTS5 file of heading-bounded sections.

    \b
    Start with:
      mdfts build docs/ -o docs.db
      mdfts search docs.db "how do I roll back payments?"
    then `mdfts COMMAND --help` for any command below.
    """


@cli.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("-o", "--output", "out", required=True, type=IndexFile(output=True),
              help="The .db file to write (replaced atomically; a symlink there is replaced, its target left alone).")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Files to index (default: *.md, *.markdown). Repeatable.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Files to leave out, e.g. 'drafts/**'. Repeatable.")
@click.option("--on-error", type=click.Choice(["fail", "skip"]), default="fail", show_default=True,
              help="On an unreadable file: fail the build (keeping the old index), or warn and skip it.")
@click.option("--source-name", metavar="NAME", help="How mdfts_meta describes the source (default: the folder names).")
@click.option("--source-url", metavar="TEMPLATE",
              help="Link each section to its source, e.g. 'https://github.com/o/r/blob/{commit}/{path}"
                   "#L{start_line}-L{end_line}' (fields: path, start_line, end_line, anchor, commit).")
@click.option("--artifact-version", metavar="V", envvar="MDFTS_ARTIFACT_VERSION",
              help="Version stored in the index [env MDFTS_ARTIFACT_VERSION; default: the git tag at HEAD, "
                   "else YYYYMMDD+<commit>; '' for none].")
@click.option("--previous", metavar="OLD.db", type=IndexFile(),
              help="Copy unchanged files (same path and sha256) from this older index instead of "
                   "parsing them; the result equals a full build. May be the --output file itself.")
@click.option("--allow-empty", is_flag=True, help="Build an index even when no file matches (else an error).")
@click.option("--api-url", metavar="URL", envvar="GITHUB_API_URL",
              help="GitHub API for github: sources [env GITHUB_API_URL; default https://api.github.com].")
@click.option("--max-wait", metavar="SECONDS", type=click.FloatRange(0), default=900, show_default=True,
              callback=_a_number,
              help="Longest total wait for GitHub's rate limits; 0 fails at once.")
@click.option("--force", is_flag=True,
              help="Replace the output even when it is not an mdfts index (never a file in a source folder).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary.")
@json_option("the build summary as one JSON object (stdout)")
def build(sources: tuple[str, ...], out: Path, include: tuple[str, ...], exclude: tuple[str, ...],
          on_error: str, source_name: str | None, source_url: str | None, artifact_version: str | None,
          previous: Path | None, allow_empty: bool, api_url: str | None, max_wait: float, force: bool,
          quiet: bool, as_json: bool) -> None:
    """Build an index from folders of markdown and GitHub repositories.

    A source is a folder, a file, or github:OWNER/REPO[@REF][:PATH]: one tarball download, token
    from GITHUB_TOKEN or GH_TOKEN (see docs/github.md).

    \b
    Examples:
      mdfts build docs/ -o dist/docs.db
      mdfts build docs/ -o dist/docs.db --previous dist/docs.db   # incremental
      mdfts build github:acme/handbook@main:docs -o dist/handbook.db
    """
    from mdfts.build import build_index
    from mdfts.discover import DEFAULT_INCLUDE
    from mdfts.github import GitHubOptions

    bar = None
    show_bar = not quiet and sys.stderr.isatty()

    line_open = False  # a download's progress line, ended before anything else is printed

    def fetched(source: str, size: int, files: int) -> None:
        nonlocal line_open
        line_open = True
        click.echo(f"\rDownloading {source}: {size / 1e6:.1f} MB, {files} files kept", nl=False, err=True)

    def end_line() -> None:
        nonlocal line_open
        if line_open:
            click.echo("", err=True)
            line_open = False

    def progress(done: int, total: int, path: str) -> None:
        nonlocal bar
        end_line()
        if bar is None:
            bar = click.progressbar(length=total, label="Indexing", file=sys.stderr)
            bar.__enter__()
        bar.update(1)

    received: list[int] = []

    def interrupt(signum: int, frame: Any) -> None:
        received.append(signum)
        _interrupt(signum, frame)

    # SIGTERM (a cancelled CI job, `timeout`) unwinds like Ctrl-C, so the temp files go too.
    old_term = signal.signal(signal.SIGTERM, interrupt)
    old_int = signal.getsignal(signal.SIGINT)
    if old_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupt)
    try:
        result = build_index(
            list(sources), out, include=include or DEFAULT_INCLUDE, exclude=exclude, on_error=on_error,
            source_name=source_name, source_url=source_url, artifact_version=artifact_version, warn=_warn,
            progress=progress if show_bar else None, previous=previous, allow_empty=allow_empty, force=force,
            github=GitHubOptions(api_url=api_url, max_wait=max_wait, progress=fetched if show_bar else None),
        )
    except MdftsError:
        # What a handler raises inside an SQLite function (the build's mdfts_ln) sqlite3 swallows,
        # failing the statement instead: the build failed because it was interrupted.
        if received:
            raise _Signalled(received[0]) from None
        raise
    finally:
        signal.signal(signal.SIGTERM, old_term)
        if old_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, old_int)
        end_line()
        if bar is not None:
            bar.__exit__(None, None, None)
    summary = result.to_dict()
    if as_json:
        click.echo(output.to_json(summary))
    elif not quiet:
        click.echo(output.build_summary(summary), err=True)


@cli.command()
@click.argument("sources", metavar="DIR...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "github"]), default="text", show_default=True,
              help="text: path:line: severity: message [rule]; github: workflow annotations.")
@json_option("the findings as a JSON array of {path, line, severity, rule, message}")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error", show_default=True,
              help="Exit 1 when a finding is this severe or worse.")
@click.option("--max-section-chars", type=click.IntRange(1), default=8000, show_default=True,
              help="Flag sections longer than this.")
@click.option("--ignore", multiple=True, metavar="RULE", help="Leave out a rule, e.g. empty-section. Repeatable.")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Files to check (default: *.md, *.markdown). Repeatable.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Files to leave out. Repeatable.")
def check(sources: tuple[Path, ...], fmt: str, as_json: bool, fail_on: str, max_section_chars: int,
          ignore: tuple[str, ...], include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Lint docs for retrieval: headings, section sizes, links and #anchors that resolve.

    Rules (severity): unreadable, broken-link, broken-anchor (error); empty-file, no-headings,
    skipped-level, duplicate-heading, oversized-section, broken-include (warning); empty-section
    (info).

    \b
    Examples:
      mdfts check docs/
      mdfts check docs/ --format github --fail-on warning
    """
    from mdfts import check as lib
    from mdfts.discover import DEFAULT_INCLUDE
    from mdfts.errors import ThresholdError

    unknown = sorted(set(ignore) - set(lib.RULES))
    if unknown:
        raise click.UsageError(f"--ignore {unknown[0]}: no such rule; rules: {', '.join(lib.RULES)}")
    findings, files = lib.check_docs(
        list(sources), include=include or DEFAULT_INCLUDE, exclude=exclude,
        max_section_chars=max_section_chars, ignore=ignore, warn=_warn,
    )
    if as_json:
        click.echo(output.to_json(lib.to_json(findings)))
    else:
        click.echo(output.findings_github(findings) if fmt == "github" else output.findings_text(findings), nl=False)
    summary = output.check_summary(findings, files)
    if lib.at_or_above(findings, fail_on):
        raise ThresholdError(f"{summary} (--fail-on {fail_on})")
    if not as_json:
        click.echo(summary, err=True)


@cli.command()
@click.argument("old", metavar="OLD.db", type=IndexFile())
@click.argument("new", metavar="NEW.db", type=IndexFile())
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True,
              help="text: a summary and lists; markdown: tables for a pull-request comment.")
@json_option("one JSON object")
def diff(old: Path, new: Path, fmt: str, as_json: bool) -> None:
    """Show the documents, sections and exact tokens added, removed and changed from OLD.db to NEW.db.

    Sections are matched by path and anchor; one is changed when its text differs.

    \b
    Examples:
      mdfts diff main.db pr.db
      mdfts diff main.db pr.db --format markdown > comment.md
    """
    from mdfts.diff import diff_indexes

    result = diff_indexes(old, new)
    if as_json:
        click.echo(output.to_json(result))
    else:
        click.echo(output.diff_markdown(result) if fmt == "markdown" else output.diff_text(result), nl=False)


@cli.command()
@db_argument
@json_option("one JSON object")
def info(db: Path, as_json: bool) -> None:
    """Show an index's versions, source, counts and whether this mdfts can read it.

    \b
    Example:
      mdfts info dist/docs.db --json
    """
    from mdfts.index import index_info

    data = index_info(db)
    click.echo(output.to_json(data) if as_json else output.info_text(data))


@cli.command(cls=TextCommand)
@db_argument
@click.argument("query", required=False)
@limit_option(10, 1000)
@click.option("--queries", "queries_file", type=QueriesFile(),
              help="Run every line of this file as a query (- for stdin); prints JSON Lines, one a line.")
@json_option("JSON: an array, or with --queries one object a line; the markdown is body, and content (an alias)")
@click.option("--sql", "show_sql", is_flag=True, help="Print the SQL of the search query instead.")
@click.option("--explain", is_flag=True,
              help="Show why each hit ranks: every signal's value and share, how each term matched.")
@click.option("--path-prefix", "path_prefix", metavar="PREFIX",
              help="Search only the documents whose path starts with PREFIX (runbooks/).")
def search(db: Path, query: str | None, k: int, queries_file: Any, as_json: bool, show_sql: bool,
           explain: bool, path_prefix: str | None) -> None:
    """Find the sections that best match QUERY (any text: words, ENV_VARS, --flags, E1234).

    \b
    Examples:
      mdfts search dist/docs.db "payments rollback PAYMENTS_DB_URL"
      mdfts search dist/docs.db --queries questions.txt --json -k 5
      mdfts search dist/docs.db -- --force-with-lease    # a query that starts with "-"
      mdfts search dist/docs.db "PaymentsGatewayDown mitigation" --explain
      mdfts search dist/docs.db "rollback" --path-prefix runbooks/
    """
    from mdfts import commands
    from mdfts.index import open_index

    if queries_file is not None and query is not None:
        raise click.UsageError("give QUERY or --queries, not both")
    if show_sql:
        with open_index(db) as ix:
            click.echo(ix.sql("search"), nl=False)
        return
    if queries_file is not None:
        commands.search_lines(db, queries_file, k, click.echo, explain=explain, path_prefix=path_prefix)
        return
    if query is None:
        open_index(db).close()  # first: `mdfts search rollback` names the missing index file
        raise click.UsageError("give a QUERY, or --queries FILE")
    commands.search(db, query, k, as_json, click.echo, explain=explain, path_prefix=path_prefix)


@cli.command()
@db_argument
@click.argument("ref")
@click.option("--neighbors", is_flag=True, help="Also show the parent, previous, next and child sections.")
@click.option("--from-line", "from_line", type=click.IntRange(1), metavar="N",
              help="Start at line N of the file: the rest of a section a context block cut.")
@json_option("JSON: an array of sections, a document's outline, or a folder's documents")
def show(db: Path, ref: str, neighbors: bool, from_line: int | None, as_json: bool) -> None:
    """Print a section by REF: an id, PATH#ANCHOR (any case), PATH:LINE, or PATH for its outline.

    A FOLDER/ (ending in "/") lists its documents. A REF that names no section lists the nearest
    anchors of that document. --from-line N leaves out the lines before line N of the file.

    \b
    Examples:
      mdfts show dist/docs.db 42
      mdfts show dist/docs.db runbooks/payments.md#rollback-procedure --neighbors
      mdfts show dist/docs.db runbooks/payments.md:90
      mdfts show dist/docs.db runbooks/payments.md#rollback-procedure --from-line 93
      mdfts show dist/docs.db runbooks/payments.md
      mdfts show dist/docs.db runbooks/
    """
    from mdfts import commands

    commands.show(db, ref, neighbors, as_json, click.echo, from_line=from_line)


@cli.command(cls=TextCommand)
@db_argument
@click.argument("tok", metavar="TOKEN")
@limit_option(20, 10000, "Sections to list.")
@json_option("a JSON array")
def token(db: Path, tok: str, k: int, as_json: bool) -> None:
    """List the sections that contain an exact TOKEN (case-exact matches first).

    \b
    Examples:
      mdfts token dist/docs.db PAYMENTS_DB_URL
      mdfts token dist/docs.db -- --force-with-lease     # a token that starts with "-"
    """
    from mdfts import commands

    commands.token(db, tok, k, as_json, click.echo)


def _param(values: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in values:
        name, eq, value = item.partition("=")
        name = name.lstrip(":")
        if not eq or not name:
            raise click.UsageError(f"--param takes NAME=VALUE, not {item!r}")
        if name in out:  # the last one silently won
            raise click.UsageError(f"--param {name} is given twice")
        digits = value.removeprefix("-")
        out[name] = int(value) if digits.isascii() and digits.isdigit() else value
    return out


@cli.command()
@db_argument
@click.argument("name", required=False)
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help="A query parameter. Repeatable.")
@json_option("a JSON array of objects keyed by column")
@click.option("--sql", "show_sql", is_flag=True, help="Print the query's SQL instead of running it.")
def query(db: Path, name: str | None, params: tuple[str, ...], as_json: bool, show_sql: bool) -> None:
    """Run a query shipped in the index by NAME; without NAME, list them.

    \b
    Examples:
      mdfts query dist/docs.db
      mdfts query dist/docs.db token --param token=E1027 --json
    """
    from mdfts import lookup as lib

    if name is None:
        click.echo(output.table(lib.list_queries(db), ["name", "params", "title"], width=90))
        return
    if show_sql:
        click.echo(lib.run_named_sql(db, name), nl=False)
        return
    rows = lib.run_named(db, name, _param(params))
    click.echo(output.to_json(rows) if as_json else output.table(rows) or "(no rows)")


@cli.command(cls=TextCommand)
@db_argument
@click.argument("question")
@click.option("--budget", "--max-tokens", "budget", type=click.IntRange(50, 1_000_000), default=2000,
              show_default=True, help="Tokens for everything printed (4 bytes a token, or tiktoken when installed).")
@limit_option(5, 100, "Matches to consider.")
@click.option("--format", "fmt", type=click.Choice(["xml", "markdown", "json"]), default="xml", show_default=True,
              help="xml: <documents> for long-context prompts; markdown: ### [n] headers; json: fields and provenance.")
@json_option("JSON: the same as --format json")
@click.option("--path-prefix", "path_prefix", metavar="PREFIX",
              help="Take sections only from the documents whose path starts with PREFIX (runbooks/).")
def context(db: Path, question: str, budget: int, k: int, fmt: str, as_json: bool, path_prefix: str | None) -> None:
    """Print prompt-ready sections for QUESTION, never more than --budget tokens in all.

    Matches first (best first), then their parents and neighbours while they fit; grouped by
    document, in document order; what does not fit is listed as omitted. A match cut to fit ends
    with the `mdfts show ... --from-line N` that prints the rest. Put the question after it.

    \b
    Examples:
      mdfts context dist/docs.db "how do I roll back payments?" --budget 1500
      mdfts context dist/docs.db "how do I roll back payments?" --format markdown | llm -s "Answer from these docs"
      mdfts context dist/docs.db "who do I page?" --path-prefix runbooks/
    """
    import shlex

    from mdfts import lookup as lib
    from mdfts.index import open_index
    from mdfts.records import Hit

    def read_on(hit: Hit, line: int) -> str:  # the command that prints the rest of a cut match
        return f"mdfts show {shlex.quote(str(db))} {shlex.quote(hit.ref)} --from-line {line}"
    with open_index(db) as ix:
        ctx = ix.context(question, max_tokens=budget, format="json" if as_json else fmt, limit=k,  # type: ignore[arg-type]
                         path_prefix=path_prefix, read_on=read_on)
        why = "" if ctx.blocks or ctx.omitted else lib.why_no_hits(ix, question, path_prefix)
    click.echo(ctx.text if as_json else output.inert(ctx.text), nl=False)
    if why:
        click.echo(why, err=True)


@cli.command()
@click.argument("dbs", metavar="DB...", nargs=-1, required=True, type=IndexFile())
@click.option("--http", "http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="Port for --http.")
@click.option("--max-tokens", type=click.IntRange(100), default=6000, show_default=True,
              help="Largest fetch or context result; an agent's larger value is lowered to it.")
@click.option("--max-results", type=click.IntRange(1), default=20, show_default=True,
              help="Most hits a search or token call returns.")
@click.option("--workers", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Calls answered at once (each index opened this many times); the others wait in turn.")
@click.option("--time-limit-ms", type=click.IntRange(1), default=5000, show_default=True,
              help="Stop a call's queries after this long; a call that waits as long for a worker is told to retry.")
def mcp(dbs: tuple[Path, ...], http: bool, port: int, max_tokens: int, max_results: int, workers: int,
        time_limit_ms: int) -> None:
    """Serve indexes to agents over MCP: tools search, fetch, token, context and outline.

    Read-only; each index is named by its file stem; several are searched together (merged by
    reciprocal rank). Stdio by default. Needs `pip install 'mdfts[mcp]'`.

    \b
    Examples:
      mdfts mcp dist/docs.db
      mdfts mcp dist/docs.db dist/runbooks.db --http --port 8765
    """
    try:
        import mcp as _  # noqa: F401
    except ImportError:
        raise MdftsError("the MCP server needs the mcp package: pip install 'mdfts[mcp]'") from None
    from mdfts.mcp_server import Caps, serve

    caps = Caps(max_tokens=max_tokens, max_results=max_results, workers=workers, time_limit_ms=time_limit_ms)
    _cap_address_space()
    serve(list(dbs), caps, http=http, port=port)


def _cap_address_space() -> None:
    """Bound this server's address space (SERVE_MEMORY_BYTES), unless a lower bound is set: a call
    that needs more fails, not the machine."""
    import resource

    from mdfts.browse import SERVE_MEMORY_BYTES

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > SERVE_MEMORY_BYTES:
        resource.setrlimit(resource.RLIMIT_AS, (SERVE_MEMORY_BYTES, SERVE_MEMORY_BYTES))


@cli.command(name="datasette-metadata")
@click.argument("dbs", metavar="DB...", nargs=-1, required=True, type=IndexFile())
@click.option("--config", "as_config", is_flag=True,
              help="Print a Datasette 1.0 datasette.yaml (stored queries, table settings) instead.")
def datasette_metadata(dbs: tuple[Path, ...], as_config: bool) -> None:
    """Print the Datasette settings the mdfts plugin generates, to use without the plugin.

    Datasette 0.65 reads it all from metadata.json; 1.0 reads stored queries and table
    settings from datasette.yaml (--config) and descriptions from metadata.

    \b
    Examples:
      mdfts datasette-metadata dist/docs.db > metadata.json
      datasette --immutable dist/docs.db -m metadata.json
      mdfts datasette-metadata dist/docs.db --config > datasette.yaml
    """
    from mdfts.browse import generated_settings

    data = generated_settings(list(dbs), config=as_config)
    click.echo(output.to_yaml(data) if as_config else output.to_json(data), nl=not as_config)


@cli.command()
@click.argument("dbs", metavar="DB...", nargs=-1, required=True, type=IndexFile())
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; 0.0.0.0 lets other machines in.")
@click.option("--port", type=click.IntRange(0, 65535), default=8001, show_default=True,
              help="Port to listen on; 0 picks a free one.")
@click.option("--allow-sql", is_flag=True, help="Let visitors run arbitrary read-only SQL.")
@click.option("--allow-download", is_flag=True, help="Let visitors download the whole .db file.")
@click.option("--time-limit-ms", type=click.IntRange(1), default=1000, show_default=True,
              help="Stop any query that runs longer.")
def serve(dbs: tuple[Path, ...], host: str, port: int, allow_sql: bool, allow_download: bool,
          time_limit_ms: int) -> None:
    """Browse indexes in Datasette: ranked search, facets, rendered sections, source links.

    Read-only (immutable); the URL name of each database is its file stem. Needs
    `pip install 'mdfts[datasette]'`.

    \b
    Example:
      mdfts serve dist/docs.db --port 8001
    """
    from mdfts.browse import serve_args

    args = serve_args(list(dbs), host, port, allow_sql, allow_download, time_limit_ms)
    try:
        from datasette.cli import cli as datasette_cli
    except ImportError:
        raise MdftsError("Datasette is not installed; pip install 'mdfts[datasette]'") from None
    _cap_address_space()
    datasette_cli.main(args, prog_name="mdfts serve")


@cli.command(name="eval")
@db_argument
@click.argument("queries_file", metavar="QUERIES.jsonl", type=click.Path(path_type=Path, dir_okay=False))
@click.option("-k", "--limit", "k", type=click.IntRange(max=100), default=10, show_default=True,
              callback=_ten_or_more, help="Results per query to score: 10 or more, as MRR@10 needs ten.")
@click.option("--min-hit1", type=click.FloatRange(0, 1), callback=_a_number,
              help="Exit 1 when overall Hit@1 is below this.")
@json_option("the metrics (and every query's rank) as JSON")
def eval_(db: Path, queries_file: Path, k: int, min_hit1: float | None, as_json: bool) -> None:
    """Score retrieval on labelled queries: Hit@1, Hit@3, MRR@10, FileHit@1, per kind.

    Each line of QUERIES.jsonl: {"id", "q", "gold": [{"path", "line"}], "kind"}; a hit is the
    gold path with start_line <= line <= end_line. Gold is not empty; "kind" may be left out,
    and is not "all", the row of every query.

    \b
    Example:
      mdfts eval dist/sample-docs.db sample/queries.jsonl --min-hit1 0.8
    """
    from mdfts.errors import ThresholdError
    from mdfts.evaluate import evaluate

    result = evaluate(db, queries_file, k=k)
    click.echo(output.to_json(result) if as_json else output.eval_text(result))
    overall = result["kinds"]["all"]
    hit1 = overall["hit1"]
    if min_hit1 is not None and hit1 < min_hit1:
        # the counts too: rounded, 399 of 499 would read "0.800 is below 0.8"
        raise ThresholdError(f"Hit@1 {hit1:.3f} ({round(hit1 * overall['n'])} of {overall['n']}) "
                             f"is below --min-hit1 {min_hit1}")
