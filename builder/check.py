"""A docs lint that keeps docs retrievable: headings, section sizes, and links that resolve.

Files are found, decoded and split exactly as `mdfts build` does (discover, split_sections).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypedDict
from urllib.parse import unquote

from mdfts.discover import DEFAULT_INCLUDE, SourceFile, discover, include_root, no_file_matches, read_source
from mdfts.errors import MdftsError, SourceError
from mdfts.includes import MAX_NAMES, Includes, directives, has_includes
from mdfts.parse import parse_links, raw_html, slugify
from mdfts.sections import Document, split_sections

SEVERITIES = ("info", "warning", "error")  # weakest first
RULES = {
    "unreadable": "error",          # not UTF-8, binary, bad front matter: the build would fail
    "broken-link": "error",         # a relative link to a file that does not exist
    "broken-anchor": "error",       # a #fragment that no heading (or id=) in the target defines
    "broken-include": "warning",    # an include directive ({!x.md!}, --8<--) showing nothing: no file the build
                                    # reads, or lines or a section the file has not
    "empty-file": "warning",
    "no-headings": "warning",       # the whole file is one section: search can only point at all of it
    "skipped-level": "warning",     # h2 → h4: outline and trail have a hole
    "duplicate-heading": "warning",  # same anchor twice: GitHub adds -1, and links go to the first
    "oversized-section": "warning",  # too long to show or quote whole
    "empty-section": "info",        # a heading with nothing under it, not even subheadings
}
DEFAULT_MAX_SECTION_CHARS = 8000  # about 2,000 LLM tokens, the default `mdfts context` budget
MARKDOWN_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True, slots=True)
class Finding:
    path: str  # as the user sees it: relative to the working folder when inside it
    line: int  # 1-based
    severity: str
    rule: str
    message: str


class FindingJson(TypedDict):
    path: str
    line: int
    severity: str
    rule: str
    message: str


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# [^<>]: a tag ends at the next "<" too, so a run of unclosed "<" stays linear (with [^>], each
# one scanned to the next ">": 50,000 of them in one HTML block took 46 s); the same ids.
_HTML_ID = re.compile(r"""<[^<>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)\s*$")


def _display(abspath: Path, cwd: Path) -> str:
    try:
        return abspath.relative_to(cwd).as_posix()
    except ValueError:
        return str(abspath)


def _anchors(doc: Document, text: str) -> set[str]:
    found = {s.anchor for s in doc.sections if s.level}
    found.update(m.group(1) for html in raw_html(text) for m in _HTML_ID.finditer(html))  # not in code or comments
    return {a.lower() for a in found}


def _heading_findings(doc: Document, max_chars: int) -> list[tuple[int, str, str]]:
    out: list[tuple[int, str, str]] = []
    heads = [s for s in doc.sections if s.level]
    if not doc.sections:
        return [(1, "empty-file", "empty file: nothing to index")]
    if not heads:
        out.append((1, "no-headings", "no headings: the whole file is one section; add a # title and ## sections"))
    first_line: dict[str, int] = {}
    prev_level = 0
    for i, s in enumerate(doc.sections):
        if s.level:
            if prev_level and s.level > prev_level + 1:
                out.append((s.start_line, "skipped-level",
                            f"heading level skips from h{prev_level} to h{s.level} ({s.heading!r})"))
            prev_level = s.level
            base = slugify(s.heading)
            if s.anchor == base:
                first_line.setdefault(base, s.start_line)
            elif base in first_line and s.anchor.startswith(base + "-") and s.anchor[len(base) + 1:].isdecimal():
                # the slugger numbered it; a heading's own {#id} tells it apart, so that is no repeat
                out.append((s.start_line, "duplicate-heading",
                            f"heading {s.heading!r} repeats line {first_line[base]}: its anchor is "
                            f"#{s.anchor}, and links to #{base} go to line {first_line[base]}"))
            has_children = i + 1 < len(doc.sections) and doc.sections[i + 1].level > s.level
            rest = s.body.split("\n")[1:]
            if rest and _SETEXT.match(rest[0]):
                rest = rest[1:]
            if not has_children and not any(line.strip() for line in rest):
                out.append((s.start_line, "empty-section", f"section {s.heading!r} is empty"))
        if s.level or s.body.strip():
            if len(s.body) > max_chars:
                what = f"section {s.heading!r}" if s.level else "text before the first heading"
                out.append((s.start_line, "oversized-section",
                            f"{what} is {len(s.body):,} characters (more than {max_chars:,}); "
                            "split it with subheadings"))
    return out


def check_docs(
    roots: Sequence[Path],
    *,
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    max_section_chars: int = DEFAULT_MAX_SECTION_CHARS,
    ignore: Sequence[str] = (),
    warn: Callable[[str], None] | None = None,
) -> tuple[list[Finding], int]:
    """The findings for the markdown under `roots`, by path and line, and how many files were read."""
    cwd = Path.cwd().resolve()
    files = discover(roots, include, exclude, warn=warn)
    if not files:  # a lint that read nothing must not pass (a typo in --include, an empty folder)
        raise MdftsError(f"{no_file_matches(roots, include, exclude)}; nothing to check")
    anchors: dict[Path, set[str] | None] = {}  # None: the file exists but cannot be read
    raw: list[tuple[str, int, str, str]] = []
    links: list[tuple[SourceFile, int, str]] = []
    for f in files:
        shown = _display(f.abspath, cwd)
        try:
            src = read_source(f)
            doc = split_sections(src.path, src.text, src.sha256, src.size)
        except SourceError as err:
            raw.append((shown, err.line or 1, "unreadable", err.what))
            anchors[f.abspath] = None
            continue
        anchors[f.abspath] = _anchors(doc, src.text)
        raw.extend((shown, line, rule, msg) for line, rule, msg in _heading_findings(doc, max_section_chars))
        text = src.text.replace("\r\n", "\n").replace("\r", "\n")
        links.extend((f, line + 1, target) for line, target in parse_links(text))
        if f.data is None and has_includes(text):
            raw.extend((shown, line, "broken-include", msg) for line, msg in _include_problems(f, text))

    for f, line, target in links:
        problem = _link_problem(f.abspath, target, anchors)
        if problem:
            raw.append((_display(f.abspath, cwd), line, *problem))

    findings = sorted(
        (Finding(p, line, RULES[rule], rule, msg) for p, line, rule, msg in raw if rule not in ignore),
        key=lambda x: (x.path, x.line, x.rule, x.message),
    )
    return findings, len(files)


def _include_problems(f: SourceFile, text: str) -> list[tuple[int, str]]:
    """(line, message) for each include directive whose file the build would not read."""
    includes = Includes(include_root(f) or f.root, f.path, 0)
    out = []
    names: set[str] = set()
    for offset, name, pick in directives(text):
        line = text.count("\n", 0, offset) + 1
        names.add(name)
        if len(names) > MAX_NAMES:
            out.append((line, f"include of {name}: past this file's first {MAX_NAMES:,} names, the build "
                              "reads no more"))
            break
        if includes.find(name, f.path) is None:
            folder = f.top or f.root
            out.append((line, f"include of {name}: no file of that name below {folder.name or folder} to read, "
                              "so its text is not indexed here"))
        elif includes.shows_nothing(name, pick, f.path):
            asked = f"lines {pick.strip()}" if isinstance(pick, str) else "the lines or text named"
            out.append((line, f"include of {name}: the file has not {asked}, "
                              "so nothing of it is shown or indexed here"))
    return out


def _target_anchors(path: Path, anchors: dict[Path, set[str] | None]) -> set[str] | None:
    """Anchors of a markdown file, read on first use when it is outside the checked folders."""
    if path not in anchors:
        try:
            src = read_source(SourceFile(path.name, path.parent))
            anchors[path] = _anchors(split_sections(src.path, src.text), src.text)
        except SourceError:
            anchors[path] = None
    return anchors[path]


def _link_problem(source: Path, target: str, anchors: dict[Path, set[str] | None]) -> tuple[str, str] | None:
    if not target or _SCHEME.match(target) or target.startswith(("/", "\\")):
        return None  # a URL, mailto:, or a site-root path this lint cannot resolve
    path_part, _, fragment = target.partition("#")
    path_part = unquote(path_part.split("?", 1)[0])
    fragment = unquote(fragment)
    if path_part:
        dest = Path(os.path.normpath(source.parent / path_part))
        if not dest.exists():
            return "broken-link", f"link to {path_part}: no such file"
    else:
        dest = source
    if not fragment or not dest.is_file() or dest.suffix.lower() not in MARKDOWN_SUFFIXES:
        return None
    known = _target_anchors(dest, anchors)
    if known is None or fragment.lower() in known:
        return None
    where = "this file" if dest == source else path_part
    return "broken-anchor", f"link to #{fragment}: no such heading in {where}"


def at_or_above(findings: Sequence[Finding], severity: str) -> list[Finding]:
    """The findings of `severity` or worse."""
    floor = SEVERITIES.index(severity)
    return [f for f in findings if SEVERITIES.index(f.severity) >= floor]


def to_json(findings: Sequence[Finding]) -> list[FindingJson]:
    return [FindingJson(**asdict(f)) for f in findings]  # type: ignore[typeddict-item]
