"""The `llm` plugin (entry point `mdfts`, extra `mdfts[llm]`): fragments, a toolbox and a template.

  llm -f 'mdfts:docs.db?q=roll back payments&k=5' "How do I roll back?"
  llm -f 'mdfts:docs.db@runbooks/payments.md#rollback-procedure' "Summarise"
  llm -T 'Mdfts("docs.db")' "Which env var sets the payments DB?"
  llm -t mdfts:docs.db "Which env var sets the payments DB?"
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable
from typing import Any

import llm

from mdfts.errors import MdftsError, brief
from mdfts.index import Index, open_index
from mdfts.lookup import included_files, why_no_hits
from mdfts.reading import MIN_TOKENS, NAME, call_text, headings_within, read_within
from mdfts.records import Hit, Outline

SYSTEM = (
    "Answer from the documentation in the index {db}. Use Mdfts_search first, then Mdfts_fetch a "
    "result's ref to read the section (a long one comes in parts: make the call its last line "
    "names for the next); Mdfts_token finds an exact ENV_VAR, --flag or error "
    "code. Quote exact tokens in backticks and cite path:lines for each claim. If the sections do "
    "not answer the question, say so."
)


def _fragment(hit: Hit) -> llm.Fragment:
    text = hit.title + "\n\n" + hit.body.rstrip("\n") + "\n"
    return llm.Fragment(text, hit.url or hit.lines)


FRAGMENT_PARAMS = ("q", "k", "token", "prefix")


def _split(argument: str) -> tuple[str, str, dict[str, str]]:
    """`docs.db?q=..&k=5` → (db, "", params); `docs.db@path#anchor` → (db, ref, {})."""
    if "?" in argument:
        db, _, query = argument.partition("?")
        params = {k: v[-1] for k, v in urllib.parse.parse_qs(query, keep_blank_values=True).items()}
        return db, "", params
    if "@" in argument:
        db, _, ref = argument.partition("@")
        return db, ref, {}
    return argument, "", {}


def mdfts_fragments(argument: str) -> list[llm.Fragment]:
    """Sections of an mdfts index: mdfts:DB?q=QUESTION&k=5 (the best k), mdfts:DB?token=E1027,
    or mdfts:DB@PATH#ANCHOR (one section; also @PATH:LINE or @ID)."""
    db, ref, params = _split(argument)
    try:
        with open_index(db) as ix:
            if ref:
                shown = ix.show(ref)
                if isinstance(shown, Outline):
                    raise MdftsError(f"{ref}: a document, not a section; give PATH#ANCHOR (anchors: "
                                     + ", ".join(e.anchor for e in shown.entries[:8] if e.anchor) + ")")
                return [_fragment(shown)]
            unknown = [name for name in params if name not in FRAGMENT_PARAMS]
            if unknown:  # ignored, `&limit=3` gave five sections and the user never learned why
                raise MdftsError(f"mdfts:{argument}: unknown parameter {unknown[0]!r}; use "
                                 + ", ".join(FRAGMENT_PARAMS))
            given = params.get("k") or "5"
            if not (given.isascii() and given.isdecimal()) or int(given) < 1:  # int() reads "١٢" as 12
                raise MdftsError(f"mdfts:{argument}: k is the number of sections, a whole number from 1")
            k = int(given)
            prefix = params.get("prefix") or None
            if "token" in params:
                if prefix:
                    raise MdftsError(f"mdfts:{argument}: prefix goes with ?q=QUESTION, not ?token=")
                hits = ix.token(params["token"], limit=k)
            elif params.get("q"):
                hits = ix.search(params["q"], limit=k, path_prefix=prefix)
            else:
                raise MdftsError(f"mdfts:{argument}: give ?q=QUESTION, ?token=TOKEN or @PATH#ANCHOR")
            if not hits:
                why = "no section matches" if "token" in params else why_no_hits(ix, params["q"], prefix, 300)
                raise MdftsError(f"mdfts:{argument}: {why}")
            return [_fragment(h) for h in hits]
    except (MdftsError, ValueError) as err:
        # llm reports a loader's ValueError as a clean usage error.
        raise ValueError(str(err)) from None


def mdfts_template(template_path: str) -> llm.Template:
    """A system prompt for answering from an mdfts index, with the Mdfts toolbox enabled: -t mdfts:DB"""
    with open_index(template_path):  # fail now, not at the first tool call
        pass
    return llm.Template(name=f"mdfts:{template_path}", system=SYSTEM.format(db=template_path),
                        tools=[f"Mdfts({json.dumps(template_path)})"])  # llm parses JSON arguments


def _guard(fn: Callable[[Index], str], db: str) -> str:
    try:
        with open_index(db) as ix:
            return fn(ix)
    except MdftsError as err:
        return f"Error: {err}"


def _hit_line(h: Hit) -> str:
    mark = " (no exact match)" if h.exact is False else ""  # as `mdfts search` marks it
    snippet = " ".join(h.snippet.split())
    return f"[{h.id}] {h.ref} ({h.lines}) {h.title}{mark}" + (f" — {snippet}" if snippet else "")


def _hit_lines(hits: list[Hit]) -> str:
    return "\n".join(_hit_line(h) for h in hits)


def _token_lines(hits: list[Hit]) -> str:
    """As the MCP token tool writes them: the token as the section writes it, its kind, and
    whether the case matches too."""
    return "\n".join(f"[{h.id}] {h.ref} ({h.lines}) {h.title} — {h.token} ({h.kind}"
                     + (", exact" if h.exact else "") + ")" for h in hits)


FETCH = "Mdfts_fetch"  # the name llm gives the toolbox's fetch: what a cut read names to go on
_PREFIX_ERROR = "Error: path_prefix is the start of a document's path, e.g. runbooks/; not {!r}"


def _read_on(h: Hit, line: int) -> str:
    """The Mdfts_fetch call that reads a section on from `line`: what a cut read or context names."""
    return call_text(FETCH, {"ref": h.ref if len(h.ref) <= NAME else str(h.id), "from_line": line})


class Mdfts(llm.Toolbox):
    """Search and read an mdfts index of markdown docs."""

    def __init__(self, db: str, max_tokens: int = 4000):
        self.db = db
        self.max_tokens = max(int(max_tokens), MIN_TOKENS)  # as mdfts mcp raises a smaller one

    # Each docstring is its tool's description, sent to the model as written (indentation too).
    def search(self, query: str, limit: int = 5, path_prefix: str = "") -> str:
        """Find the sections that best match a query, best first: one line each with its ref.
path_prefix keeps to the documents under a path, e.g. runbooks/"""
        # llm passes a model's arguments as sent: the number may come as text, or as 0 (which
        # would list nothing and read as "no section matches"); lowered to 1..20, as mdfts mcp does.
        try:
            count = min(max(int(limit), 1), 20)
        except (TypeError, ValueError):
            return f"Error: limit is the number of sections to list, a whole number from 1 to 20; not {limit!r}"
        if not isinstance(path_prefix, str | None):
            return _PREFIX_ERROR.format(path_prefix)
        prefix = path_prefix or None
        return _guard(lambda ix: _hit_lines(ix.search(query, limit=count, path_prefix=prefix))
                      or why_no_hits(ix, query, prefix, 300), self.db)

    def fetch(self, ref: str, from_line: int | None = None) -> str:
        """Read one section by the ref a search gave (path#anchor, path:line or id); a path lists its headings.
A long one comes in parts: its last line names the call that reads on, from_line a line of the file."""
        if ref is None or isinstance(ref, bool) or not isinstance(ref, (str, int)):
            return f"Error: ref is a section's ref as a search gave it (path#anchor, path:line or id); not {ref!r}"
        given: object = from_line  # as the model sent it: the number may come as text
        start: int | None = None
        if given is not None and given != "":
            digits = str(given).strip() if isinstance(given, (int, str)) and not isinstance(given, bool) else ""
            if not (digits.isascii() and digits.isdecimal()):  # int() reads "١٢" as 12
                return f"Error: from_line is a line of the file to start at, a whole number; not {given!r}"
            start = int(digits)
        budget = self.max_tokens

        def run(ix: Index) -> str:
            shown = ix.show(str(ref))  # a model may send an id as the number a search line shows
            if isinstance(shown, Outline):
                got = headings_within(shown.entries, budget, f"{shown.path} — {brief(shown.title, NAME)}",
                                      lambda e: f"{e.ref} lines {e.start_line}-{e.end_line}", start)
                call = call_text(FETCH, {"ref": shown.path, "from_line": got.next_from})
                return "\n".join([*got.lines, *([got.note(shown.path, FETCH, call)] if got.left else [])])

            def head(h: Hit, first: int | None) -> str:  # a blank line after it, as a whole section had
                return f"{h.lines} {brief(h.title, NAME)}" + (f" (from line {first})" if first else "") + "\n"
            read = read_within([shown], budget, head, from_line=start, line_numbers=False,
                               ref=brief(str(ref), 300))
            [part] = read.parts
            note = read.note(budget, "" if read.next_from is None else _read_on(shown, read.next_from))
            # (what the section's include directives name: the files the site shows in its place)
            files = included_files(ix, shown.id)
            includes = "[includes " + ", ".join(call_text(FETCH, {"ref": p}) for p in files) + "]"
            return "\n".join([part.head, *part.lines, *([note] if read.truncated else []),
                              *([includes] if files else [])])
        return _guard(run, self.db)

    def token(self, token: str) -> str:
        """The sections holding an exact token (ENV_VAR, --flag, error code), case-exact first."""
        return _guard(lambda ix: _token_lines(ix.token(token, limit=20)) or f"no section holds {token!r}", self.db)

    def context(self, question: str, path_prefix: str = "") -> str:
        """Prompt-ready sections for a question, within the toolbox's token budget.
path_prefix keeps to the documents under a path, e.g. runbooks/"""
        if not isinstance(path_prefix, str | None):
            return _PREFIX_ERROR.format(path_prefix)
        return _guard(lambda ix: ix.context(question, max_tokens=self.max_tokens, format="xml", read_on=_read_on,
                                            path_prefix=path_prefix or None).text, self.db)


@llm.hookimpl
def register_fragment_loaders(register: Callable[[str, Any], None]) -> None:
    register("mdfts", mdfts_fragments)


@llm.hookimpl
def register_template_loaders(register: Callable[[str, Any], None]) -> None:
    register("mdfts", mdfts_template)


@llm.hookimpl
def register_tools(register: Callable[[Any], None]) -> None:
    register(Mdfts)
