"""`python -m mdfts` runs the command-line interface (the same entry as the `mdfts` script)."""

from mdfts.entry import main

if __name__ == "__main__":
    main()
