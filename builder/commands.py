"""What `mdfts search`, `show` and `token` do once their options are read, without click.

The click commands in mdfts.cli and the light entry point (mdfts.entry) both run these, so a
one-shot query prints the same bytes whichever parsed its options. `echo(text, err=False,
nl=True)` writes a line to stdout (or stderr) and flushes it: click.echo, or print.
"""

from __future__ import annotations

import sys

from mdfts import output

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True
if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path
    from typing import IO, Protocol

    class Echo(Protocol):
        def __call__(self, message: str, *, err: bool = False, nl: bool = True) -> object: ...


# The most of one query line kept (search.sql reads its first 2,000 characters): the rest of a
# longer line is read and dropped, so one endless line (`--queries /dev/zero`) holds no more.
MAX_LINE_BYTES = 1 << 20


def query_lines(stream: IO[bytes]) -> Iterator[str]:
    """The lines of a binary stream as text: split on \\n only (a CRLF's \\r dropped), undecodable
    bytes replaced, each cut at MAX_LINE_BYTES. Text-mode files and str.splitlines() also break
    lines at a lone \\r, U+2028, form feed or \\x1c, which gave more result lines than query lines."""
    while raw := stream.readline(MAX_LINE_BYTES):
        rest = raw
        while rest and not rest.endswith(b"\n"):  # a line cut at the bound: skip to its end
            rest = stream.readline(MAX_LINE_BYTES)
        yield raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", errors="replace")


def search_lines(db: Path, lines: IO[bytes], k: int, echo: Echo, explain: bool = False,
                 path_prefix: str | None = None) -> None:
    """One JSON line per query line (a line ends at \\n only), each written (and flushed) before the
    next line is read, so a process on the other end of a pipe can send a query and wait for its answer."""
    from mdfts.index import open_index

    with open_index(db) as ix:
        queries = query_lines(lines)
        for q, found in ix.search_many(queries, limit=k, explain=explain, path_prefix=path_prefix):
            echo(output.to_json_line({"query": q, "results": [h.to_dict(content_alias=True) for h in found]}))


def search(db: Path, query: str, k: int, as_json: bool, echo: Echo, explain: bool = False,
           path_prefix: str | None = None) -> None:
    """The best sections for `query`: a JSON array, or text (a note on stderr when none); with
    `explain`, each hit's score breakdown (search.sql's explain column) too."""
    from mdfts import lookup
    from mdfts.index import open_index

    with open_index(db) as ix:
        hits = ix.search(query, limit=k, explain=explain, path_prefix=path_prefix)
        why = "" if hits else lookup.why_no_hits(ix, query, path_prefix)
    if as_json:  # `content` repeats `body`: batch consumers read that name
        echo(output.to_json([h.to_dict(content_alias=True) for h in hits]))
    elif why:
        echo(why, err=True)
    else:
        echo(output.hits_text(hits, explain=explain))


def show(db: Path, ref: str, neighbors: bool, as_json: bool, echo: Echo, from_line: int | None = None) -> None:
    """The section `ref` names (with `neighbors`, its relatives too), a document's outline, or
    for a folder ending in "/" its documents (as Index.outline gives them); with `from_line`, the
    sections from that line of the file on."""
    from mdfts.errors import MdftsError
    from mdfts.index import open_index
    from mdfts.records import Outline

    includes: list[str] = []  # the files an include-only section stands for (see below)
    with open_index(db) as ix:
        if from_line is not None and (neighbors or ref.endswith("/")):
            raise MdftsError("--from-line reads one section's REF, not with --neighbors" if neighbors
                             else f"{ref}: a folder has no lines; --from-line goes with a section's REF")
        if ref.endswith("/") and not neighbors:
            docs = ix.outline(ref)
            if not docs:
                raise MdftsError(f"no document's path starts with {ref!r}")
            echo(output.to_json([d.to_dict() for d in docs]) if as_json else output.documents_text(docs))
            return
        if neighbors:  # a section's relatives: a document's ref is an error, as in Python
            hits = ix.neighbors(ref)
        else:
            shown = ix.show(ref)
            if isinstance(shown, Outline):
                if from_line is not None:
                    raise MdftsError(f"{ref}: a document; --from-line goes with a section's REF (PATH#ANCHOR)")
                echo(output.to_json(shown.to_dict()) if as_json else output.outline_text(shown))
                return
            hits = [shown]
            from mdfts.lookup import included_files

            includes = included_files(ix, shown.id)
    starts: dict[int, int] = {}
    if from_line is not None:  # as a fetch from a line reads, without its budget
        from mdfts.reading import read_within

        read = read_within(hits, sys.maxsize, lambda h, n: "", from_line=from_line, line_numbers=False, ref=ref,
                           arg="--from-line")
        hits = [p.hit.with_(body=p.body) for p in read.parts]
        starts = {p.hit.id: p.from_line for p in read.parts if p.from_line}
    if as_json:
        echo(output.to_json([{**h.to_dict(), **({"from_line": starts[h.id]} if h.id in starts else {}),
                              **({"includes": includes} if includes else {})} for h in hits]))
        return
    echo("\n".join(output.section_text(h, starts.get(h.id)) for h in hits), nl=False)
    if includes:  # what its include directives name: the site shows those files in its place
        import shlex

        echo("[includes " + ", ".join(f"mdfts show {shlex.quote(str(db))} {shlex.quote(p)}" for p in includes) + "]")


def token(db: Path, tok: str, k: int, as_json: bool, echo: Echo) -> None:
    """The sections holding the exact token `tok`, case-exact ones first."""
    from mdfts import lookup

    hits = lookup.token(db, tok, limit=k)
    if as_json:
        echo(output.to_json([h.to_dict() for h in hits]))
    elif not hits:
        echo(f"no section holds the token {tok!r}", err=True)
    else:
        rows = [{"id": h.id, "ref": h.ref, "lines": f"{h.start_line}-{h.end_line}", "token": h.token,
                 "kind": h.kind, "exact": int(bool(h.exact))} for h in hits]
        echo(output.table(rows, ["id", "ref", "lines", "token", "kind", "exact"], width=70))
