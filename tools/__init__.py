"""Maintenance scripts for a checkout of mdfts (not installed with the package)."""
