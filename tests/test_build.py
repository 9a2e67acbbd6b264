"""build_index's stages: each one named, run and timed, and the streaming between them loses nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import mdfts.parse
from mdfts.build import STAGES, BuildStats, StageClock, build_index
from mdfts.sections import split_sections

from conftest import FIXTURE_DOCS, SAMPLE_DOCS, fixture_text, run_cli


def test_every_stage_is_timed_and_the_stages_add_up(tmp_path: Path) -> None:
    started = time.process_time()
    result = build_index([SAMPLE_DOCS], tmp_path / "x.db")
    outside = time.process_time() - started
    stages = result.stages
    assert isinstance(stages, BuildStats) and list(stages.seconds) == list(STAGES)
    for stage in ("discover", "read", "parse", "split", "tokens", "write"):
        assert stages[stage] > 0, stage
    assert stages["reuse"] == 0  # no --previous
    assert set(stages.write_steps) >= {"fts_rebuild", "derive", "meta", "fts_optimize", "vacuum", "replace"}
    assert sum(stages.write_steps.values()) <= stages["write"]
    # One clock, read at each switch: the stages cover the build's CPU time and no more.
    assert 0.8 * outside <= stages.total <= outside


@pytest.mark.parametrize("root", [str, Path], ids=["str", "path"])
def test_one_root_need_not_be_in_a_list(tmp_path: Path, root: type[str] | type[Path]) -> None:
    # A str is a sequence of one-letter paths: build_index("docs", out) said "d: no such file or
    # folder"; a Path was "'PosixPath' object is not iterable".
    one = build_index(root(FIXTURE_DOCS), tmp_path / "one.db")
    listed = build_index([FIXTURE_DOCS], tmp_path / "listed.db")
    assert (one.stats, one.files) == (listed.stats, listed.files) and one.files > 1

def test_reuse_is_its_own_stage(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    build_index([SAMPLE_DOCS], old)
    result = build_index([SAMPLE_DOCS], tmp_path / "new.db", previous=old)
    assert result.reused == result.files > 0
    assert result.stages["reuse"] > 0
    assert result.stages["parse"] == result.stages["tokens"] == 0  # nothing was parsed


def test_a_nested_stage_is_charged_to_itself() -> None:
    clock = StageClock()
    clock.switch("outer")

    def busy(n: int) -> None:
        sum(i * i for i in range(n))

    clock.within("inner", busy)(300_000)
    busy(10)
    clock.switch("")
    assert clock.seconds["inner"] > clock.seconds["outer"] > 0
    assert clock.current == ""


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURE_DOCS.glob("*.md")))
def test_blocks_in_batches_split_as_one_at_a_time(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parser hands blocks to the splitter a few at a time; one at a time gives the same document."""
    text = fixture_text(name)
    batched = split_sections(name, text)
    monkeypatch.setattr(mdfts.parse, "SINK_BATCH", 1)
    assert split_sections(name, text) == batched


def test_build_json_reports_the_stages(tmp_path: Path) -> None:
    result = run_cli(["build", FIXTURE_DOCS, "-o", tmp_path / "x.db", "--json"])
    seconds = json.loads(result.stdout)["cpu_seconds"]
    assert set(STAGES) <= set(seconds) and "vacuum" in seconds["write_steps"]
