"""Every renderer: rows, hits, info, findings and diffs → text, JSON, markdown or GitHub
annotations. The CLI picks one and prints what it returns; nothing here prints."""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from mdfts.check import Finding
    from mdfts.diff import Diff, DocumentChange, SectionChange, TokenChange


# Terminal control from document content: ESC sequences (CSI `ESC [`, OSC `ESC ]` up to BEL or
# ST, which includes OSC 52, writing the clipboard; DCS, SOS, PM, APC up to ST; other two-character
# escapes), their 8-bit C1 forms, then any other C0/C1 control, DEL and a lone CR (which redraws
# the line). Newlines and tabs stay. A pattern string, not compiled at import: re compiles it on
# first use and caches it (a one-shot search with printable results never needs it).
_CONTROL = (
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"                # CSI
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])"          # OSC, DCS, SOS, PM, APC ...
    r"[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"             # ... up to BEL or ST (or the end)
    r"|\x1b[ -/]*[0-~]?"                                # other escapes (ESC c, ESC ( B, ...)
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"                  # any other control but \n and \t
)


def inert(text: str) -> str:
    """`text` with no terminal control left: what every text renderer applies to document content
    (headings, bodies, snippets, paths, messages), so a doc cannot move the cursor, retitle the
    window, hide lines or set the clipboard of whoever reads the output. JSON needs none of it:
    json.dumps escapes C0 controls."""
    if text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable():
        return text  # nothing the pattern below would remove (a lone CR is not printable)
    return re.sub(_CONTROL, "", text.replace("\r\n", "\n"))


def to_json(data: Any) -> str:
    """Indented JSON, non-ASCII kept: the output of every --json."""
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
    """One line of JSON (JSON Lines), as `search --queries` prints each result."""
    return json.dumps(data, ensure_ascii=False, separators=(", ", ": "))


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, width: int = 60) -> str:
    """An aligned text table; long cells are cut to `width` characters."""
    if not rows:
        return ""
    cols = list(columns or rows[0].keys())

    def cell(v: Any) -> str:
        s = "" if v is None else inert(str(v))
        s = " ".join(s.split())
        return s if len(s) <= width else s[: width - 1] + "…"

    cells = [[cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def key_values(pairs: Iterable[tuple[str, Any]]) -> str:
    """`key  value` lines, keys padded to one width."""
    items = list(pairs)
    w = max((len(k) for k, _ in items), default=0)
    return "\n".join(f"{k.ljust(w)}  {v}" for k, v in items)


def _figure(value: Any, spec: str) -> str:
    """`value` formatted by `spec`, or `?` when the query gave none (SQL NULL: search.sql's score
    is NULL when every term of the query is in about every section)."""
    return "?" if value is None else format(value, spec)


def hits_text(hits: Sequence[Any], explain: bool = False) -> str:
    """Search results: rank, the `path:lines` reference `show` accepts, the trail, the score, a
    snippet; a hit that holds none of the query's identifiers as written is marked
    `(no exact match)`. With `explain`, each signal's points and share, and how each term matched."""
    lines = []
    for h in hits:
        where = f"{h.index}:" if h.index else ""
        mark = "  (no exact match)" if h.exact is False else ""
        lines.append(f"{h.rank:>2}. {where}{h.lines}  {' > '.join(h.trail) or '(lead text)'}  "
                     f"[{_figure(h.score, '.3f')}]{mark}")
        if h.snippet:
            lines.append("    " + " ".join(h.snippet.split()))
        if explain and h.explain:
            lines.extend(explain_text(h.explain))
    return inert("\n".join(lines))


def explain_text(why: dict[str, Any]) -> list[str]:
    """search.sql's breakdown of one score, as indented lines: the signals that scored, then
    each query term and how it matched (exact, stem or none)."""
    if not why.get("signals"):
        return ["    " + str(why.get("note", "no breakdown"))]
    parts = [f"{name} {_figure(s['points'], '+.3f')} ({_figure(s['share'], '.0%')}; "
             f"{_figure(s['value'], '.2f')} x {_figure(s['weight'], 'g')})"
             for name, s in why["signals"].items() if s.get("points")]
    terms = [f"{t['term']}={t['match']}" + ("*" if t.get("identifier") else "") for t in why.get("terms", [])]
    return ["    why: " + ("; ".join(parts) or "no signal"),
            "    terms: " + " ".join(terms) + ("   (* identifier)" if any("*" in t for t in terms) else "")]


def section_text(hit: Any, from_line: int | None = None) -> str:
    """One section: a visible header line with its references (and the line its body starts
    at, when not its first), then its markdown."""
    rel = f" ({hit.relation})" if hit.relation else ""
    start = f" (from line {from_line})" if from_line else ""
    url = f"  {hit.url}" if hit.url else ""
    return inert(f"[{hit.id}] {hit.ref}  {hit.lines}{rel}{start}{url}\n{hit.body.rstrip()}\n")


def outline_text(outline: Any) -> str:
    """A document's headings, indented by level, each with the reference `show` accepts."""
    lines = [f"{outline.path} — {outline.title}"]
    for e in outline.entries:
        indent = "  " * max(e.level - 1, 0)
        lines.append(f"{indent}{e.ref}  lines {e.start_line}-{e.end_line}  ~{e.tokens} tokens")
    return inert("\n".join(lines))


def documents_text(docs: Sequence[Any]) -> str:
    return table([d.to_dict() for d in docs], ["path", "title", "sections", "lines"], width=70)


def count_noun(n: int, noun: str) -> str:
    """`1 section`, `4,453 sections`."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def build_summary(summary: Mapping[str, Any]) -> str:
    """The one-line build summary (stderr), from the same dict `build --json` prints."""
    return (f"{summary['output']}: {count_noun(summary['documents'], 'document')}, "
            f"{count_noun(summary['sections'], 'section')}, {count_noun(summary['tokens'], 'exact token')}, "
            f"{summary['bytes']:,} bytes in {summary['seconds']:.2f}s"
            + (f"; {len(summary['skipped'])} skipped" if summary["skipped"] else "")
            + (f"; {summary['reused']} reused from {summary['previous']}" if summary.get("previous") else ""))


# --- search, show, token, query, info, eval --------------------------------------------------------

def info_text(data: Mapping[str, Any]) -> str:
    """`mdfts info` as aligned key-value lines."""
    meta = data["meta"]
    rows = [
        ("index", data["path"]),
        ("bytes", f"{data['bytes']:,}"),
        ("schema", f"{data['schema_version']} (this mdfts reads {data['readable_schema_version']}: "
                   f"{'compatible' if data['compatible'] else 'NOT compatible, rebuild it'})"),
        ("built by mdfts", meta.get("mdfts_version", "?")),
        ("artifact version", meta.get("artifact_version", "-")),
        ("source", meta.get("source", "?")),
    ]
    for key in ("source_ref", "source_path", "git_commit", "git_ref", "built_at"):
        if meta.get(key):
            rows.append((key.replace("_", " "), meta[key]))
    rows += [
        ("documents", meta.get("documents", "?")),
        ("sections", meta.get("sections", "?")),
        ("exact tokens", meta.get("tokens", "?")),
        ("tokenizer", meta.get("tokenizer", "?")),
        ("sqlite", meta.get("sqlite_version", "?")),
        ("content digest", meta.get("content_digest", "?")),
        ("queries", ", ".join(data["queries"])),
    ]
    return key_values(rows)


def eval_text(result: Mapping[str, Any]) -> str:
    """`mdfts eval`: one row of metrics per kind of query."""
    rows = [{"kind": kind, **{key: (round(v, 3) if isinstance(v, float) else v) for key, v in s.items()}}
            for kind, s in result["kinds"].items()]
    return table(rows, ["kind", "n", "hit1", "hit3", "mrr10", "filehit1", "median_chars1"])


# --- check -----------------------------------------------------------------------------------------

def findings_text(findings: Sequence[Finding]) -> str:
    """One line a finding: `path:line: severity: message [rule]`, as compilers print them."""
    return inert("".join(f"{f.path}:{f.line}: {f.severity}: {f.message} [{f.rule}]\n" for f in findings))


_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def findings_github(findings: Sequence[Finding]) -> str:
    """GitHub Actions workflow commands: each finding becomes an annotation on its line."""
    return "".join(
        f"::{_GITHUB_LEVEL[f.severity]} file={_escape_property(inert(f.path))},line={f.line},"
        f"title={_escape_property('mdfts ' + f.rule)}::{_escape_data(inert(f.message))}\n"
        for f in findings
    )


def check_summary(findings: Sequence[Finding], files: int) -> str:
    """`5 files checked: 5 errors, 3 warnings, 2 info`."""
    from mdfts.check import SEVERITIES

    counts = [(s, sum(1 for f in findings if f.severity == s)) for s in reversed(SEVERITIES)]
    shown = ", ".join(f"{n} {s}{'s' if n != 1 and s != 'info' else ''}" for s, n in counts if n)
    return f"{files} file{'s' if files != 1 else ''} checked: {shown or 'no findings'}"


# --- diff ------------------------------------------------------------------------------------------

_SIGN = {"added": "+", "removed": "-", "changed": "~"}
_MAX_PLACES = 3


def _counts(diff: Diff) -> str:
    parts = []
    for what, label in (("documents", "documents"), ("sections", "sections"), ("tokens", "exact tokens")):
        counts = diff["summary"][what]
        shown = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        parts.append(f"{label}: {shown or 'none'}")
    return "; ".join(parts)


def _range(lines: list[int] | None) -> str:
    return "" if lines is None else f"{lines[0]}-{lines[1]}"


def _section_lines(s: SectionChange) -> str:
    if s["status"] == "changed" and s["old_lines"] != s["new_lines"]:
        return f"lines {_range(s['old_lines'])} → {_range(s['new_lines'])}"
    return f"lines {_range(s['new_lines'] or s['old_lines'])}"


def _ref(s: SectionChange) -> str:
    # A heading of punctuation alone (`# !!!`) has the lead text's empty anchor: the level tells them apart.
    return f"{s['path']}#{s['anchor']}" if s["level"] else f"{s['path']} (lead text)"


def _places(t: TokenChange, show: Callable[[str], str] = str) -> str:
    shown = [show(f"{p['path']}:{p['line']}") for p in t["places"][:_MAX_PLACES]]
    more = len(t["places"]) - _MAX_PLACES
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _elsewhere(t: TokenChange) -> str:
    # A removed token's count is of the new index, an added one's of the old: one that moved
    # from two documents to a third was "already in 2 other documents" of an index with it once.
    n = t["other_documents"]
    docs = f"{n} other document{'s' if n != 1 else ''}"
    if t["status"] == "removed":
        return f"still in {docs}" if n else "gone from the index"
    return f"in {docs} before" if n else "new to the index"


def _changed_paths(diff: Diff) -> set[str]:
    # Sections of added and removed documents are in the JSON; the text lists the document once.
    return {d["path"] for d in diff["documents"] if d["status"] == "changed"}


def _section_count(d: DocumentChange) -> str:
    n = d["new_sections"] if d["status"] == "added" else d["old_sections"]
    if d["status"] == "changed":
        return f"{d['old_sections']} → {d['new_sections']} sections"
    return f"{n} section{'s' if n != 1 else ''}"


def diff_text(diff: Diff) -> str:
    """The diff as plain text: a summary line, then documents, sections and tokens."""
    out = [f"{diff['old']} → {diff['new']}: {_counts(diff)}"]
    if diff["documents"]:
        out += ["", "documents"]
        out += [f"  {_SIGN[d['status']]} {d['path']}  ({_section_count(d)})" for d in diff["documents"]]
    changed = _changed_paths(diff)
    sections = [s for s in diff["sections"] if s["path"] in changed]
    if sections:
        width = max(len(_ref(s)) for s in sections)
        out += ["", "sections of changed documents"]  # an added or removed one's are its count above
        out += [f"  {_SIGN[s['status']]} {_ref(s).ljust(width)}  {_section_lines(s)}"
                for s in sections]
    included = [s for s in diff["sections"] if s["included"]]
    if included:
        width = max(len(_ref(s)) for s in included)
        out += ["", "sections whose included files changed"]
        out += [f"  ~ {_ref(s).ljust(width)}  {_section_lines(s)}" for s in included]
    if diff["tokens"]:
        width = min(40, max(len(f"{t['token']} ({t['kind']})") for t in diff["tokens"]))
        out += ["", "exact tokens"]
        out += [f"  {_SIGN[t['status']]} {(t['token'] + ' (' + t['kind'] + ')').ljust(width)}  {_places(t)}"
                f"  ({_elsewhere(t)})" for t in diff["tokens"]]
    return inert("\n".join(out) + "\n")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


_MD_SPECIAL = r"([\\`*_{}\[\]()#+!|~<>-])"
_MENTION = r"@(?=[\w-])"  # @user, @org/team: a zero-width space after @ stops the ping
_AUTOLINK = r"(?i)(://|www\.)"


def _md_text(text: str) -> str:
    """Document text (a heading) as inert markdown in a pull-request comment: HTML escaped, every
    markdown punctuation backslash-escaped (no link, image, emphasis or table cell can form),
    no @-mention and no bare URL GitHub would autolink."""
    import html

    out = html.escape(inert(text).replace("\n", " "), quote=False)
    out = re.sub(_MD_SPECIAL, r"\\\1", out)
    out = re.sub(_MENTION, "@\u200b", out)
    return re.sub(_AUTOLINK, lambda m: m.group(1)[:-1] + "\u200b" + m.group(1)[-1], out)


def _code(text: str) -> str:
    text = inert(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return _cell(f"{fence}{pad}{text}{pad}{fence}")


_MD_STATUS = {"added": "added", "removed": "**removed**", "changed": "changed"}
MAX_ROWS = 50  # per markdown table: a pull-request comment stays readable (and under GitHub's limit)


def _capped(rows: list[str], total: int, what: str) -> list[str]:
    if total <= MAX_ROWS:
        return rows
    return rows[:MAX_ROWS] + ["", f"…and {total - MAX_ROWS} more {what}; `mdfts diff --json` lists them all."]


def diff_markdown(diff: Diff) -> str:
    """The diff as GitHub-flavoured markdown, for a pull-request comment."""
    included = [s for s in diff["sections"] if s["included"]]
    if not (diff["documents"] or diff["tokens"] or included):
        return "### Docs index: no changes\n\nNo document, section or exact token differs.\n"
    out = ["### Docs index changes", "", _counts(diff).replace("; ", " · ") + ".", ""]
    if diff["documents"]:
        out += ["| | Document | Sections |", "|---|---|---|"]
        out += _capped([f"| {_MD_STATUS[d['status']]} | {_code(d['path'])} | {_section_count(d).split(' section')[0]} |"
                        for d in diff["documents"]], len(diff["documents"]), "documents")
        out.append("")
    changed = _changed_paths(diff)
    sections = [s for s in diff["sections"] if s["path"] in changed]
    if sections:
        out += [f"<details><summary>Sections of changed documents ({len(sections)})</summary>", ""]
        out += ["| | Section | Heading | Lines |", "|---|---|---|---|"]
        out += _capped([f"| {_MD_STATUS[s['status']]} | {_code(_ref(s))} | "
                        f"{_md_text(s['heading']) or '(lead text)'} | {_section_lines(s).removeprefix('lines ')} |"
                        for s in sections], len(sections), "sections")
        out += ["", "</details>", ""]
    if included:
        out += [f"<details><summary>Sections whose included files changed ({len(included)})</summary>", ""]
        out += ["| | Section | Heading | Lines |", "|---|---|---|---|"]
        out += _capped([f"| {_MD_STATUS['changed']} | {_code(_ref(s))} | {_md_text(s['heading']) or '(lead text)'} | "
                        f"{_section_lines(s).removeprefix('lines ')} |" for s in included], len(included), "sections")
        out += ["", "</details>", ""]
    if diff["tokens"]:
        out += ["| | Exact token | Kind | Where | Elsewhere |", "|---|---|---|---|---|"]
        out += _capped([f"| {_MD_STATUS[t['status']]} | {_code(t['token'])} | {t['kind']} | {_places(t, _code)} | "
                        f"{_elsewhere(t)} |" for t in diff["tokens"]], len(diff["tokens"]), "exact tokens")
        out.append("")
    return inert("\n".join(out))
