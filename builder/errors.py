"""The errors mdfts raises for problems a user can fix; the CLI prints them as one line."""

from __future__ import annotations


class MdftsError(Exception):
    """A problem the user can fix: printed as `Error: <message>`, exit code 1."""


def display(path: str) -> str:
    """A path fit for a one-line message: newlines, control characters and lone surrogates
    (undecodable bytes in a file name) escaped as in Python source; other characters kept."""
    return "".join(c if c.isprintable() or c == " " else ascii(c)[1:-1] for c in path)


def brief(text: str, n: int) -> str:
    """`text`, or its first `n` characters and how long it was: what a message repeats of a
    long value."""
    return text if len(text) <= n else f"{text[:n]}… ({len(text):,} characters)"


class SourceError(MdftsError):
    """A source file cannot be read or parsed; `path` and `line` say where."""

    def __init__(self, path: str, line: int | None, what: str) -> None:
        self.path, self.line, self.what = path, line, what
        where = f"{display(path)}:{line}" if line else display(path)
        super().__init__(f"{where}: {what}")


class IndexVersionError(MdftsError):
    """The database is not an mdfts index, or its schema is one this mdfts cannot read."""


class QueryError(MdftsError):
    """A named query is unknown, or its parameters are wrong."""


class ThresholdError(MdftsError):
    """A result is worse than the bar the user set (`check --fail-on`, `eval --min-hit1`)."""
