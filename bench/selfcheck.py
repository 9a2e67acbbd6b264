"""Derive labelled queries from a corpus's own structure, as a smoke test of generalisation.

    python -m bench selfcheck CORPUS --out queries.jsonl

Writes dev-set JSON lines (the format /work/shared/eval/run_eval.py reads) for a docs folder that
has no hand-written queries. Each query is cut from the page it points to, reworded a little:

- `summary` / `summary+name`: a one-section page's (a CLI reference page's) one-line
  description, first sentence, inline markup gone ("> Archiving utility." → "archiving utility"),
  alone or after the page's name (its heading); gold = the page's section.
- `example` / `example+name`: a list item of such a page that introduces what follows (ends with
  a colon, "- [c]reate an archive:" → "create an archive"), with bracketed letters unwrapped,
  alone or after the page's name; gold = the page's section.
- `alert`: "<AlertName> <heading>" for runbook sections (bench/alert_queries.py's queries).
- `title+heading`: a multi-section page's title and a sub-heading that several pages share
  ("Widget" + "Configuration"); gold = that section.

A query without the page's name is kept only when no other page holds the same words.

Such queries are built from the gold's own words, so they are biased toward lexical matching
(a real person's question shares fewer words with the answer): read the figures as a smoke test
that the ranking does not break on a corpus's shape, never as a quality figure.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import click

from bench.alert_queries import HEADINGS, alert_query
from mdfts.discover import discover, read_source
from mdfts.sections import Document, Section, split_sections

KINDS = ("summary", "summary+name", "example", "example+name", "alert", "title+heading")

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")  # [text](url) → text
_BRACKETED = re.compile(r"\[([^\]]*)\]")  # [c]reate → create (tldr marks option letters so)
_MARKUP = re.compile(r"[`*_<>]|\{\{|\}\}")
_ITEM = re.compile(r"^\s*[-*+]\s+(.+?):\s*$")
_WORDS = re.compile(r"[^\W_]+")


class Gold(TypedDict):
    path: str
    line: int
    heading: str


class Query(TypedDict):
    id: str
    q: str
    gold: list[Gold]
    kind: str


@dataclass(frozen=True, slots=True)
class _Candidate:
    kind: str
    q: str
    section: Section
    unique: bool  # the query's words must point at one page: checked across the corpus


def _clean(text: str) -> str:
    text = _LINK.sub(r"\1", text)
    text = _BRACKETED.sub(r"\1", text)
    text = _MARKUP.sub("", text)
    return " ".join(text.split()).strip(" .:;,")


def _key(text: str) -> str:
    return " ".join(_WORDS.findall(text.lower()))


def _summary(section: Section) -> str:
    """The first sentence of the section's first paragraph, blockquote markers removed."""
    para: list[str] = []
    for line in section.body.splitlines()[1:]:
        line = line.strip().lstrip(">").strip()
        if not line:
            if para:
                break
            continue
        if line.startswith(("-", "*", "+", "`", "|", "#")):
            break
        para.append(line)
    if not para or para[-1].endswith(":"):  # a lead-in to a list says nothing on its own
        return ""
    text = _clean(" ".join(para))
    return re.split(r"(?<=[a-z0-9)])\. ", text, maxsplit=1)[0].rstrip(".") if text else ""


def _page_candidates(doc: Document) -> Iterator[_Candidate]:
    headed = [s for s in doc.sections if s.level > 0]
    if len(headed) == 1:  # a one-section page: describe it by its lead and its list items
        page = headed[0]
        name = _clean(page.heading)
        summary = _summary(page)
        if len(_key(summary).split()) >= 2:
            yield _Candidate("summary", summary.lower(), page, True)
            yield _Candidate("summary+name", f"{name} {summary.lower()}", page, False)
        items = [_clean(m.group(1)) for m in map(_ITEM.match, page.body.splitlines()) if m]
        items = [i for i in items if len(_key(i).split()) >= 3]
        if items:  # one item a page, picked by the page's path, so the sample is spread and stable
            item = items[sum(map(ord, doc.path)) % len(items)].lower()
            yield _Candidate("example", item, page, True)
            yield _Candidate("example+name", f"{name} {item}", page, False)
        return
    title = next((s.heading for s in headed if s.level == 1), "")
    for s in headed:
        if s.heading.lower() in HEADINGS:
            yield _Candidate("alert", alert_query(doc.path, s.heading), s, False)
        elif s.level >= 2 and title and _key(s.heading) and _key(s.heading) != _key(title):
            yield _Candidate("title+heading", f"{_clean(title)} {_clean(s.heading)}", s, False)


def derive_queries(corpus: Path, limit: int = 200, prefix: str = "") -> list[Query]:
    """Labelled queries for the markdown under `corpus`: at most `limit` a kind, spread evenly
    over the corpus in path order."""
    docs = [split_sections(src.path, src.text) for src in map(read_source, discover([corpus]))]
    candidates = [c for doc in docs for c in _page_candidates(doc)]
    pages_of: dict[str, set[str]] = defaultdict(set)  # query words → pages that yield them
    for c in candidates:
        pages_of[_key(c.q)].add(c.section.path)
    headings_in: dict[str, set[str]] = defaultdict(set)  # sub-heading → pages that have it
    for doc in docs:
        for s in doc.sections:
            headings_in[_key(s.heading)].add(doc.path)
    by_query: dict[tuple[str, str], list[Section]] = defaultdict(list)
    for c in candidates:
        if c.unique and len(pages_of[_key(c.q)]) > 1:
            continue
        if c.kind == "title+heading" and len(headings_in[_key(c.section.heading)]) < 2:
            continue  # a heading only one page has is a `heading` query, not this kind
        by_query[(c.kind, c.q)].append(c.section)
    out: list[Query] = []
    for kind in KINDS:
        rows = [(q, sections) for (k, q), sections in by_query.items() if k == kind]
        step = max(1, -(-len(rows) // limit))
        for i, (q, sections) in enumerate(rows[::step][:limit]):
            gold = [Gold(path=s.path, line=s.start_line, heading=s.heading) for s in sections]
            out.append(Query(id=f"{prefix}{kind}-{i:04d}", q=q, gold=gold, kind=kind))
    return out


@click.command()
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the JSON lines here (default: stdout).")
@click.option("--limit", type=click.IntRange(1), default=200, show_default=True, help="Queries a kind at most.")
def main(corpus: Path, out: Path | None, limit: int) -> None:
    """Write queries derived from CORPUS's own pages (a lexical smoke test, not a quality figure).

    \b
    python -m bench selfcheck ../shared/corpora/tldr-common --out tldr.jsonl
    """
    queries = derive_queries(corpus, limit, prefix=f"{corpus.resolve().name}-")
    if not queries:
        raise click.ClickException(f"{corpus}: no page yields a query")
    text = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries)
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text, encoding="utf-8")
    counts = {k: sum(q["kind"] == k for q in queries) for k in KINDS}
    click.echo(f"selfcheck: {len(queries)} queries (" + ", ".join(f"{k} {n}" for k, n in counts.items() if n)
               + ")", err=True)
