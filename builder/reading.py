"""A read within a token budget, as `mdfts mcp`'s fetch and the llm toolbox's fetch give it:
whole lines while they fit, a line too long for any read of that budget cut to the room left, a
document's headings while they fit, and the call that goes on where the read stopped."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mdfts.errors import MdftsError
from mdfts.prompt import ByteCounter
from mdfts.records import Hit, OutlineEntry

_count = ByteCounter()  # 4 bytes a token: the same size whichever front end reads
CUT = "…"  # ends a line cut to fit
# Markdown allows a heading, and so an anchor, of any length (a 100 KB one was repeated five times
# a hit: heading, trail, anchor, ref, title): a read cuts the names it gives to this many characters.
NAME = 200
MIN_TOKENS = 100  # the smallest budget a read is given: a smaller one is raised to it
AT_LEAST = 256  # bytes of its first line a read shows when its header line leaves no room


@dataclass(frozen=True, slots=True)
class Part:
    """One section as a read shows it: its header line, its lines (numbered as in the file when
    asked), the part of its body they are, and the line it starts from when not its first."""

    hit: Hit
    head: str
    lines: list[str]
    body: str
    from_line: int | None = None


@dataclass(frozen=True, slots=True)
class Reading:
    """The sections a read shows; when it stopped short (`truncated`), the first line not shown
    whole, the line a next read starts from (None when what is left is only the rest of a cut
    line), and a cut line as (line number, characters shown, characters)."""

    parts: list[Part]
    truncated: bool = False
    next_line: int | None = None
    next_from: int | None = None
    cut: tuple[int, int, int] | None = None

    def note(self, budget: int, next_call: str) -> str:
        """The line that ends a read that stopped short ("" for a whole one): where it stopped, for
        what budget, and `next_call`, the call that goes on, when there is more to read."""
        go_on = f"; next: {next_call}" if self.next_from is not None else ""
        if self.cut:
            line, shown, chars = self.cut
            return f"[… line {line} cut after {shown:,} of {chars:,} characters for max_tokens {budget}{go_on}]"
        if self.truncated:
            return f"[… truncated at line {self.next_line} for max_tokens {budget}{go_on}]"
        return ""


def call_text(tool: str, args: dict[str, Any]) -> str:
    """A call as a line of text names it: fetch(ref="runbooks/x.md#y", from_line=93)."""
    return f"{tool}(" + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items()) + ")"


def read_within(hits: Sequence[Hit], budget: int, head: Callable[[Hit, int | None], str], *,
                from_line: int | None = None, line_numbers: bool = True, ref: str = "",
                arg: str = "from_line") -> Reading:
    """`hits` (sections in file order) from line `from_line` of the file on, each under its
    `head(hit, from_line or None)` line, while they fit `budget` tokens; `ref` and `arg` (the
    argument's name) name them in the error for a `from_line` past their last line."""
    if from_line is not None:
        if from_line > hits[-1].end_line:
            raise MdftsError(f"{arg} {from_line} is past what {ref!r} reads "
                             f"(lines {hits[0].start_line}-{hits[-1].end_line})")
        hits = [h for h in hits if h.end_line >= from_line]
    parts: list[Part] = []
    used = 0
    for n, h in enumerate(hits):
        skip = max(from_line - h.start_line, 0) if from_line is not None and n == 0 else 0
        start = h.start_line + skip if skip else None
        top = head(h, start)
        used += _count(top + "\n")
        # (the read's first section shows at least a line, or part of one, whatever the budget
        # and its header line's length: a read that shows nothing would name itself as the next)
        got = _lines_within(h, line_numbers, budget, used, budget - _count(top + "\n"), skip,
                            AT_LEAST if n == 0 else 0)
        used = got.used
        body = h.body[got.begin:got.chars]
        if not got.whole:
            body = body or "\n"  # (as "\n".join of no lines, + "\n")
        parts.append(Part(h, top, got.lines, body, start))
        if not got.whole:
            next_line = h.start_line + skip + len(got.lines) - bool(got.cut)
            # After a cut line: the next one (a read of this budget cannot show it whole either).
            next_from = (next_line if not got.cut else
                         next_line + 1 if got.more or n + 1 < len(hits) else None)
            return Reading(parts, True, next_line, next_from, got.cut)
    return Reading(parts)


@dataclass(frozen=True, slots=True)
class Headings:
    """A document's headings as a read lists them: `lines` (the head line, then one a heading in
    `kept`), how many more there are, and the line the first of those starts at."""

    lines: list[str]
    kept: tuple[OutlineEntry, ...]
    left: int
    next_from: int | None

    def note(self, path: str, tool: str, next_call: str) -> str:
        """The line after headings that did not all fit ("" when they did)."""
        if not self.left:
            return ""
        return (f"[… {self.left:,} more headings, from line {self.next_from}; next: {next_call}; "
                f"{tool} {path}:LINE for one]")


def headings_within(entries: Sequence[OutlineEntry], budget: int, head: str,
                    line: Callable[[OutlineEntry], str], from_line: int | None = None) -> Headings:
    """The `head` line, then one `line` a heading (from `from_line` on, when given) while they fit
    `budget` tokens: a file may have 50,000 headings."""
    entries = entries if from_line is None else [e for e in entries if e.end_line >= from_line]
    lines = lines_within(budget, [head] + [line(e) for e in entries])
    kept = tuple(entries[:max(len(lines) - 1, 0)])
    left = len(entries) - len(kept)
    if not left:
        return Headings(lines, kept, 0, None)
    return Headings(lines or [head], kept, left, entries[len(kept)].start_line)


def lines_within(budget: int, lines: Sequence[str]) -> list[str]:
    """The first `lines` whose text (a line break after each) fits `budget` tokens."""
    used = 0
    for n, line in enumerate(lines):
        used += _count(line + "\n")
        if used > budget:
            return list(lines[:n])
    return list(lines)


@dataclass(frozen=True, slots=True)
class _Lines:
    """What of a section's body a read shows: its lines from the first one asked for, where in
    the body they start and end, whether that is the rest of it, the tokens used with them, and a
    line cut to fit, if any, as (line number, characters shown, characters), with whether any
    line follows it."""

    lines: list[str]
    begin: int
    chars: int
    whole: bool
    used: int
    cut: tuple[int, int, int] | None = None
    more: bool = False


def _line_offset(body: str, n: int) -> int:
    """Where the body's line `n` (0 = its first) starts; len(body) when it has no such line."""
    start = 0
    for _ in range(n):
        found = body.find("\n", start)
        if found < 0:
            return len(body)
        start = found + 1
    return start


def _lines_within(h: Hit, line_numbers: bool, budget: int, used: int, longest: int, skip: int = 0,
                  at_least: int = 0) -> _Lines:
    """The body's whole lines from its line `skip` on (numbered as in the file) while `used`
    tokens plus them fit `budget`. A line that does not fit, and could not in any read of this
    budget (it is more than `longest` tokens, what is left after the section's header line), is
    cut to the room left: whole lines only never showed a 1 MB line at all. Read a line at a
    time: a 20 MB section was split and numbered whole for 24 KB of answer. With `at_least`, the
    first line is shown whole if it is no longer than that many bytes, else cut to them, however
    little room is left."""
    body = h.body
    end = len(body)
    while end and body[end - 1] == "\n":
        end -= 1
    kept: list[str] = []
    start = begin = _line_offset(body, skip)
    first = h.start_line + skip
    while start <= end:
        stop = body.find("\n", start, end)
        stop = end if stop < 0 else stop
        number = f"{first + len(kept)}: " if line_numbers else ""
        line = number + body[start:stop]
        cost = _count(line + "\n")
        if used + cost > budget and not (at_least and not kept and cost * 4 <= at_least):
            if cost > longest or (at_least and not kept):
                room = (budget - used) * 4 - len((number + CUT + "\n").encode())
                shown = _prefix_within(body, start, stop, max(room, at_least if not kept else 0))
                if shown:
                    kept.append(number + body[start:start + shown] + CUT)
                    used += _count(kept[-1] + "\n")
                    return _Lines(kept, begin, start + shown, False, used,
                                  (first + len(kept) - 1, shown, stop - start), stop < end)
            return _Lines(kept, begin, start, False, used)
        used += cost
        kept.append(line)
        start = stop + 1
    return _Lines(kept, begin, len(body), True, used)


def _prefix_within(text: str, start: int, stop: int, room: int) -> int:
    """How many characters of text[start:stop] fit in `room` bytes of UTF-8 (none below 1 byte);
    only as much of the text is encoded as can fit."""
    if room < 1:
        return 0
    head = text[start:min(stop, start + room)].encode("utf-8")[:room]
    return len(head.decode("utf-8", errors="ignore"))
