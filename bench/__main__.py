"""`python -m bench COMMAND`: one click group over the benchmark, stress and corpus-check scripts."""

from __future__ import annotations

import click

from bench import (
    agents,
    alert_queries,
    check_corpus,
    devsets,
    incremental,
    mixed,
    pages,
    renamed,
    samerows,
    selfcheck,
    signals,
    speed,
    stress,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """Measure and check mdfts from a checkout (none of this is installed with the package)."""


cli.add_command(speed.main, "speed")
cli.add_command(stress.main, "stress")
cli.add_command(pages.main, "pages")
cli.add_command(incremental.main, "incremental")
cli.add_command(check_corpus.main, "check-corpus")
cli.add_command(alert_queries.main, "alert-queries")
cli.add_command(agents.main, "agents")
cli.add_command(devsets.main, "devsets")
cli.add_command(selfcheck.main, "selfcheck")
cli.add_command(mixed.main, "mixed")
cli.add_command(signals.main, "signals")
cli.add_command(samerows.main, "samerows")
cli.add_command(renamed.main, "renamed")

if __name__ == "__main__":
    cli()
