"""Benchmarks, stress runs and corpus checks for a checkout of mdfts; not part of the package.

Run from the repository root: `python -m bench --help` (`make bench`, `make stress`, `make eval`).
"""
