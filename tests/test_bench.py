"""`make bench` keeps working: a --quick run on a tiny corpus, and the helpers it rests on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mdfts.bench import md_table, percentile, replicate

FIXTURES = Path(__file__).parent / "fixtures" / "bench"


def test_quick_run_writes_every_section(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    proc = subprocess.run(
        [sys.executable, "-m", "mdfts.bench", "--quick", str(FIXTURES), "--out", str(out),
         "--sizes", "60", "--queries", "10", "--keep", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = out.read_text(encoding="utf-8")
    for title in ("Machine", "Build", "Build stages", "Size", "Memory", "Query", "Incremental", "Targets (issue #7)"):
        assert f"\n## {title}\n" in report
    assert "| SQLite | " in report
    for method in ("search.sql (mdfts)", "bare bm25 MATCH", "linear scan", "rank-bm25"):
        assert method in report
    build_row = next(line for line in report.splitlines() if line.startswith("| bench |"))
    assert build_row.split("|")[2].strip() == "3"  # files
    assert "## Targets (issue #7)" in proc.stdout  # the report is printed too


def test_replicate_prefixes_copies_and_stops_at_sections(tmp_path: Path) -> None:
    whole = replicate(FIXTURES, tmp_path / "a", copies=2)
    assert sorted(p.relative_to(whole).as_posix() for p in whole.rglob("*.md")) == [
        "r0000/ledger.md", "r0000/onboarding.md", "r0000/payments.md",
        "r0001/ledger.md", "r0001/onboarding.md", "r0001/payments.md",
    ]
    part = replicate(FIXTURES, tmp_path / "b", until_sections=9,
                     sections_of={"ledger.md": 4, "onboarding.md": 2, "payments.md": 4})
    assert sorted(p.relative_to(part).as_posix() for p in part.rglob("*.md")) == [
        "r0000/ledger.md", "r0000/onboarding.md", "r0000/payments.md",
    ]


@pytest.mark.parametrize(("p", "expected"), [(50, 5.0), (95, 10.0), (0, 1.0), (100, 10.0)])
def test_percentile_is_nearest_rank(p: float, expected: float) -> None:
    assert percentile([float(x) for x in range(10, 0, -1)], p) == expected


def test_md_table_aligns_numbers_right() -> None:
    assert md_table(["name", "ms"], [["a", 1.5], ["b", 12.25]]) == (
        "| name | ms |\n| --- | ---: |\n| a | 1.50 |\n| b | 12.25 |"
    )
