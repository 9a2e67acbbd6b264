"""The shipped query files (plain .sql, one statement each); this file only makes them package data."""
