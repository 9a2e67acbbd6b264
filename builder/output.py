"""Rows → aligned text or JSON for the terminal; the only module besides cli that writes output."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def to_yaml(data: Any) -> str:
    """YAML with multi-line strings (SQL) as literal blocks, keys in the given order."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def to_json_line(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(", ", ": "))


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, width: int = 60) -> str:
    """An aligned text table; long cells are cut to `width` characters."""
    if not rows:
        return ""
    cols = list(columns or rows[0].keys())

    def cell(v: Any) -> str:
        s = "" if v is None else str(v)
        s = " ".join(s.split())
        return s if len(s) <= width else s[: width - 1] + "…"

    cells = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def key_values(pairs: Iterable[tuple[str, Any]]) -> str:
    items = list(pairs)
    w = max((len(k) for k, _ in items), default=0)
    return "\n".join(f"{k.ljust(w)}  {v}" for k, v in items)


def hits_text(hits: Sequence[Any]) -> str:
    """Search results: rank, the `path:lines` reference `show` accepts, the trail, the score, a snippet."""
    lines = []
    for h in hits:
        where = f"{h.index}:" if h.index else ""
        lines.append(f"{h.rank:>2}. {where}{h.lines}  {' > '.join(h.trail) or '(lead text)'}  [{h.score:.3f}]")
        if h.snippet:
            lines.append("    " + " ".join(h.snippet.split()))
    return "\n".join(lines)


def section_text(hit: Any) -> str:
    """One section: a visible header line with its references, then its markdown."""
    rel = f" ({hit.relation})" if hit.relation else ""
    url = f"  {hit.url}" if hit.url else ""
    return f"[{hit.id}] {hit.ref}  {hit.lines}{rel}{url}\n{hit.body.rstrip()}\n"


def outline_text(outline: Any) -> str:
    """A document's headings, indented by level, each with the reference `show` accepts."""
    lines = [f"{outline.path} — {outline.title}"]
    for e in outline.entries:
        indent = "  " * max(e.level - 1, 0)
        lines.append(f"{indent}{e.ref}  lines {e.start_line}-{e.end_line}  ~{e.tokens} tokens")
    return "\n".join(lines)


def documents_text(docs: Sequence[Any]) -> str:
    return table([d.to_dict() for d in docs], ["path", "title", "sections", "lines"], width=70)


def build_summary(summary: Mapping[str, Any]) -> str:
    """The one-line build summary (stderr), from the same dict `build --json` prints."""
    return (f"{summary['output']}: {summary['documents']} documents, {summary['sections']} sections, "
            f"{summary['tokens']} exact tokens, {summary['bytes']:,} bytes in {summary['seconds']:.2f}s"
            + (f"; {len(summary['skipped'])} skipped" if summary["skipped"] else "")
            + (f"; {summary['reused']} reused from {summary['previous']}" if summary.get("previous") else ""))
