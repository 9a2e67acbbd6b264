"""Write docs/cli.md, the CLI reference, from `mdfts --help` and each command's `--help`.

    python tools/cli_docs.py [OUT]     (`make cli-docs`; OUT defaults to docs/cli.md)

tests/test_cli_docs.py regenerates it and fails when the committed file differs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.testing import CliRunner

from mdfts.cli import cli

OUT = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WIDTH = 100  # help text is wrapped to this, whatever the terminal


def _help(args: list[str]) -> str:
    result = CliRunner().invoke(cli, [*args, "--help"], prog_name="mdfts", terminal_width=WIDTH)
    assert result.exit_code == 0, result.output
    return result.stdout.rstrip() + "\n"


def _commands(group: click.Group, path: list[str]) -> list[tuple[list[str], click.Command]]:
    """Every visible command under `group`, depth first, in the order `--help` lists them."""
    ctx = click.Context(group, info_name="mdfts")
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        found.append(([*path, name], command))
        if isinstance(command, click.Group):
            found += _commands(command, [*path, name])
    return found


def render() -> str:
    """The text of docs/cli.md for the CLI as it is now."""
    commands = _commands(cli, [])
    lines = [
        "# CLI reference",
        "",
        "Generated from `--help` by `make cli-docs` (tools/cli_docs.py): edit the commands' docstrings",
        "and options, not this file.",
        "",
        *(f"- [`mdfts {' '.join(path)}`](#mdfts-{'-'.join(path)}): {command.get_short_help_str(200)}"
          for path, command in commands),
        "",
        "```",
        _help([]).rstrip(),
        "```",
    ]
    for path, _ in commands:
        lines += ["", f"## mdfts {' '.join(path)}", "", "```", _help(path).rstrip(), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    out.write_text(render(), encoding="utf-8")
    print(f"wrote {out}")
