"""The typed records the read API returns: one vocabulary of fields for Python, JSON, MCP and llm."""

from __future__ import annotations

import json

from mdfts.frozen import FrozenRecord, as_tuple

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# Each record is a FrozenRecord (no dataclasses import on the lookup path): its fields are its
# __slots__, and __init__ takes them in that order. to_dict() is the JSON form the CLI's --json
# prints, and from_dict() takes it back (JSON's lists for the tuple fields, which __init__ makes
# tuples again, so a record made from JSON is hashable as the one it came from).


class Hit(FrozenRecord):
    """A section as the read API returns it: from search, show, token, context or fetch.

    `ref` (`path#anchor`) and `id` are both accepted back by `Index.show`; `url` is the link to
    the source lines when the index was built with `--source-url`, else None.
    """

    __slots__ = ("id", "ref", "path", "heading", "trail", "anchor", "level", "start_line", "end_line", "body",
                 "score", "snippet", "url", "rank", "index", "relation", "token", "kind", "exact", "explain")
    _uncompared = frozenset({"explain"})
    id: int
    ref: str                 # path#anchor; `path#` for the lead text before the first heading
    path: str
    heading: str
    trail: tuple[str, ...]   # ancestor headings, then this heading
    anchor: str
    level: int               # 1-6; 0 for the lead text
    start_line: int          # 1-based, inclusive
    end_line: int
    body: str                # the section's markdown, heading line included (HTML comments cut)
    score: float | None      # search only: higher is better
    snippet: str             # search only: the matched words in context
    url: str | None
    rank: int | None         # search only: 1 for the best hit
    index: str | None        # the index's name, when results come from several
    relation: str | None     # show with neighbours: self, parent, previous, next, child, included
    token: str | None        # token lookups: the token as written, its kind, case-exact?
    kind: str | None
    exact: bool | None
    explain: dict[str, Any] | None  # left out of == and hash

    def __init__(self, id: int, ref: str, path: str, heading: str, trail: tuple[str, ...] | list[str], anchor: str,
                 level: int, start_line: int, end_line: int, body: str, score: float | None = None,
                 snippet: str = "", url: str | None = None, rank: int | None = None, index: str | None = None,
                 relation: str | None = None, token: str | None = None, kind: str | None = None,
                 exact: bool | None = None, explain: dict[str, Any] | None = None) -> None:
        self._fill(id, ref, path, heading, as_tuple(trail), anchor, level, start_line, end_line, body, score, snippet,
                   url, rank, index, relation, token, kind, exact, explain)

    @property
    def lines(self) -> str:
        """`path:start-end`, the citation form."""
        return f"{self.path}:{self.start_line}-{self.end_line}"

    @property
    def title(self) -> str:
        """The heading trail as one line (`Payments › Rollback`); the path for lead text."""
        return " › ".join(self.trail) or self.path

    def __getitem__(self, key: str) -> Any:
        """Dict-style access (`hit["path"]`, `hit["content"]`), as for the JSON form: code written
        against the earlier TypedDict hits keeps working."""
        return self.to_dict(content_alias=True)[key]

    def with_(self, **changes: Any) -> Hit:
        """A copy with these fields changed (`hit.with_(index="a")`); an unknown one is a TypeError."""
        return self._replace(changes)

    def to_dict(self, content_alias: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; fields that do not apply (None) are left out, except `url`.

        :param content_alias: also give the body as `content` (search JSON keeps it for batch
            consumers that read that name).
        """
        out: dict[str, Any] = {}
        if self.rank is not None:
            out["rank"] = self.rank
        out.update(
            id=self.id, ref=self.ref, path=self.path, heading=self.heading, trail=list(self.trail),
            anchor=self.anchor, level=self.level, start_line=self.start_line, end_line=self.end_line,
        )
        for name in ("score", "index", "relation", "token", "kind", "exact", "explain"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        # A search hit's snippet, its score NULL or not (search.sql gives none when every term of
        # the query is in about every section).
        if self.score is not None or self.rank is not None or self.snippet:
            out["snippet"] = self.snippet
        out["url"] = self.url
        out["body"] = self.body
        if content_alias:
            out["content"] = self.body
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Hit:
        """The Hit whose to_dict() (or JSON: search --json, MCP, the llm plugin) is `data`; the
        `content` alias is read as the body. A key that names no field is a TypeError."""
        fields = dict(data)
        if "content" in fields:
            content = fields.pop("content")
            if fields.setdefault("body", content) != content:
                raise ValueError("`content` is an alias of `body`, but the two differ")
        return cls(**fields)


class OutlineEntry(FrozenRecord):
    """One heading of a document's outline, with its size (estimated tokens) for planning reads."""

    __slots__ = ("id", "ref", "path", "level", "heading", "anchor", "start_line", "end_line", "chars", "tokens")
    id: int
    ref: str
    path: str
    level: int
    heading: str
    anchor: str
    start_line: int
    end_line: int
    chars: int
    tokens: int

    def __init__(self, id: int, ref: str, path: str, level: int, heading: str, anchor: str, start_line: int,
                 end_line: int, chars: int, tokens: int) -> None:
        self._fill(id, ref, path, level, heading, anchor, start_line, end_line, chars, tokens)


class DocumentEntry(FrozenRecord):
    """One document of an index: what `outline()` lists without a path."""

    __slots__ = ("id", "path", "title", "lines", "sections")
    id: int
    path: str
    title: str
    lines: int
    sections: int

    def __init__(self, id: int, path: str, title: str, lines: int, sections: int) -> None:
        self._fill(id, path, title, lines, sections)


class Outline(FrozenRecord):
    """A document's headings: what `show(path)` and `outline(path)` give for a bare path."""

    __slots__ = ("path", "title", "entries")
    path: str
    title: str
    entries: tuple[OutlineEntry, ...]

    def __init__(self, path: str, title: str, entries: tuple[OutlineEntry, ...] | list[OutlineEntry]) -> None:
        self._fill(path, title, as_tuple(entries))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form `mdfts show PATH --json` prints: path, title and `headings`."""
        return {"path": self.path, "title": self.title, "headings": [e.to_dict() for e in self.entries]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Outline:
        _only(cls, data, {"path", "title", "headings"})
        return cls(data["path"], data["title"], tuple(OutlineEntry.from_dict(e) for e in data["headings"]))


class SectionLink(FrozenRecord):
    """Another section, as a section page links to it: its id and heading (no body)."""

    __slots__ = ("id", "heading")
    id: int
    heading: str

    def __init__(self, id: int, heading: str) -> None:
        self._fill(id, heading)


class TokenEntry(FrozenRecord):
    """An exact token a section holds, and its kind."""

    __slots__ = ("token", "kind")
    token: str
    kind: str

    def __init__(self, token: str, kind: str) -> None:
        self._fill(token, kind)


class SectionPage(FrozenRecord):
    """A section with what a reader walks the document by: its ancestors (outermost first),
    parent, previous, next and first children, headings only, and its exact tokens."""

    __slots__ = ("section", "chars", "ancestors", "parent", "previous", "next", "children", "more_children",
                 "tokens")
    section: Hit
    chars: int
    ancestors: tuple[SectionLink, ...]
    parent: SectionLink | None
    previous: SectionLink | None
    next: SectionLink | None
    children: tuple[SectionLink, ...]
    more_children: bool      # the section has more children than were listed
    tokens: tuple[TokenEntry, ...]

    def __init__(self, section: Hit, chars: int, ancestors: tuple[SectionLink, ...] | list[SectionLink],
                 parent: SectionLink | None, previous: SectionLink | None, next: SectionLink | None,
                 children: tuple[SectionLink, ...] | list[SectionLink], more_children: bool,
                 tokens: tuple[TokenEntry, ...] | list[TokenEntry]) -> None:
        self._fill(section, chars, as_tuple(ancestors), parent, previous, next, as_tuple(children), more_children,
                   as_tuple(tokens))

    # to_dict(): every field, the section as Hit.to_dict(), links as {id, heading}, tokens as
    # {token, kind} (FrozenRecord's).

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SectionPage:
        _only(cls, data, set(cls.__slots__))

        def link(value: Mapping[str, Any] | None) -> SectionLink | None:
            return None if value is None else SectionLink.from_dict(value)

        return cls(Hit.from_dict(data["section"]), data["chars"],
                   tuple(SectionLink.from_dict(a) for a in data["ancestors"]), link(data["parent"]),
                   link(data["previous"]), link(data["next"]),
                   tuple(SectionLink.from_dict(c) for c in data["children"]), data["more_children"],
                   tuple(TokenEntry.from_dict(t) for t in data["tokens"]))


def _only(cls: type, data: Mapping[str, Any], keys: set[str]) -> None:
    """A TypeError naming the keys of `data` that are not `keys`, as __init__ gives for a field."""
    unknown = sorted(set(data) - keys)
    if unknown:
        raise TypeError(f"{cls.__name__}.from_dict() got unexpected keys: {', '.join(unknown)}")


def make_ref(path: str, anchor: str) -> str:
    return f"{path}#{anchor}"


def trail_of(value: Any) -> tuple[str, ...]:
    """A stored trail (a JSON array, or already a list) as a tuple."""
    if isinstance(value, str):
        return tuple(json.loads(value))
    return tuple(value or ())


def hit_from_row(row: dict[str, Any], url: str | None = None, **extra: Any) -> Hit:
    """A Hit from a row of search.sql, section.sql or neighbors.sql (trail may be missing)."""
    trail = trail_of(row["trail"]) if "trail" in row else (row["heading"],) if row.get("heading") else ()
    return Hit(
        id=row["id"], ref=make_ref(row["path"], row["anchor"]), path=row["path"], heading=row["heading"],
        trail=trail, anchor=row["anchor"], level=row["level"], start_line=row["start_line"],
        end_line=row["end_line"], body=row["body"], url=url, **extra,
    )
