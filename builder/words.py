"""Search words derived at build time: a file name's words and the parts of CamelCase words.

queries/search.sql matches them through sections_fts (columns file_words and head), so the
query side needs no string surgery per candidate.
"""

from __future__ import annotations

import re

# A run of letters and digits, as FTS5's unicode61 tokenizer sees a word (near enough: it also
# splits on every non-alphanumeric character, which is what we split on here).
_WORD = re.compile(r"[^\W_]+")
# Where a CamelCase word breaks: before an upper-case letter that follows a lower-case letter
# or a digit (paymentsGateway), and before the last capital of a run followed by a lower-case
# letter (HTTPServer → HTTP Server), unless that letter is a plural's final s (OSDs, PVCs: one
# word). queries/search.sql splits a query's CamelCase word by the same rule (key.camel).
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])(?![A-Z]s$)")
# Extensions dropped from a file name, however many are stacked (guide.html.md → guide).
_DOC_EXT = frozenset("md markdown mdx mdown mkd html htm txt rst".split())
# File names that name their folder rather than themselves.
_FOLDER_PAGES = frozenset("index readme _index".split())


def camel_parts(word: str) -> list[str]:
    """A word's CamelCase parts ([word] when it does not split): none of one letter, as an
    acronym with a small letter (QoS, gRPC, mTLS) is one word, not Qo + S."""
    parts = [p for p in _CAMEL.split(word) if p]
    return [word] if any(len(p) == 1 for p in parts) else parts


def file_stem(path: str) -> str:
    """The name a document goes by: its file name without document extensions, or its folder's
    name for index.md, README.md and _index.md (docs/install/README.md → install)."""
    folders, _, name = path.rpartition("/")
    parts = name.split(".")
    while len(parts) > 1 and parts[-1].lower() in _DOC_EXT:
        parts.pop()
    stem = ".".join(parts)
    if stem.lower() in _FOLDER_PAGES and folders:
        stem = folders.rpartition("/")[2]
    return stem


def file_words(path: str) -> str:
    """The file name's words for search, lower-case: its stem's words, CamelCase split, then
    after " / " the CamelCase words whole (so `PaymentsGatewayDown` still names its page).
    search.sql counts the words before " / " to know how much of the name a query names."""
    stem = file_stem(path)
    words: list[str] = []
    whole: list[str] = []
    for word in _WORD.findall(stem):
        parts = camel_parts(word)
        words.extend(p.lower() for p in parts)
        if len(parts) > 1:
            whole.append(word.lower())
    return " ".join(words) + (" / " + " ".join(whole) if whole else "")


def heading_parts(heading: str) -> str:
    """The CamelCase parts of a heading's words, each word's parts joined by hyphens ("" when none
    split), searched with the heading: "GitLab CI" → "git-lab". FTS5 reads the parts as words;
    the hyphens tell search.sql which parts make one heading word, so a query that names each
    part of it, apart, names that word."""
    if not _CAMEL.search(heading):
        return ""  # no word splits (most headings): a split point has a letter or digit on each side
    out: list[str] = []
    for word in _WORD.findall(heading):
        parts = camel_parts(word)
        if len(parts) > 1:
            out.append("-".join(parts).lower())
    return " ".join(out)
