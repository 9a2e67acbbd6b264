"""Exact tokens of a section: ENV vars, CLI flags, error codes, identifiers, names, versions, paths, URLs."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from mdfts.artifact import KINDS, SOURCES

if TYPE_CHECKING:  # types only: mdfts.artifact defines them for the type checker alone
    from mdfts.artifact import TokenKind, TokenSource

__all__ = ["KINDS", "SOURCES", "ExactToken", "extract_tokens", "keep_strongest", "normalize", "strongest_sources"]

_RANK = {s: i for i, s in enumerate(SOURCES)}

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# The same two character sets appear in queries/search.sql and queries/token.sql: keep them equal.
LEAD_PUNCT = "\"'`([{<"
TRAIL_PUNCT = "\"'`)]}>.,:;!?"


def normalize(token: str) -> str:
    """The lookup form of a token: surrounding quotes/brackets and trailing punctuation
    removed, ASCII letters lower-cased (SQLite's lower() folds ASCII only, so we do too)."""
    token = token.lstrip(LEAD_PUNCT).rstrip(TRAIL_PUNCT)
    # str.lower() is the same on ASCII text and far cheaper than translate() with a table.
    return token.lower() if token.isascii() else token.translate(_ASCII_LOWER)


@dataclass(frozen=True, slots=True)
class ExactToken:
    token: str  # as written
    kind: TokenKind
    source: TokenSource

    @property
    def norm(self) -> str:
        """The token as lookups match it (normalize())."""
        return normalize(self.token)


# Stage 1: cheap candidates, whitespace-delimited chunks without brackets or quotes. Most
# chunks are plain words ("payments,", "Rollback") that no kind fits: the lookahead drops those
# inside the regex engine (four in five chunks of prose), and _scan() skips the same ones as
# before, so the tokens are unchanged. It also drops the other chunks in which _scan() finds no
# token in any source: capitals alone (HTTP, UTC), numbers and clock times (10, 03:00), and
# capitalised hyphenated words (Read-only); in prose also hyphenated words without a digit
# (on-call: a kebab-case name counts in prose only with one). That is two in five of the
# chunks the plain-word rule leaves in prose, and 7% of the token stage.
_SEP = r"\s`'\"<>()\[\]{},;|*"
_NO_TOKEN = r"[A-Z]?[a-z]+|[A-Z]+|[0-9]+(?::[0-9]+)*|[A-Z][a-z]+(?:-[a-z]+)+"


def _chunker(no_token: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![^{_SEP}])(?!(?:{no_token})[.,:;!?]*(?:[{_SEP}]|\Z))[^{_SEP}]{{2,}}")


_CHUNK = _chunker(_NO_TOKEN)
_PROSE_CHUNK = _chunker(_NO_TOKEN + r"|[a-z]+(?:-[a-z]+)+")  # for source "text" only
# Stage 2: words inside a chunk, and the tests that classify them.
_WORD = re.compile(r"[A-Za-z0-9_$][\w.$-]*")
# Any scheme (postgres://, redis://, s3://): DSNs in ENV examples are URLs too.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/$.?#][^\s`'\"<>()\[\]{}|]*")
_FLAG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_-]*")
# A key and its value in code, as one string: a label selector (`-l alertmanager=main`), an
# option and its value (`-mhe=on`, `-Dlog.level=debug`), a setting (`image.tag=1.2`). A key of
# two characters or more (not a loop's `i=0`); the value a word, number, path or host, no
# placeholder (`-mhe={{on}}` is the form, not the string). Its words count on their own too.
_PAIR = re.compile(r"-{0,2}[A-Za-z][\w.-]*[A-Za-z0-9]=[\w.:/@-]*[A-Za-z0-9]")
_PATH = re.compile(r"(?:~|\.{1,2})?/?[\w.@+-]+(?:/[\w.@+-]+)+/?")
# A protocol or product and its version written with a slash (HTTP/2, HTTP/1.1, TLS/1.3,
# Mozilla/5.0): a name of two letters or more with a capital first, as such names are written
# (a folder's is lower-case: release/2.14, pts/5 stay paths), then a version as search.sql's
# `ver` reads one (one to three digits, no leading zero, dotted parts); no file path.
_SLASH_VERSION = re.compile(r"[A-Z][A-Za-z]+/[1-9]\d{0,2}(?:\.\d+)*")
_ENV = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_ERROR = re.compile(r"(?:[A-Z]{1,6}-?\d{2,6}|ERR_[A-Z0-9_]+|E_[A-Z0-9_]+)")
_SNAKE = re.compile(r"_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*")
_CAMEL = re.compile(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+[a-z0-9]")
_KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.-]+)?")
_DOTTED = re.compile(r"[A-Za-z_$][\w$-]*(?:\.[A-Za-z_$][\w$-]*)+")
_FILE_EXT = frozenset(
    "md markdown txt rst yaml yml json toml ini cfg conf env sh bash zsh py js ts go rs rb java sql "
    "log csv tsv xml html css lock pem crt key tf tfvars hcl proto service timer socket gz tar zip".split()
)
_HOST_END = frozenset(
    "com net org io dev internal local localhost svc cluster corp lan cloud app co uk de eu".split()
)


def _strip(word: str) -> str:
    return word.lstrip(LEAD_PUNCT).rstrip(TRAIL_PUNCT + "-/")


def _classify_word(word: str, in_code: bool) -> TokenKind | None:
    # Each pattern runs only when the word has what every match of it has (an `_` for _ENV and
    # _SNAKE, a `.` for _VERSION and _DOTTED, a capital for _CAMEL, a `-` for _KEBAB, a capital
    # then a digit or `_` for _ERROR): most words that get here (HTTP, 30s, 2024) match none.
    underscore = "_" in word
    if underscore and _ENV.fullmatch(word):
        return "error_code" if word.startswith(("ERR_", "E_")) else "env_var"
    if ("A" <= word[0] <= "Z" and (underscore or any(c.isdigit() for c in word))
            and _ERROR.fullmatch(word)):
        return "error_code"
    dot = "." in word
    if dot and _VERSION.fullmatch(word):
        return "version"
    if dot and _DOTTED.fullmatch(word):
        parts = word.split(".")
        last = parts[-1].lower()
        if last in _FILE_EXT:
            return "file_path"
        if max(len(p) for p in parts) < 2:
            return None  # e.g, i.e
        if last in _HOST_END and len(parts) >= 2:
            return "host"
        return "dotted"
    if underscore and _SNAKE.fullmatch(word) and any(c.isalpha() for c in word):
        return "identifier"
    if word.lower() != word and _CAMEL.fullmatch(word):
        return "identifier"
    if "-" in word and _KEBAB.fullmatch(word) and any(c.isalpha() for c in word):
        if in_code or any(c.isdigit() for c in word):
            return "name"
    return None


_Found = tuple[str, "TokenKind", "TokenSource"]


# What _chunk_tokens() found in each chunk lately, for prose ([False]) and for code ([True]).
# The same chunks come back all through a corpus: an env var, a flag, a service name, and the
# chunks that hold no token (2024-05-01, p99, #ops-docs): only 24-36% of the chunks of
# argo-cd-docs, tldr-common and rook-docs are distinct. Emptied when full, so memory stays
# bounded (~2 MB); what a chunk gives does not depend on what came before, so neither does a token.
_KNOWN: tuple[dict[str, tuple[tuple[str, TokenKind], ...]], dict[str, tuple[tuple[str, TokenKind], ...]]] = ({}, {})
KNOWN_CHUNKS = 1 << 13  # per dict


def _scan(text: str, source: TokenSource, out: list[_Found]) -> None:
    """Append (token, kind, source) for each exact token in `text`."""
    in_code = source != "text"
    known = _KNOWN[in_code]
    chunks = _CHUNK if in_code else _PROSE_CHUNK
    for chunk in chunks.findall(text):  # (two characters at least: a one-character chunk holds no token)
        found = known.get(chunk)
        if found is None:
            if len(known) >= KNOWN_CHUNKS:
                known.clear()
            found = known[chunk] = _chunk_tokens(chunk, in_code)
        for token, kind in found:
            out.append((token, kind, source))


def _chunk_tokens(chunk: str, in_code: bool) -> tuple[tuple[str, TokenKind], ...]:
    """(token, kind) of each exact token in one chunk, in the order _scan() adds them."""
    word = chunk.rstrip(".,:;!?")
    if word.isalpha() and (word.islower() or word.istitle()):
        return ()  # a plain word _CHUNK let through (non-ASCII letters): no kind fits
    source: TokenSource = "code" if in_code else "text"  # (in_code is all a source changes)
    out: list[_Found] = []
    if "://" in chunk:
        m = _URL.search(chunk)
        if m:
            if m.start() > 0:  # NAME=postgres://...: the name counts too
                _scan(chunk[: m.start()].replace("=", " "), source, out)
            url = _strip(m.group())
            if "://" in url:  # not "http://-", which the strip leaves "http"
                out.append((url, "url", source))
                host = url.split("://", 1)[1].split("/", 1)[0].split("@")[-1].split(":")[0]
                if "." in host:
                    out.append((host, "host", source))
        return tuple([(token, kind) for token, kind, _ in out])
    if chunk.startswith("--"):
        m = _FLAG.match(chunk)
        if m:
            out.append((m.group().rstrip("-_"), "cli_flag", source))
            rest = chunk[m.end():]
            if rest.startswith("="):
                _scan(rest[1:], source, out)
        return tuple([(token, kind) for token, kind, _ in out])
    if "/" in chunk:
        word = _strip(chunk)
        if _SLASH_VERSION.fullmatch(word):
            return ((word, "version"),)
        if _PATH.fullmatch(word) and (
            in_code
            or word.startswith(("/", "./", "../", "~/"))
            or word.rsplit(".", 1)[-1].lower() in _FILE_EXT
        ):
            return ((word, "file_path"),)
    found: list[tuple[str, TokenKind]] = []
    if in_code and "=" in chunk:
        pair = _strip(chunk)
        if _PAIR.fullmatch(pair):
            found.append((pair, "name"))
    for m in _WORD.finditer(chunk):
        word = _strip(m.group())
        if len(word) < 2:
            continue
        kind = _classify_word(word, in_code)
        if kind:
            found.append((word, kind))
    return tuple(found)


def extract_tokens(pieces: Iterable[tuple[str, str]]) -> list[ExactToken]:
    """Exact tokens from (source, text) pieces; a code span ("code" or "code:definition")
    is also kept verbatim.

    The result is de-duplicated on (token, kind), keeping the strongest source, and sorted.
    """
    best = strongest_sources(pieces)
    return [ExactToken(token, kind, best[token, kind]) for token, kind in sorted(best)]


def strongest_sources(pieces: Iterable[tuple[str, str]]) -> dict[tuple[str, TokenKind], TokenSource]:
    """extract_tokens() as {(token, kind): strongest source}, unsorted: what the splitter merges
    a long section's batches of pieces in, before it makes the section's ExactTokens once."""
    found: list[_Found] = []
    # Pieces of one source are scanned as one text: a chunk never spans a line break, so the
    # tokens are the same, for one _scan() call per source instead of one per paragraph.
    joined: dict[str, list[str]] = {}
    for source, text in pieces:
        if source.startswith("code"):  # a code span: "code", or "code:definition" (the place it is in)
            where = _SPAN_SOURCE.get(source) or cast("TokenSource", source.partition(":")[2] or "code")
            span = text.strip()
            before = len(found)
            _scan(span, where, found)
            if 2 <= len(span) <= 64:
                for i in range(before, len(found)):
                    if found[i][0] == span:
                        break
                else:
                    found.append((span, "code", where))
        else:
            joined.setdefault(source, []).append(text)
    for source, texts in joined.items():
        _scan(texts[0] if len(texts) == 1 else "\n".join(texts), cast("TokenSource", source), found)
    best: dict[tuple[str, TokenKind], TokenSource] = {}
    rank = _RANK
    for token, kind, where in found:  # keep_strongest(), without a tuple a token
        seen = best.get((token, kind))
        if seen is None or rank[where] < rank[seen]:
            best[token, kind] = where
    return best


_SPAN_SOURCE: dict[str, TokenSource] = {"code": "code", "code:definition": "definition", "code:heading": "heading"}


def keep_strongest(best: dict[tuple[str, TokenKind], TokenSource],
                   found: Iterable[tuple[tuple[str, TokenKind], TokenSource]]) -> None:
    """Merge `found` into `best`: each (token, kind) keeps its strongest source (SOURCES order)."""
    for key, where in found:
        seen = best.get(key)
        if seen is None or _RANK[where] < _RANK[seen]:
            best[key] = where
