"""Worker processes: the same results in the same order, and the same index, as one process."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mdfts.build import build_index
from mdfts.errors import MdftsError
from mdfts.workers import Aside, default_workers, ordered_map

from conftest import FIXTURE_DOCS, SAMPLE_DOCS


def _square(x: int) -> int:
    return x * x


def _fail_on_seven(x: int) -> int:
    if x == 7:
        raise ValueError("seven")
    return x


def _pid_of(parent: int) -> int:
    return os.getpid()


def _die_in_a_worker(parent: int) -> str:
    if os.getpid() != parent:
        os._exit(3)  # as a worker killed by the OOM killer would end
    return "here"


def _raise(_: int) -> int:
    raise ValueError("aside")


def test_aside_runs_beside_the_caller() -> None:
    assert Aside(_pid_of, os.getpid(), workers=2).result() != os.getpid()


def test_aside_runs_here_with_one_worker() -> None:
    aside = Aside(_pid_of, os.getpid(), workers=1)
    assert aside.executor is None and aside.result() == os.getpid()


def test_aside_runs_here_when_its_worker_dies() -> None:
    assert Aside(_die_in_a_worker, os.getpid(), workers=2).result() == "here"


def test_an_error_aside_reaches_the_caller() -> None:
    aside = Aside(_raise, 0, workers=2)
    with pytest.raises(ValueError, match="aside"):
        aside.result()
    assert aside.executor is None  # the worker was let go


def test_ordered_map_keeps_the_input_order() -> None:
    assert list(ordered_map(_square, range(500), workers=2, chunksize=3)) == [x * x for x in range(500)]


def test_an_error_in_a_worker_reaches_the_caller() -> None:
    with pytest.raises(ValueError, match="seven"):
        list(ordered_map(_fail_on_seven, range(100), workers=2, chunksize=1))


def test_leaving_early_stops_the_workers() -> None:
    results = ordered_map(_square, range(100_000), workers=2, chunksize=1)
    assert [next(results) for _ in range(3)] == [0, 1, 4]
    results.close()  # must return: the feeder thread is waiting on the window


@pytest.mark.parametrize(("env", "items", "expected"), [("1", 1000, 1), ("3", 5, 3)])
def test_mdfts_workers_sets_the_number(monkeypatch: pytest.MonkeyPatch, env: str, items: int, expected: int) -> None:
    monkeypatch.setenv("MDFTS_WORKERS", env)
    assert default_workers(items) == expected


def test_a_bad_mdfts_workers_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDFTS_WORKERS", "two")
    with pytest.raises(MdftsError, match="MDFTS_WORKERS='two': give a whole number"):
        default_workers(100)


@pytest.fixture(scope="module")
def many_docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture docs and the sample, four copies each under prefixes: ~200 files."""
    root = tmp_path_factory.mktemp("many") / "docs"
    for i in range(4):
        shutil.copytree(FIXTURE_DOCS, root / f"f{i}")
        shutil.copytree(SAMPLE_DOCS, root / f"s{i}")
    return root


@pytest.mark.integration  # worker processes: seconds each
def test_workers_write_the_same_bytes(many_docs: Path, tmp_path: Path) -> None:
    one = build_index([many_docs], tmp_path / "one.db", workers=1)
    three = build_index([many_docs], tmp_path / "three.db", workers=3)
    assert one.stats.sections > 500
    assert (tmp_path / "one.db").read_bytes() == (tmp_path / "three.db").read_bytes()
    assert (one.files, one.stats.sections, one.stats.tokens) == (three.files, three.stats.sections, three.stats.tokens)


@pytest.mark.integration  # worker processes: seconds each
def test_workers_skip_and_fail_like_one_process(many_docs: Path, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(many_docs, docs)
    (docs / "s2" / "bad.md").write_bytes(b"# ok\n\xff\n")
    warned: dict[int, list[str]] = {1: [], 2: []}
    for n in (1, 2):
        result = build_index([docs], tmp_path / f"skip{n}.db", on_error="skip", workers=n, warn=warned[n].append)
        assert result.skipped == ["s2/bad.md"]
    assert warned[1] == warned[2] == ["s2/bad.md:2: not valid UTF-8; skipped"]
    assert (tmp_path / "skip1.db").read_bytes() == (tmp_path / "skip2.db").read_bytes()
    for n in (1, 2):
        with pytest.raises(MdftsError, match=r"^s2/bad.md:2: not valid UTF-8$"):
            build_index([docs], tmp_path / f"fail{n}.db", workers=n)
        assert not (tmp_path / f"fail{n}.db").exists()
        assert not list(tmp_path.glob(f".fail{n}.db.*"))
