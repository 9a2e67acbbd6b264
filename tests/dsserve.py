"""`mdfts serve` on 127.0.0.1 for tests: start it on a free port, yield its URL, always stop it."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def mdfts_serve(db: Path, *args: str, log: Path | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run `mdfts serve DB ARGS --port 0`; yield (base URL, process) and stop it on the way out.

    :param log: the file its stderr goes to; default: one beside `db`
    """
    log = log or db.with_name(f"{db.stem}-serve-{time.monotonic_ns()}.log")
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "mdfts", "serve", str(db), *args, "--port", "0"],
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", log.read_text())):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"mdfts serve did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield found.group(1), proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
