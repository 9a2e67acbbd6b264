"""`python -m mdfts` runs the command-line interface."""

from mdfts.cli import cli

if __name__ == "__main__":
    cli(prog_name="mdfts")
