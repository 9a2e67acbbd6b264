"""docs/cli.md is the CLI reference generated from --help: it must match the CLI as it is."""

from __future__ import annotations

import click

from mdfts.cli import cli
from tools.cli_docs import OUT, render

from conftest import REPO

REGENERATE = "docs/cli.md is out of date with the CLI: run `make cli-docs` and commit docs/cli.md"


def test_cli_reference_matches_the_help_text() -> None:
    assert OUT == REPO / "docs" / "cli.md"
    assert OUT.read_text(encoding="utf-8") == render(), REGENERATE


def test_cli_reference_lists_every_command() -> None:
    text = render()
    names = [name for name, command in cli.commands.items() if not command.hidden]
    assert len(names) >= 10
    for name in names:
        assert f"\n## mdfts {name}\n\n```\nUsage: mdfts {name} [OPTIONS]" in text, name
        assert f"- [`mdfts {name}`](#mdfts-{name}): " in text, name


def test_a_changed_command_changes_the_reference() -> None:
    before = render()

    @cli.command(name="zz-probe")
    def probe() -> None:
        """A command added without regenerating."""

    try:
        after = render()
    finally:
        del cli.commands["zz-probe"]
    assert before != after and "## mdfts zz-probe" in after and render() == before
    assert isinstance(probe, click.Command)
