"""Acronyms a section defines, "virtual machine (VM)" or "HPA (Horizontal Pod Autoscaler)".

The build stores them in mdfts_acronyms (builder/derive.sql calls `defined_json` as an SQL
function), so queries/search.sql can let a question that writes one form find the other.
"""

from __future__ import annotations

import json
import re

from mdfts.words import camel_parts

# Anything in round brackets on one line: an acronym, whose long form the words just before
# the bracket give, or a long form, of the acronym just before the bracket.
_BRACKET = re.compile(r"\(([^()\n]{2,80})\)")
# An acronym: two to eight letters, the first and last capitals (VM, QoS, DDoS), and a plural's s.
_ACRONYM = re.compile(r"[A-Z][A-Za-z]{0,6}[A-Z]s?")
# An acronym that ends the text before a bracket, a word of its own ("HPA (Horizontal ...)").
_ACRONYM_BEFORE = re.compile(r"(?<![\w.\-/])([A-Z][A-Za-z]{0,6}[A-Z]s?)[ \t]*$")
# A word of a long form: letters and digits, hyphenated parts kept together (multi-factor).
_LONG_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
# What ends the run of words before a bracket: punctuation, a line break.
_CLAUSE_END = re.compile(r"[.,;:!?()\[\]{}<>|\"\n]")
# A link's address, "[Persistent Volume Claim](https://...) (PVC)": its text is the long form.
_LINK_ADDRESS = re.compile(r"\]\([^()\s]*\)")
# The brackets a section's text is read for at most: a definition comes early, and a document of
# a million brackets must not hold the build up (4 MB of "word (VM) " took 2.4 s before).
_MAX_BRACKETS = 1000
# Small words a long form may hold that its acronym may skip ("Department for Work and Pensions").
_SKIPPABLE = frozenset("a an and as at by for from in of on or the to with".split())


def _letters(words: list[str], *, camel: bool, skip: bool) -> str:
    """The first letter of each word (or of each hyphenated or CamelCase part), lower case."""
    out: list[str] = []
    for word in words:
        if skip and word.lower() in _SKIPPABLE:
            continue
        for part in word.split("-"):
            if part:
                out.extend(p[0] for p in (camel_parts(part) if camel else [part]))
    return "".join(out).lower()


def _spells(words: list[str], short: str) -> bool:
    """Whether the words' initials spell the acronym: word by word, by CamelCase parts
    (PersistentVolumeClaim for PVC), or without the small words (for, and, of). One word alone
    spells it only through its parts."""
    if not words or words[0].lower() in _SKIPPABLE or words[-1].lower() in _SKIPPABLE:
        return False
    want = short.lower()
    for camel, skip in ((False, False), (True, False), (False, True)):
        letters = _letters(words, camel=camel, skip=skip)
        if letters == want and (len(words) > 1 or len(letters) > 1):
            return True
    return False


def _singular(word: str) -> str:
    """A plural's last word made singular, near enough for the query's word test."""
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _pair(short: str, words: list[str]) -> tuple[str, str]:
    long = [w.lower() for w in words]
    long[-1] = _singular(long[-1])
    return short, " ".join(long)


def _short(written: str) -> str:
    """The acronym less a plural's s (VMs → VM; not QoS)."""
    return written[:-1] if written.endswith("s") and written[-2].isupper() else written


def defined(text: str) -> list[tuple[str, str]]:
    """The (acronym, long form) pairs a text defines, in order of appearance, within its first
    1,000 brackets: the long form lower case, its last word singular ("Persistent Volume Claims
    (PVCs)" → PVC, "persistent volume claim")."""
    found: list[tuple[str, str]] = []
    for n, m in enumerate(_BRACKET.finditer(text)):
        if n == _MAX_BRACKETS:
            break
        inner = m.group(1)
        if _ACRONYM.fullmatch(inner):
            # "... Long Form (ACR)": the fewest words before the bracket that spell it
            clause = _CLAUSE_END.split(_LINK_ADDRESS.sub("", text[max(0, m.start() - 160):m.start()]))[-1]
            words = _LONG_WORD.findall(clause)
            short = _short(inner)
            for k in range(1, min(len(words), len(short) + 4) + 1):
                if _spells(words[-k:], short):
                    found.append(_pair(short, words[-k:]))
                    break
        elif text[m.start() - 1:m.start()].isalpha() or text[m.start() - 1:m.start()] in (" ", "\t"):
            # "ACR (Long Form)": the acronym right before the bracket (or a space or tab before
            # it, as _ACRONYM_BEFORE reads), the bracket all words
            last = _ACRONYM_BEFORE.search(text, max(0, m.start() - 12), m.start())
            words = _LONG_WORD.findall(inner)
            if last and " ".join(words) == " ".join(inner.split()) and _spells(words, _short(last.group(1))):
                found.append(_pair(_short(last.group(1)), words))
    return found


def defined_json(text: str | None) -> str | None:
    """`defined` as a JSON array of [acronym, long form] for SQL; NULL when none."""
    pairs = defined(text or "")
    return json.dumps(pairs) if pairs else None
