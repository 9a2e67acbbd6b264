"""`mdfts mcp`: an MCP server over one or more indexes (the extra `mdfts[mcp]`, mcp>=2.3,<3).

Five read-only tools (search, fetch, token, context, outline) with structured output and a short
text form, operator caps that clamp an agent's larger values, and per-index resources.
"""

# No `from __future__ import annotations`: the SDK reads the tool signatures at run time, and
# their descriptions name the operator caps of this server.

import contextlib
import datetime
import json
import logging
import queue
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from pydantic import AnyUrl, Field, ValidationError

from mdfts.errors import MdftsError, brief
from mdfts.index import Index, open_index
from mdfts.lookup import has_documents_under, included_files, no_hits, relative_hits, rrf_merge
from mdfts.output import count_noun
from mdfts.prompt import ByteCounter
from mdfts.reading import MIN_TOKENS, NAME, call_text, headings_within, lines_within, read_within
from mdfts.records import Hit, Outline


def _installed_mcp() -> str:
    """`(mcp 1.30.0 is installed)`, or "" when none is."""
    from importlib import metadata

    try:
        return f" (mcp {metadata.version('mcp')} is installed)"
    except metadata.PackageNotFoundError:
        return ""


try:
    from mcp.server import MCPServer
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
    from mcp.server.lowlevel.helper_types import ReadResourceContents
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import (
        ResourceError,
        ResourceNotFoundError,
        ToolError,
        UnexpectedResourceError,
        UnexpectedToolError,
    )
    from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
except ImportError as err:  # no mcp (the CLI checks that first), or a 1.x without the 2.x API
    raise MdftsError(f"the MCP server needs mcp 2.3 or later{_installed_mcp()}; pip install 'mdfts[mcp]'") from err

log = logging.getLogger(__name__)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_count = ByteCounter()


@dataclass(frozen=True, slots=True)
class Caps:
    """Operator limits: an agent's larger value is lowered to the first two, and the result says
    so; `workers` calls run at once, each stopped at `time_limit_ms` (and one that cannot start
    within that time is told the server is busy)."""

    max_tokens: int = 6000
    max_results: int = 20
    workers: int = 4
    time_limit_ms: int = 5000


def _names(paths: Sequence[Path]) -> dict[str, Path]:
    """Index name (file stem, as in Datasette) → path; a repeated name is an error."""
    out: dict[str, Path] = {}
    for path in paths:
        if path.stem in out:
            raise MdftsError(f"{path}: same index name {path.stem!r} as {out[path.stem]}; rename one")
        out[path.stem] = path
    return out


def instructions(indexes: dict[str, Index]) -> str:
    """What the server covers, written from each index's meta, and how to use it."""
    lines = []
    for name, ix in indexes.items():
        m = ix.meta
        parts = [f"{m.get('documents', '?')} documents, {m.get('sections', '?')} sections of {m.get('source', '?')}"]
        if m.get("artifact_version"):
            parts.append(f"version {m['artifact_version']}")
        if m.get("git_commit"):
            parts.append(f"commit {m['git_commit'][:12]}")
        if m.get("built_at", "").isdigit():
            day = datetime.datetime.fromtimestamp(int(m["built_at"]), datetime.timezone.utc).date()
            parts.append(f"built {day.isoformat()}")
        lines.append(f"- index {name!r}: " + ", ".join(parts))
    return (
        "Markdown documentation, split into heading-bounded sections:\n" + "\n".join(lines) + "\n"
        "Use search, then fetch a result's ref (path#anchor, path:line or id) for the whole section; "
        "outline lists a document's headings. Put exact tokens (ENV_VARS, --flags, error codes) in "
        "backticks in a query, or use token. Cite path:lines from the results."
    )


# How often (in SQLite VM instructions) a running statement checks the time limit: a few
# microseconds apart; no cost to measure beside the noise of a search.
_CHECK_EVERY = 10_000


def _stopped(caps: Caps) -> str:
    return (f"stopped at the server's time limit ({caps.time_limit_ms} ms); ask for less (a smaller limit, "
            "a path_prefix, another index) or try again")


def _busy(caps: Caps) -> str:
    calls = "call" if caps.workers == 1 else "calls"
    return f"the server is busy ({caps.workers} {calls} at a time, none free for {caps.time_limit_ms} ms); try again"


class _Server:
    """The indexes, each as `workers` connections: a call borrows one of each index it reads.
    Threads sharing one connection took turns on it, slower than one after another (four searches
    of a 28 MB index at once: 4.2-6.0 s; in turn, 1.25 s). All are opened at the start, so that all
    read the same file even if a rebuild replaces it meanwhile."""

    def __init__(self, pools: dict[str, queue.Queue[Index]], caps: Caps) -> None:
        self.pools, self.caps = pools, caps

    def names(self, index: str | None, missing: type[Exception] = ToolError) -> list[str]:
        if index is None:
            return list(self.pools)
        if index not in self.pools:
            raise missing(f"no index {_brief(index)!r}; indexes: {', '.join(self.pools)}")
        return [index]

    @contextlib.contextmanager
    def reading(self, index: str | None, error: type[Exception] = ToolError,
                missing: type[Exception] | None = None) -> Iterator[dict[str, Index]]:
        """A connection of each index `index` names (all when None) for one call, whose statements
        are interrupted at the time limit: a call running past it raises `error` saying so."""
        deadline = time.monotonic() + self.caps.time_limit_ms / 1000
        stopped: list[bool] = []

        def past_deadline() -> bool:
            if time.monotonic() > deadline:
                stopped.append(True)
                return True
            return False

        taken: dict[str, Index] = {}
        try:
            for name in self.names(index, missing or error):  # the same order in every call: no deadlock
                try:
                    taken[name] = self.pools[name].get(timeout=self.caps.time_limit_ms / 1000)
                except queue.Empty:  # (the server's slots make this a safeguard only)
                    raise error(_busy(self.caps)) from None
                taken[name].conn.set_progress_handler(past_deadline, _CHECK_EVERY)
            yield taken
        except Exception:
            if stopped:  # whatever the interrupted statement became on its way up
                raise error(_stopped(self.caps)) from None
            raise
        finally:
            for name, ix in taken.items():
                ix.conn.set_progress_handler(None, 0)
                self.pools[name].put(ix)

    def one(self, chosen: dict[str, Index], ref: str) -> tuple[str, Index]:
        if len(chosen) == 1:
            return next(iter(chosen.items()))
        found = [(n, ix) for n, ix in chosen.items() if _resolves(ix, ref)]
        if len(found) == 1:
            return found[0]
        if not found:
            name, ix = next(iter(chosen.items()))
            return name, ix  # let its error (with the nearest anchors) speak
        raise ToolError(f"{_brief(ref)!r} is in several indexes ({', '.join(n for n, _ in found)}); give index")

    def clamp(self, name: str, asked: int, cap: int, clamped: dict[str, Any], floor: int = 1) -> int:
        if asked > cap:
            clamped[name] = {"asked": asked, "used": cap, "why": "server maximum"}
            return cap
        if asked < floor:
            clamped[name] = {"asked": asked, "used": floor, "why": "minimum"}
            return floor
        return asked


# What a result or an error repeats of an agent's own text: a 2 MB query is not echoed back whole
# past the operator's caps. The structured `query` keeps what search reads (its first 2,000
# characters); messages keep a few hundred.
ECHO = 300
QUERY_ECHO = 2000


def _brief(text: str, n: int = ECHO) -> str:
    return brief(text, n)


# A result cuts each name it gives to NAME characters, and gives a ref longer than that as the
# section's id, which every tool takes back.
def _name(text: str) -> str:
    return brief(text, NAME)


def _ref(ref: str, section_id: int) -> str:
    return ref if len(ref) <= NAME else str(section_id)


def _named(h: Hit) -> Hit:
    """`h` as a result names it: long names cut, a long ref as the id (the body is kept)."""
    names = (h.ref, h.heading, h.anchor, *h.trail, h.token or "")
    if all(len(n) <= NAME for n in names):
        return h
    return h.with_(ref=_ref(h.ref, h.id), heading=_name(h.heading), anchor=_name(h.anchor),
                   trail=tuple(_name(t) for t in h.trail), token=None if h.token is None else _name(h.token))


def _show(ix: Index, ref: str, miss: type[Exception] = ToolError) -> Hit | Outline:
    """The section or outline a ref names; a bad ref is the tool's error (`miss`: a resource's
    not-found error), with its nearest anchors."""
    try:
        return ix.show(ref)
    except MdftsError as err:
        raise miss(_brief(str(err))) from None


def _resolves(ix: Index, ref: str) -> bool:
    try:
        ix.show(ref)
    except MdftsError:
        return False
    return True


def _hit_json(h: Hit, many: bool) -> dict[str, Any]:
    out = {k: v for k, v in h.to_dict().items() if k != "body"}
    out["title"] = h.title
    out["tokens"] = _count(h.body)
    if not many:
        out.pop("index", None)
    return out


def _hit_line(h: Hit, many: bool) -> str:
    where = f"{h.index}:" if many and h.index else ""
    mark = " (no exact match)" if h.exact is False else ""  # as `mdfts search` marks it
    snippet = " ".join(h.snippet.split())
    return f"[{where}{h.id}] {h.lines} {h.title}{mark}" + (f" — {snippet}" if snippet else "")


def _clamp_note(clamped: dict[str, Any]) -> str:
    if not clamped:
        return ""
    return "\n(" + "; ".join(f"{k} {v['asked']} → {v['used']} ({v['why']})" for k, v in clamped.items()) + ")"


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


# What a call that ran out of memory says: `mdfts mcp` caps its address space (SERVE_MEMORY_BYTES),
# and a search of a common word in a 20 MB section takes ~600 MB, so a few at once can hit it.
OUT_OF_MEMORY = ("out of memory (the server's memory limit); ask for less (a smaller limit, a path_prefix) "
                 "or try again")


def _what_broke(crash: Exception) -> str:
    """One line for the client on what the SDK's crash wrapper holds: an MdftsError's message (a
    broken index; written for the user), else the type and message, its traceback logged here."""
    err = crash.__cause__ or crash
    if isinstance(err, MemoryError):  # (expected under the cap: a line in the log, no traceback)
        log.warning("%s: out of memory", crash)
        return OUT_OF_MEMORY
    text = " ".join(str(err).splitlines())
    if not isinstance(err, MdftsError):
        log.error("%s", crash, exc_info=err)
        text = f"{type(err).__name__}: {text}" if text else type(err).__name__
    return _brief(text)


def _wrong_arguments(err: ValidationError) -> str:
    """pydantic's errors in one line, each its argument and what was wrong; the values sent are
    not repeated."""
    return _brief("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors()))


class _SaysWhy(MCPServer):
    """The SDK answers a crash in a tool or resource with its name alone ("Error executing tool
    search"): add what went wrong, one line, with no traceback. It also runs every call at once
    (a task each, then a thread each, up to anyio's 40): here `caps.workers` run at a time, in
    the order they came, and one that cannot start within the time limit is told to try again."""

    caps: Caps
    slots: anyio.Semaphore

    @contextlib.asynccontextmanager
    async def _slot(self, busy: Exception) -> AsyncIterator[None]:
        acquired = False
        with anyio.move_on_after(self.caps.time_limit_ms / 1000):
            await self.slots.acquire()  # (cancelled, it takes no slot)
            acquired = True
        if not acquired:
            raise busy
        try:
            yield
        finally:
            self.slots.release()

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> CallToolResult | InputRequiredResult:
        async with self._slot(ToolError(f"Error executing tool {name}: {_busy(self.caps)}")):
            try:
                return await super().call_tool(name, arguments, context)
            except UnexpectedToolError as crash:
                raise ToolError(f"{crash}: {_what_broke(crash)}") from crash
            except ToolError as err:
                if isinstance(err.__cause__, ValidationError):  # pydantic's: a line per error, a link
                    raise ToolError(f"Error executing tool {name}: {_wrong_arguments(err.__cause__)}") \
                        from err.__cause__
                raise

    async def read_resource(self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
                            ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        async with self._slot(ResourceError(f"Error reading resource {uri}: {_busy(self.caps)}")):
            try:
                return await super().read_resource(uri, context)
            except UnexpectedResourceError as crash:
                raise ResourceError(f"{crash}: {_what_broke(crash)}") from crash


class _UnknownArguments:
    """The SDK drops argument names a tool does not declare; answer them with the valid names."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call" and ctx.params:
            name = ctx.params.get("name")
            args = ctx.params.get("arguments") or {}
            tool = self.server._tool_manager.get_tool(str(name)) if name else None
            if tool is not None and isinstance(args, dict):
                valid = list(tool.parameters.get("properties", {}))
                unknown = sorted(set(args) - set(valid))
                if unknown:
                    return CallToolResult(is_error=True, content=[TextContent(type="text", text=(
                        f"Error: {name} takes no argument {', '.join(map(repr, unknown))}; "
                        f"valid arguments: {', '.join(valid)}"))])
        return await call_next(ctx)


def build_server(paths: Sequence[Path], caps: Caps | None = None) -> MCPServer:
    """An MCPServer over the indexes at `paths` (each named by its file stem); opened read-only."""
    caps = caps or Caps()
    if caps.workers < 1 or caps.time_limit_ms < 1:
        raise MdftsError(f"workers and time_limit_ms must be 1 or more, not {caps.workers}, {caps.time_limit_ms}")
    names = _names(list(paths))
    opened: list[Index] = []
    pools: dict[str, queue.Queue[Index]] = {}
    try:
        for name, path in names.items():
            pools[name] = queue.Queue()
            for _ in range(caps.workers):
                opened.append(open_index(path))
                pools[name].put(opened[-1])
    except MdftsError:
        for ix in opened:
            ix.close()
        raise
    from mdfts import __version__

    indexes = {name: pool.queue[0] for name, pool in pools.items()}  # (for what does not change)
    srv = _SaysWhy("mdfts", instructions=instructions(indexes), version=__version__)
    srv.caps, srv.slots = caps, anyio.Semaphore(caps.workers)
    srv.middleware.append(_UnknownArguments(srv))
    _OPEN[id(srv)] = opened
    s = _Server(pools, caps)
    index_names = list(indexes)
    IndexName = Annotated[str | None, Field(description="One index: " + ", ".join(index_names)
                                            + ". Omitted: all, merged by rank.")]
    Limit = Annotated[int, Field(description=f"Results to return (server maximum {caps.max_results})")]
    Budget = Annotated[int, Field(description=f"Budget for the whole block (at most {caps.max_tokens})")]
    PathPrefix = Annotated[str | None, Field(description="Only documents under this path, e.g. runbooks/")]
    # Defaults within the caps: an agent that sends none asked for nothing, so nothing is "clamped".
    default_limit, default_budget = min(8, caps.max_results), min(4000, caps.max_tokens)

    @srv.tool(annotations=READ_ONLY)
    def search(
        query: Annotated[str, Field(description="Any text: words, ENV_VARS, --flags, error codes")],
        limit: Limit = default_limit,
        path_prefix: PathPrefix = None,
        index: IndexName = None,
    ) -> CallToolResult:
        """Find the sections that best match a query, best first. Then fetch a ref to read one."""
        clamped: dict[str, Any] = {}
        limit = s.clamp("limit", limit, caps.max_results, clamped)
        many = len(indexes) > 1
        with s.reading(index) as chosen:
            lists = {n: ix.search(query, limit=limit, path_prefix=path_prefix) for n, ix in chosen.items()}
            nowhere = (not any(lists.values()) and bool(path_prefix)
                       and not any(has_documents_under(ix, path_prefix or "") for ix in chosen.values()))
        hits = rrf_merge(lists, limit) if len(lists) > 1 else [h.with_(index=n) for n, hs in lists.items() for h in hs]
        hits = [_named(h) for h in hits]
        data: dict[str, Any] = {"query": _brief(query, QUERY_ECHO), "hits": [_hit_json(h, many) for h in hits]}
        if clamped:
            data["clamped"] = clamped
        text = "\n".join(_hit_line(h, many) for h in hits) or no_hits(query, ECHO)
        if nowhere:
            text = f"no document's path starts with {_brief(path_prefix or '')!r}; the outline resource lists the paths"
        return _result(text + _clamp_note(clamped), data)

    fetch_defaults: dict[str, Any] = {"include": "section", "max_tokens": None, "line_numbers": True}

    @srv.tool(annotations=READ_ONLY)
    def fetch(
        ref: Annotated[str, Field(description="A result's ref: path#anchor, path:line, id, or a path for its outline")],
        include: Annotated[Literal["section", "parent", "neighbors"],
                           Field(description="section; with parent; or with parent, previous and next")] = "section",
        max_tokens: Annotated[int | None, Field(description=f"Size limit (server maximum {caps.max_tokens})")] = None,
        line_numbers: bool = True,
        index: IndexName = None,
        from_line: Annotated[int | None, Field(description="Start at this line of the file: a cut "
                                                           "result's next_line")] = None,
    ) -> CallToolResult:
        """Read a section (line-numbered markdown) by the ref a search, token or outline result gave."""
        clamped: dict[str, Any] = {}
        asked = caps.max_tokens if max_tokens is None else max_tokens
        budget = s.clamp("max_tokens", asked, caps.max_tokens, clamped, MIN_TOKENS)
        with s.reading(index) as chosen:
            name, ix = s.one(chosen, ref)
            shown = _show(ix, ref)
            # What the section's include directives name (its body may be only `{!errors.md!}`):
            # the files the site shows in its place, and the calls that read them.
            includes = [] if isinstance(shown, Outline) else [
                {"ref": p, **({"index": name} if len(indexes) > 1 else {})} for p in included_files(ix, shown.id)]
            # The call that goes on where this one stops: the same one, from a later line.
            again: dict[str, Any] = {"ref": _ref(shown.ref, shown.id) if isinstance(shown, Hit) else shown.path}
            again.update({k: v for k, v in (("include", include), ("max_tokens", max_tokens),
                                             ("line_numbers", line_numbers)) if v != fetch_defaults[k]})
            if len(indexes) > 1:
                again["index"] = name
            if isinstance(shown, Outline):
                return _outline_result(name, shown, budget, clamped, from_line, again)
            hits = [shown]
            if include != "section":
                wanted = ("parent",) if include == "parent" else ("parent", "previous", "next")
                picked = {shown.id: shown}
                for relation, h in relative_hits(ix, shown.id):  # a first subsection's parent is its previous too
                    if relation in wanted:
                        picked.setdefault(h.id, h.with_(relation=relation))
                hits = sorted(picked.values(), key=lambda h: h.start_line)  # (sections share no line)
        shown_ref = _ref(shown.ref, shown.id)

        def head(h: Hit, start: int | None) -> str:
            rel = "" if h.id == shown.id else f" ({h.relation} of {shown_ref})"
            return f"## [{h.id}] {h.lines} {h.title}{rel}" + (f" (from line {start})" if start else "")
        try:
            read = read_within([_named(h) for h in hits], budget, head, from_line=from_line,
                               line_numbers=line_numbers, ref=_brief(ref))
        except MdftsError as err:
            raise ToolError(str(err)) from None
        sections: list[dict[str, Any]] = []
        for p in read.parts:
            rel = "self" if p.hit.id == shown.id else p.hit.relation
            section = {**p.hit.with_(index=name).to_dict(), "title": p.hit.title, "relation": rel, "body": p.body}
            if p.from_line:
                section["from_line"] = p.from_line
            sections.append(section)
        data: dict[str, Any] = {"ref": _brief(ref), "index": name, "sections": sections, "truncated": read.truncated}
        if read.truncated:
            data["next_line"] = read.next_line
        if read.next_from is not None:
            data["next"] = {**again, "from_line": read.next_from}
        if read.cut:
            data["cut_line"] = dict(zip(("line", "shown", "chars"), read.cut, strict=True))
        if clamped:
            data["clamped"] = clamped
        text = "\n\n".join("\n".join([p.head, *p.lines]) for p in read.parts)
        if read.truncated:
            text += "\n" + read.note(budget, call_text("fetch", data.get("next", {})))
        if includes:
            data["includes"] = includes
            text += "\n[includes " + ", ".join(call_text("fetch", c) for c in includes) + "]"
        return _result(text + _clamp_note(clamped), data)

    @srv.tool(annotations=READ_ONLY)
    def token(
        token: Annotated[str, Field(description="An exact token: PAYMENTS_DB_URL, --force-with-lease, E1027")],
        kind: Annotated[str | None, Field(description="Only this kind: env_var, cli_flag, error_code, ...")] = None,
        index: IndexName = None,
    ) -> CallToolResult:
        """The sections holding an exact token (case-exact first): where a setting or code is defined."""
        limit = caps.max_results
        many = len(indexes) > 1
        with s.reading(index) as chosen:
            try:
                hits = [h.with_(index=n) for n, ix in chosen.items() for h in ix.token(token, kind=kind, limit=limit)]
            except MdftsError as err:  # an unknown kind: the error names the kinds
                raise ToolError(_brief(str(err))) from None
        hits = sorted(hits, key=lambda h: not h.exact)[:limit]  # case-exact first across indexes too
        hits = [_named(h) for h in hits]
        data = {"token": _brief(token, QUERY_ECHO), "hits": [_hit_json(h, many) for h in hits]}
        lines = [f"[{(h.index or '') + ':' if many else ''}{h.id}] {h.lines} {h.title} — {h.token} ({h.kind}"
                 + (", exact" if h.exact else "") + ")" for h in hits]
        return _result("\n".join(lines) or f"no section holds the token {_brief(token)!r}", data)

    @srv.tool(annotations=READ_ONLY)
    def context(
        question: str,
        max_tokens: Budget = default_budget,
        path_prefix: PathPrefix = None,
        index: IndexName = None,
    ) -> CallToolResult:
        """Prompt-ready sections for a question, best first, within max_tokens; cite its <source> lines."""
        clamped: dict[str, Any] = {}
        budget = s.clamp("max_tokens", max_tokens, caps.max_tokens, clamped, MIN_TOKENS)
        with s.reading(index) as chosen:
            name, ix = next(iter(chosen.items()))
            if len(chosen) > 1:  # the best index for this question: the one its top fused hit is from
                merged = rrf_merge({n: i.search(question, limit=5, path_prefix=path_prefix)
                                    for n, i in chosen.items()}, 1)
                if merged and merged[0].index:
                    name, ix = merged[0].index, chosen[merged[0].index]
            def read_on(h: Hit, line: int) -> str:  # a cut match's note: the fetch that reads it on
                return call_text("fetch", {"ref": _ref(h.ref, h.id), "from_line": line,
                                           **({"index": name} if len(indexes) > 1 else {})})
            try:
                ctx = ix.context(question, max_tokens=budget, format="xml", path_prefix=path_prefix,
                                 read_on=read_on)
            except MdftsError as err:
                raise ToolError(_brief(str(err))) from None
        data: dict[str, Any] = {
            "index": name, "budget": ctx.budget, "used": ctx.used, "tokenizer": ctx.tokenizer,
            "sources": [{"n": n, "ref": _ref(b.hit.ref, b.hit.id),
                         "source": f"{b.hit.path}:{b.hit.start_line}-{b.end_line}", "url": b.hit.url,
                         "title": _named(b.hit).title, "role": b.role}
                        for n, b in enumerate(ctx.blocks, 1)],
            "omitted": [_name(r) for r in ctx.omitted],
        }
        if clamped:
            data["clamped"] = clamped
        return _result(ctx.text + _clamp_note(clamped), data)

    @srv.tool(annotations=READ_ONLY)
    def outline(
        path: Annotated[str | None, Field(description="A document (its headings) or folder/; omitted: all")] = None,
        index: IndexName = None,
    ) -> CallToolResult:
        """List documents, or one document's headings with refs, lines and sizes, to plan a fetch."""
        with s.reading(index) as chosen:
            if path and not path.endswith("/"):  # "" as none, as Index.outline reads it
                name, ix = s.one(chosen, path)
                shown = _show(ix, path)
                if isinstance(shown, Hit):  # a section's ref: the outline of its document
                    shown = _show(ix, shown.path)
                assert isinstance(shown, Outline)
                return _outline_result(name, shown, caps.max_tokens,
                                       again={"ref": shown.path, **({"index": name} if len(indexes) > 1 else {})})
            docs = [(n, d) for n, ix in chosen.items() for d in ix.outline(None)
                    if not path or d.path.startswith(path)]
        many = len(chosen) > 1
        lines = lines_within(caps.max_tokens, [f"{n + ':' if many else ''}{d.path} — {_name(d.title)} "
                                          f"({count_noun(d.sections, 'section')}, {count_noun(d.lines, 'line')})"
                                          for n, d in docs])
        data = {"documents": [{**d.to_dict(), "title": _name(d.title), **({"index": n} if many else {})}
                              for n, d in docs[:len(lines)]], "truncated": len(lines) < len(docs)}
        if len(lines) < len(docs):
            lines.append(f"[… {len(docs) - len(lines):,} more documents; give a folder/ path for fewer]")
        return _result("\n".join(lines) or "no documents", data)

    for name in indexes:
        _add_manifest(srv, s, name)

    def reading(index: str) -> contextlib.AbstractContextManager[dict[str, Index]]:
        return s.reading(index, ResourceError, ResourceNotFoundError)

    @srv.resource("mdfts://{index}/section/{id}", mime_type="text/markdown")
    def section_resource(index: str, id: str) -> str:
        """One section's markdown by id."""
        with reading(index) as chosen:
            if not (id.isascii() and id.isdecimal()):  # as parse_ref reads an id: "١٢" is none
                raise ResourceNotFoundError(f"not a section id: {id!r}")
            shown = _show(chosen[index], id, ResourceNotFoundError)
        assert isinstance(shown, Hit)  # an id names a section
        return shown.body

    @srv.resource("mdfts://{index}/doc/{+path}", mime_type="text/markdown")
    def doc_resource(index: str, path: str) -> str:
        """A whole document's markdown, section by section."""
        with reading(index) as chosen:
            ix = chosen[index]
            shown = _show(ix, path, ResourceNotFoundError)
            if not isinstance(shown, Outline):
                raise ResourceNotFoundError(f"{path}: not a document path")
            parts = []
            for e in shown.entries:
                hit = ix.show(str(e.id))
                if isinstance(hit, Hit):
                    parts.append(hit.body.rstrip("\n"))
        return "\n\n".join(parts) + "\n"

    return srv


def _add_manifest(srv: MCPServer, s: _Server, name: str) -> None:
    @srv.resource(f"mdfts://{name}/manifest", name=f"{name} manifest", mime_type="application/json")
    def manifest() -> str:
        """Schema, artifact version, commit, built_at and counts of the index."""
        with s.reading(name, ResourceError) as chosen:
            info = chosen[name].info()
        m = info["meta"]
        return json.dumps({
            "index": name, "schema_version": info["schema_version"],
            "artifact_version": m.get("artifact_version"), "commit": m.get("git_commit"),
            "built_at": m.get("built_at"), "source": m.get("source"), "mdfts_version": m.get("mdfts_version"),
            "documents": int(m.get("documents", 0)), "sections": int(m.get("sections", 0)),
            "tokens": int(m.get("tokens", 0)), "source_url": m.get("source_url"),
        }, ensure_ascii=False)


def _outline_result(name: str, shown: Outline, budget: int, clamped: dict[str, Any] | None = None,
                    from_line: int | None = None, again: dict[str, Any] | None = None) -> CallToolResult:
    """A document's headings (from `from_line` on, when given), as many as fit `budget` tokens (a
    file may have 50,000), each named as a result names a section; when more are left, the fetch
    call (`again`, from a later line) that lists them."""
    got = headings_within(shown.entries, budget, f"{shown.path} — {_name(shown.title)}",
                          lambda e: f"{'  ' * max(e.level - 1, 0)}{_ref(e.ref, e.id)}  lines {e.start_line}-"
                                    f"{e.end_line}  ~{e.tokens} tokens", from_line)
    lines = got.lines
    data: dict[str, Any] = {"index": name, "path": shown.path, "title": _name(shown.title), "headings": [
        {**e.to_dict(), "ref": _ref(e.ref, e.id), "heading": _name(e.heading), "anchor": _name(e.anchor)}
        for e in got.kept], "truncated": bool(got.left)}
    if clamped:
        data["clamped"] = clamped
    if got.left:
        data["next"] = {**(again or {"ref": shown.path}), "from_line": got.next_from}
        lines.append(got.note(shown.path, "fetch", call_text("fetch", data["next"])))
    return _result("\n".join(lines) + _clamp_note(clamped or {}), data)


_OPEN: dict[int, list[Index]] = {}  # server → the connections it opened, for close_server


def close_server(srv: MCPServer) -> None:
    """Close the indexes a server opened."""
    for ix in _OPEN.pop(id(srv), []):
        ix.close()


def serve(paths: Sequence[Path], caps: Caps, http: bool = False, port: int = 8765) -> None:
    """Run the server: stdio, or streamable HTTP on 127.0.0.1 only (stateless, JSON responses)."""
    srv = build_server(paths, caps)
    try:
        if http:
            srv.run("streamable-http", host="127.0.0.1", port=port, stateless_http=True, json_response=True)
        else:
            srv.run()
    finally:
        close_server(srv)
