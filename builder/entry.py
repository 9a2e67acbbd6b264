"""The `mdfts` console script: plain `search`, `show` and `token` calls skip click; the rest is mdfts.cli.

Importing click and building the command tree is ~20-30 ms of a one-shot `mdfts search` that takes
~80 ms. A call this module reads completely (the command, DB, its argument, `--json`, `-k`/
`--limit`, `--neighbors`, `--queries`, `--`) runs mdfts.commands directly, which prints the same
bytes as the click command; anything else (help, `--sql`, a value out of range, a usage error,
another command) goes to click unchanged, so its messages stay click's.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

# command → (options that take a value, flags, positional arguments, highest -k)
_COMMANDS: dict[str, tuple[frozenset[str], frozenset[str], int, int]] = {
    "search": (frozenset({"-k", "--limit", "--queries"}), frozenset({"--json"}), 2, 1000),
    "show": (frozenset(), frozenset({"--json", "--neighbors"}), 2, 0),
    "token": (frozenset({"-k", "--limit"}), frozenset({"--json"}), 2, 10000),
}
_DEFAULT_K = {"search": 10, "token": 20}


def read_args(argv: Sequence[str]) -> tuple[str, list[str], dict[str, Any]] | None:
    """(command, positional arguments, options) when the fast path can run `argv` exactly as
    click would; None for anything it does not read (click handles it)."""
    if not argv or argv[0] not in _COMMANDS:
        return None
    command = argv[0]
    takes_value, flags, most_positional, most_k = _COMMANDS[command]
    positional: list[str] = []
    options: dict[str, Any] = {}
    rest = list(argv[1:])
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            positional.extend(rest)
            break
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg[:2], "", arg[2:])
        if name in flags and not eq and not value:
            options[name] = True
        elif name in takes_value:
            if not eq and not value:
                if not rest:
                    return None
                value = rest.pop(0)
            options["-k" if name == "--limit" else name] = value
        else:
            return None  # -h, --help, --sql, a typo: click's to answer
    if len(positional) > most_positional or len(positional) < 2 - ("--queries" in options):
        return None
    if "--queries" in options and len(positional) == 2:
        return None  # QUERY and --queries: click's usage error
    if most_k:
        k = options.get("-k", str(_DEFAULT_K[command]))
        if not (k.isascii() and k.isdigit()) or not 1 <= int(k) <= most_k:
            return None  # click.IntRange's message ("²" is a digit to isdigit(), not to int())
        options["-k"] = int(k)
    if os.path.isdir(positional[0]):
        return None  # click.Path(dir_okay=False) says so
    queries = options.get("--queries")
    if queries is not None and queries != "-" and not os.path.isfile(queries):
        return None  # click.File's error message
    if queries == "-" and sys.stdin is None:
        return None  # no stdin at all (`<&-`): click's usage error
    return command, positional, options


def _echo(message: str, *, err: bool = False, nl: bool = True) -> None:
    stream = sys.stderr if err else sys.stdout
    stream.write(message + ("\n" if nl else ""))
    stream.flush()


def run(command: str, positional: list[str], options: dict[str, Any]) -> int:
    """Run a call read_args() accepted; the exit code, as mdfts.cli would give it."""
    from pathlib import Path

    from mdfts import commands
    from mdfts.errors import MdftsError

    db = Path(positional[0])
    try:
        if command == "search" and "--queries" in options:
            name = options["--queries"]
            if name == "-":
                stdin = open(sys.stdin.fileno(), "rb", closefd=False)
                commands.search_lines(db, stdin, options["-k"], _echo)
            else:
                with open(name, "rb") as fh:
                    commands.search_lines(db, fh, options["-k"], _echo)
        elif command == "search":
            commands.search(db, positional[1], options["-k"], "--json" in options, _echo)
        elif command == "show":
            commands.show(db, positional[1], "--neighbors" in options, "--json" in options, _echo)
        else:
            commands.token(db, positional[1], options["-k"], "--json" in options, _echo)
    except MdftsError as err:
        _echo(f"Error: {err}", err=True)
        return 1
    except BrokenPipeError:  # `mdfts search ... | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        _echo("\nInterrupted.", err=True)
        return 130
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    """`mdfts ARGS`: the fast path when it can read ARGS, else the click CLI."""
    args = sys.argv[1:] if argv is None else list(argv)
    read = read_args(args)
    if read is None:
        from mdfts.cli import cli

        cli.main(args, prog_name="mdfts")
        return
    code = run(*read)
    if argv is None:  # the console script or `python -m mdfts`: this process ends here
        _end(code)
    sys.exit(code)


def _end(code: int) -> NoReturn:
    """End a lookup process without the interpreter's teardown. Nothing is left to do: every line
    was flushed as it was written, and the index was opened read-only. The teardown (freeing the
    compiled search statement, the connection and every module) was 4-6 ms of a ~55 ms one-shot
    `mdfts search`, measured side by side with and without it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, or the stream closed after one
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
