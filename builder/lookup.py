"""The lookups over an index's stored queries: search, show, token, outline, context, as Hit records.

Each takes an open `Index`, or a path it opens and closes again.
"""

from __future__ import annotations

import json
from pathlib import Path

from mdfts.artifact import KIND_COLUMNS, KINDS, source_link
from mdfts.errors import MdftsError, QueryError, brief
from mdfts.index import Index, open_index
from mdfts.records import (
    DocumentEntry,
    Hit,
    Outline,
    OutlineEntry,
    SectionLink,
    SectionPage,
    TokenEntry,
    hit_from_row,
    make_ref,
)
from mdfts.refs import Ref, RefError, anchor_miss, hash_readings, parse_ref, path_miss, pick_anchor, pick_line

# mdfts.prompt (and the xml and urllib modules it pulls in, ~15-40 ms) only for context():
# a one-shot `mdfts search` must not pay for it. Nor for typing (~2 ms): mypy reads TYPE_CHECKING
# as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from types import TracebackType
    from typing import Any

    from mdfts.prompt import Context, Format, TokenCounter

IndexLike = Index | Path | str


class _Borrowed:
    """An open Index as a context manager that leaves it open (its owner closes it)."""

    def __init__(self, ix: Index) -> None:
        self.ix = ix

    def __enter__(self) -> Index:
        return self.ix

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None


def _opened(db: IndexLike) -> Index | _Borrowed:
    """`db` itself when it is an open Index; else the index at that path, closed on the way out
    (contextlib is ~0.5 ms to import: a one-shot lookup does without it)."""
    return _Borrowed(db) if isinstance(db, Index) else open_index(db)


def search(db: IndexLike, q: str, limit: int = 10, explain: bool = False,
           path_prefix: str | None = None) -> list[Hit]:
    """The best sections for any text, best first (queries/search.sql, as stored in the index)."""
    with _opened(db) as ix:
        return search_hits(ix, q, limit, explain, path_prefix)


def search_many(db: IndexLike, queries: Iterable[str], limit: int = 10,
                explain: bool = False, path_prefix: str | None = None) -> Iterator[tuple[str, list[Hit]]]:
    """(query, hits) for each query, in order."""
    with _opened(db) as ix:
        for q in queries:
            yield q, search_hits(ix, q, limit, explain, path_prefix)


def has_terms(q: str) -> bool:
    """False when the text has nothing a search could match (only spaces and punctuation)."""
    return any(ch.isalnum() for ch in q)


def why_no_hits(ix: Index, q: str, path_prefix: str | None = None, most: int | None = None) -> str:
    """Why a search within `path_prefix` found nothing: no document is under it, or no_hits(q, most)."""
    if path_prefix and not has_documents_under(ix, path_prefix):
        why = f"no document's path starts with {path_prefix if most is None else brief(path_prefix, most)!r}"
        bare = path_prefix.lstrip("./")  # "./runbooks/", "/runbooks/": a shell's or a site's way of writing it
        if bare != path_prefix and bare and has_documents_under(ix, bare):
            why += f"; paths are relative to the source folder: {bare!r}"
        return why
    return no_hits(q, most)


def no_hits(q: str, most: int | None = None) -> str:
    """Why a search found nothing, as every surface says it: `no usable search term: '***'` or
    `no section matches: 'x'`.

    :param most: repeat at most this many characters of the query (and its length).
    """
    what = "no usable search term" if not has_terms(q) else "no section matches"
    return f"{what}: {q if most is None else brief(q, most)!r}"


def show(db: IndexLike, ref: str | int) -> Hit | Outline:
    """The section a reference names: an id (`hit.id` or its digits), PATH#ANCHOR (any case)
    or PATH:LINE; for a bare PATH, the document's outline. A miss is a RefError listing the
    nearest anchors."""
    with _opened(db) as ix:
        return show_ref(ix, ref)


def neighbors(db: IndexLike, ref: str | int) -> list[Hit]:
    """A section (relation "self") with its parent, previous, next and children."""
    with _opened(db) as ix:
        return neighbor_hits(ix, ref)


def token(db: IndexLike, tok: str, kind: str | None = None, limit: int = 20) -> list[Hit]:
    """Sections holding an exact token, case-exact ones first (`kind`: only tokens of that kind)."""
    with _opened(db) as ix:
        return token_hits(ix, tok, kind, limit)


def outline(db: IndexLike, path: str | None = None) -> list[OutlineEntry] | list[DocumentEntry]:
    """A document's headings; without `path` (or with a folder prefix ending in /), its documents."""
    with _opened(db) as ix:
        return outline_of(ix, path)


def context(db: IndexLike, question: str, max_tokens: int = 2000, format: Format = "xml",
            limit: int = 5, path_prefix: str | None = None) -> Context:
    """Prompt-ready sections for `question` in at most `max_tokens` tokens, everything printed
    counted (mdfts.prompt); str() of the result is the text to put before the question."""
    with _opened(db) as ix:
        return context_block(ix, question, max_tokens, format, limit, path_prefix=path_prefix)


def run_named(db: IndexLike, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of the stored query `name`."""
    with _opened(db) as ix:
        return ix.run(name, **params)


def run_named_sql(db: IndexLike, name: str) -> str:
    """The SQL of the stored query `name`."""
    with _opened(db) as ix:
        return ix.sql(name)


def list_queries(db: IndexLike) -> list[dict[str, Any]]:
    """name, params and title of each stored query."""
    with _opened(db) as ix:
        return [{"name": q.name, "params": " ".join(":" + p for p in q.params), "title": q.title}
                for q in ix.queries.values()]

# --- The typed read API (issue #12): Hit records, references, outline, context, fusion. ---


def _url(ix: Index, row: dict[str, Any]) -> str | None:
    return source_link(ix.meta, row)


def _whole(value: int, name: str = "limit") -> int:
    """`value` when it is an int; else a QueryError naming it. SQLite refused a float as a LIMIT
    ("datatype mismatch"), a str failed the `< 1` test as a TypeError, and True read as 1."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise QueryError(f"{name} must be an int, not {value!r:.40}")


def search_hits(ix: Index, q: str, limit: int = 10, explain: bool = False,
                path_prefix: str | None = None) -> list[Hit]:
    """Search results as Hit records; `path_prefix` keeps documents under a path (search.sql's
    :prefix: the search runs within them); `explain` is passed to search.sql when the index's
    copy takes it. An older index's search.sql without :prefix has its best 200 filtered here."""
    if _whole(limit) < 1:  # SQLite reads a negative LIMIT as none at all
        return []
    # A NUL separates words like any control character: SQLite's string functions stop at one,
    # so search.sql would read only the text before it ("\0rollback" found nothing).
    params: dict[str, Any] = {"q": q.replace("\0", " ") if isinstance(q, str) else q, "limit": limit}
    takes = ix.query_file("search").params
    if path_prefix:
        if "prefix" in takes:
            params["prefix"] = path_prefix
        else:
            params["limit"] = min(max(limit * 4, 50), 200)
    if explain and "explain" in takes:
        params["explain"] = 1
    out: list[Hit] = []
    for row in ix.run("search", **params):
        if path_prefix and not row["path"].startswith(path_prefix):
            continue
        why: dict[str, Any] | None = None
        if explain:
            raw = row.get("explain")
            why = json.loads(raw) if isinstance(raw, str) else raw if isinstance(raw, dict) else {
                "score": row["score"], "available": False,
                "note": "this index's search.sql gives no breakdown; only the total score"}
        # exact: False when the query names an identifier and this hit holds none of them as
        # written (search.sql's `exact` column), so an absent name never passes for a hit.
        exact = None if row.get("exact") is None else bool(row["exact"])
        out.append(hit_from_row(row, _url(ix, row), score=row["score"], snippet=row["snippet"] or "",
                                rank=len(out) + 1, explain=why, exact=exact))
        if len(out) >= limit:
            break
    return out


def _outline_rows(ix: Index, path: str) -> list[dict[str, Any]]:
    return ix.run("outline", path=path)


def _document(ix: Index, path: str) -> dict[str, Any] | None:
    rows = [r for r in ix.run("documents", glob=_glob_literal(path), limit=1) if r["path"] == path]
    return rows[0] if rows else None


def has_documents_under(ix: Index, path_prefix: str) -> bool:
    """True when some document's path starts with `path_prefix`. No path holds a NUL (no file
    name can), and SQLite's GLOB would stop reading the pattern at one."""
    if "\0" in path_prefix:
        return False
    return bool(ix.run("documents", glob=_glob_literal(path_prefix) + "*", limit=1))


def _glob_literal(text: str) -> str:
    """A GLOB pattern matching `text` literally."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def _all_paths(ix: Index) -> list[str]:
    return [r["path"] for r in ix.run("documents", limit=1_000_000)]


def _find_document(ix: Index, ref: Ref) -> tuple[str, list[dict[str, Any]]]:
    """(path, outline rows) for a reference's path, matched exactly, else case-insensitively."""
    rows = _outline_rows(ix, ref.path)
    if rows:
        return ref.path, rows
    paths = _all_paths(ix)
    same = [p for p in paths if p.lower() == ref.path.lower()]
    if len(same) == 1:
        return same[0], _outline_rows(ix, same[0])
    raise path_miss(ref, paths)


def _find_reading(ix: Index, ref: Ref) -> tuple[Ref, str, list[dict[str, Any]]]:
    """The reading of `ref` that names a document, with its path and outline rows: a '#' may be
    part of the file name (c#sharp.md#sub); a miss is the first reading's error."""
    try:
        return ref, *_find_document(ix, ref)
    except RefError as err:
        miss = err
    for other in hash_readings(ref):
        try:
            return other, *_find_document(ix, other)
        except RefError:
            continue
    raise miss


# The largest id SQLite can store: a larger number names no section (and cannot be bound).
MAX_ID = 2**63 - 1


def section_by_id(ix: Index, section_id: int) -> Hit | None:
    if not 0 <= section_id <= MAX_ID:
        return None
    rows = ix.run("section", id=section_id)
    return hit_from_row(rows[0], _url(ix, rows[0])) if rows else None


def outline_entries(path: str, rows: list[dict[str, Any]]) -> tuple[OutlineEntry, ...]:
    return tuple(OutlineEntry(
        id=r["id"], ref=make_ref(path, r["anchor"]), path=path, level=r["level"], heading=r["heading"],
        anchor=r["anchor"], start_line=r["start_line"], end_line=r["end_line"], chars=r["chars"],
        tokens=(r["chars"] + 3) // 4) for r in rows)


# A section page's links, headings only, each read bounded: the shipped `neighbors` query
# returns every child's body (50,000 children under one h1 made a 2.5 MB page in 2.7 s).
_UP_SQL = "select id, heading, parent_id from sections where id = ?"
_AROUND_SQL = "select id, heading from sections where id in (?, ?, ?)"
_CHILDREN_SQL = ("select id, heading from sections where document_id = "
                 "(select document_id from sections where id = :id) and parent_id = :id "
                 "order by ordinal limit :limit")
# A section's exact tokens from its own row's kind columns (JSON arrays holding what its
# token_rows hold): token_rows is keyed by token first, so `where section_id = ?` on it scanned
# every token row of the index (a full scan per `show`; at 1M sections, ~10M rows).
_TOKENS_SQL = (
    "select j.value, k.value from sections as s, json_each(?) as k, json_each(case k.value "
    + " ".join(f"when '{kind}' then s.{column}" for kind, column in KIND_COLUMNS.items())
    + " end) as j where s.id = ? group by j.value, k.value order by k.value, j.value limit ?")
_KINDS_JSON = json.dumps(list(KIND_COLUMNS))
MAX_DEPTH = 8  # ancestors: headings nest six deep; the lead text and a margin
MAX_CHILDREN = 200  # children listed; the outline query has them all
MAX_TOKENS = 500


def section_page(ix: Index, section_id: int, max_children: int = MAX_CHILDREN) -> SectionPage | None:
    """A section (the stored `section` query, as a Hit with its url) with its ancestors, parent,
    previous, next and first `max_children` children as links, and its exact tokens; None when
    no section has that id. Every read is bounded, whatever the document holds."""
    max_children = max(_whole(max_children, "max_children"), 0)  # SQLite reads a negative LIMIT as none at all
    if not 0 <= _whole(section_id, "section_id") <= MAX_ID:
        return None
    rows = ix.run("section", id=section_id)
    if not rows:
        return None
    row = rows[0]
    ancestors: list[SectionLink] = []
    up = row["parent_id"]
    while up is not None and len(ancestors) < MAX_DEPTH:
        found = ix.conn.execute(_UP_SQL, (up,)).fetchone()
        if found is None:
            break
        ancestors.insert(0, SectionLink(found[0], found[1]))
        up = found[2]
    around = {r[0]: SectionLink(r[0], r[1]) for r in ix.conn.execute(
        _AROUND_SQL, (row["parent_id"], row["prev_id"], row["next_id"]))}
    children = [SectionLink(r[0], r[1]) for r in ix.conn.execute(
        _CHILDREN_SQL, {"id": section_id, "limit": max_children + 1})]
    tokens = tuple(TokenEntry(r[0], r[1]) for r in ix.conn.execute(_TOKENS_SQL, (_KINDS_JSON, section_id, MAX_TOKENS)))
    return SectionPage(
        section=hit_from_row(row, _url(ix, row)), chars=row["chars"], ancestors=tuple(ancestors),
        parent=around.get(row["parent_id"]), previous=around.get(row["prev_id"]),
        next=around.get(row["next_id"]), children=tuple(children[:max_children]),
        more_children=len(children) > max_children, tokens=tokens)


def show_ref(ix: Index, ref: str | int) -> Hit | Outline:
    """The section a reference names (id, path#anchor with any case, path:line), or for a bare
    path the document's outline; a miss is a RefError listing the nearest anchors or paths."""
    parsed = parse_ref(ref)
    if parsed.kind == "id":
        assert parsed.id is not None
        found = section_by_id(ix, parsed.id)
        if found is None:
            raise RefError(f"no section with id {parsed.id} in this index")
        return found
    parsed, path, rows = _find_reading(ix, parsed)
    if parsed.kind == "path":
        doc = _document(ix, path)
        return Outline(path, doc["title"] if doc else path, outline_entries(path, rows))
    row = pick_line(rows, parsed.line or 1) if parsed.kind == "line" else pick_anchor(rows, parsed.anchor)
    if row is None:
        raise anchor_miss(parsed, rows)
    found = section_by_id(ix, row["id"])
    assert found is not None
    return found


def neighbor_hits(ix: Index, ref: str | int) -> list[Hit]:
    """A section (relation self) with its parent, previous, next and children."""
    shown = show_ref(ix, ref)
    if isinstance(shown, Outline):
        raise RefError(f"{ref}: a document, not a section; give PATH#ANCHOR or PATH:LINE")
    out = []
    for row in ix.run("neighbors", id=shown.id):
        full = shown if row["id"] == shown.id else section_by_id(ix, row["id"])
        if full is not None:
            out.append(full.with_(relation=row["relation"]))
    return out


# A section's parent, previous and next, by id: the shipped `neighbors` query also returns the
# section's own body again and every child's (a 20 MB section, or 50,000 children).
_RELATIVES_SQL = "select parent_id, prev_id, next_id from sections where id = ?"
# The sections of the files a section's include directives name, as neighbors.sql orders them
# (a file at a time, in the order read, each by line), at most INCLUDED of them.
_INCLUDED_SQL = (
    "select s.id from section_includes as i, json_each(i.files) as f "
    "join documents as d on d.path = f.value join sections as s on s.document_id = d.id "
    "where i.section_id = ? order by f.key, s.start_line limit ?"
)
INCLUDED = 50
_INCLUDED_FILES_SQL = (
    "select f.value from section_includes as i, json_each(i.files) as f "
    "join documents as d on d.path = f.value where i.section_id = ? order by f.key"
)


def included_files(ix: Index, section_id: int) -> list[str]:
    """The paths of the files a section's include directives name that the index holds, in the
    order read: what the docs site shows in the section's place."""
    return [r[0] for r in ix.conn.execute(_INCLUDED_FILES_SQL, (section_id,))]


def relative_hits(ix: Index, section_id: int) -> list[tuple[str, Hit]]:
    """(relation, Hit) of a section's parent, previous and next sections, those it has, in that
    order, then (`included`) the sections of the files its include directives name, as the site
    shows them in its place (an include-only section's own body is the directive line); no body
    but theirs is read."""
    row = ix.conn.execute(_RELATIVES_SQL, (section_id,)).fetchone()
    pairs = list(zip(("parent", "previous", "next"), row or (), strict=False))
    pairs += [("included", r[0]) for r in ix.conn.execute(_INCLUDED_SQL, (section_id, INCLUDED))]
    out = []
    for relation, other in pairs:
        found = None if other is None else section_by_id(ix, other)
        if found is not None:
            out.append((relation, found))
    return out


def token_hits(ix: Index, tok: str, kind: str | None = None, limit: int = 20) -> list[Hit]:
    """Sections holding an exact token (case-exact first), as Hit records with token, kind, exact."""
    if kind is not None and kind not in KINDS:  # else a misspelt kind reads as "no section has it"
        raise MdftsError(f"no token kind {kind!r}; kinds: {', '.join(KINDS)}")
    if _whole(limit) < 1:  # SQLite reads a negative LIMIT as none at all
        return []
    # token.sql has no kind filter (a new parameter would break callers that bind every name):
    # read more rows until `limit` of the kind are in, or there are no more.
    fetch = limit if kind is None else max(limit * 5, 100)
    while True:
        rows = ix.run("token", token=tok, limit=fetch)
        picked = [r for r in rows if kind is None or r["kind"] == kind]
        if len(picked) >= limit or len(rows) < fetch:
            break
        fetch *= 4
    out = []
    for row in picked:
        found = section_by_id(ix, row["id"])
        if found is not None:
            out.append(found.with_(token=row["token"], kind=row["kind"], exact=bool(row["exact"])))
        if len(out) >= limit:
            break
    return out


def document_entries(ix: Index, prefix: str | None = None) -> list[DocumentEntry]:
    glob = _glob_literal(prefix) + "*" if prefix else None
    return [DocumentEntry(id=r["id"], path=r["path"], title=r["title"], lines=r["lines"], sections=r["sections"])
            for r in ix.run("documents", glob=glob, limit=1_000_000)]


def context_block(ix: Index, question: str, max_tokens: int = 2000, format: Format = "xml",
                  limit: int = 5, count: TokenCounter | None = None, path_prefix: str | None = None,
                  read_on: Callable[[Hit, int], str] | None = None) -> Context:
    """The budgeted context block for a question (see mdfts.prompt); `path_prefix` keeps its
    matches, and so their relatives, to the documents under a path; `read_on` names the call that
    reads a cut match on from a line."""
    from mdfts.prompt import Provenance, build_context

    _whole(max_tokens, "max_tokens")  # a float was printed as the budget, a str failed a comparison
    matches = search_hits(ix, question, limit=limit, path_prefix=path_prefix)

    def related(hit: Hit) -> list[tuple[str, Hit]]:
        return relative_hits(ix, hit.id)

    return build_context(matches, related, budget=max_tokens, fmt=format, question=question,
                         provenance=Provenance.from_meta(ix.name, ix.meta), count=count, read_on=read_on)


def rrf_merge(lists: dict[str, list[Hit]], limit: int, k: int = 60) -> list[Hit]:
    """Hits of several indexes fused by reciprocal rank (bm25 scores do not compare across files):
    each hit's score becomes sum(1 / (k + rank)) and it names its index."""
    _whole(limit)
    if _whole(k, "k") < 0:  # 1 / (k + rank) divides by zero at k = -rank, and is negative below
        raise QueryError(f"k must be 0 or more, not {k}")
    fused: dict[tuple[str, int], float] = {}
    best: dict[tuple[str, int], tuple[int, Hit]] = {}
    for name, hits in lists.items():
        for rank, h in enumerate(hits, 1):
            key = (name, h.id)
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, h)
    order = sorted(fused, key=lambda key: (-fused[key], best[key][0], key[0], key[1]))
    return [best[key][1].with_(index=key[0], score=round(fused[key], 6), rank=n)
            for n, key in enumerate(order[:max(limit, 0)], 1)]


def outline_of(ix: Index, path: str | None = None) -> list[OutlineEntry] | list[DocumentEntry]:
    if path is None or isinstance(path, str) and (path == "" or path.endswith("/")):
        return document_entries(ix, path or None)
    ref = parse_ref(path)
    if ref.kind == "id":  # a section's id: the outline of its document
        shown = show_ref(ix, path)
        ref = parse_ref(shown.path)
    _, found, rows = _find_reading(ix, ref)
    return list(outline_entries(found, rows))
