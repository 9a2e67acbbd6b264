"""queries/*.sql ship with the package: found from the editable install and from a built wheel."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import FIXTURE_DOCS, QUERIES_DIR, REPO

pytestmark = pytest.mark.packaging

SEARCH_SQL = (QUERIES_DIR / "search.sql").read_text(encoding="utf-8").strip() + "\n"


def _run(python: Path | str, *args: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    out = subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _build_and_query(python: Path | str, cwd: Path) -> None:
    _run(python, "-m", "mdfts", "build", str(FIXTURE_DOCS), "-o", "x.db", "-q", cwd=cwd)
    assert _run(python, "-m", "mdfts", "query", "x.db", "--sql", "search", cwd=cwd) == SEARCH_SQL
    assert "services/payments.md" in _run(python, "-m", "mdfts", "search", "x.db", "payments rollback", cwd=cwd)


def test_editable_install_finds_the_queries(tmp_path: Path) -> None:
    where = _run(sys.executable, "-c", "import mdfts, mdfts.sql; print(mdfts.__file__); print(mdfts.sql.__file__)",
                 cwd=tmp_path).split()
    assert where == [str(REPO / "builder" / "__init__.py"), str(REPO / "queries" / "__init__.py")]
    _build_and_query(sys.executable, tmp_path)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the source, so the checkout gets no build/ or egg-info.
    bench/ is copied too: the wheel must leave it out by configuration, not by absence."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    for folder in ("builder", "queries", "bench"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src), cwd=src)
    [whl] = out.glob("mdfts-*.whl")
    return whl


def test_wheel_contents(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"mdfts"}  # no top-level `builder` or `queries` package
    assert {f"mdfts/sql/{p.name}" for p in QUERIES_DIR.glob("*.sql")} <= set(names)
    assert {"mdfts/schema.sql", "mdfts/derive.sql", "mdfts/py.typed", "mdfts/__main__.py"} <= set(names)
    # The licence the metadata names, as text: Apache-2.0 asks that a copy go with the work.
    [licence] = [n for n in names if n.endswith((".dist-info/LICENSE", ".dist-info/licenses/LICENSE"))]
    assert b"Apache License" in zipfile.ZipFile(wheel).read(licence)


def test_wheel_install_finds_the_queries(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    target = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=tmp_path).strip())
    _run(sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel), cwd=tmp_path)
    # Dependencies come from this environment, appended after the fresh venv's own packages;
    # a plain path in a .pth file does not run this environment's editable-install hook.
    (target / "zz_deps.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    where = _run(python, "-c", "import mdfts; print(mdfts.__file__)", cwd=tmp_path).strip()
    assert where == str(target / "mdfts" / "__init__.py")
    _build_and_query(python, tmp_path)
    # The console script works too.
    assert _run(env_dir / "bin" / "mdfts", "query", "x.db", "--sql", "search", cwd=tmp_path) == SEARCH_SQL
    # What plain tools show: the installed files hold the package and no bench or stress script.
    shown = _run(sys.executable, "-m", "pip", "--python", str(python), "show", "-f", "mdfts", cwd=tmp_path)
    files = shown.split("\nFiles:\n", 1)[1].split()
    assert "mdfts/__init__.py" in files and "mdfts/sql/search.sql" in files
    assert [f for f in files if "bench" in f or "stress" in f] == []


def test_sdist_holds_the_package_and_no_tests(tmp_path: Path) -> None:
    """The sdist builds the same wheel (every module, SQL file, template and stylesheet) and leaves
    out tests/ and bench/; setuptools adds tests/test*.py by default, without conftest.py or fixtures."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "MANIFEST.in", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, src / name)
    for folder in ("builder", "queries", "bench", "tests"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _run(sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path / "dist"), str(src), cwd=src)
    [sdist] = (tmp_path / "dist").glob("mdfts-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    package = {p.relative_to(REPO).as_posix() for folder in ("builder", "queries")
               for p in (REPO / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert package | {"LICENSE"} <= names
    assert [n for n in names if n.split("/", 1)[0] in ("tests", "bench")] == []
