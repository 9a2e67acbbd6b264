"""Map a function over items in worker processes, results in input order, a bounded number in flight."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many items a pool costs more than it saves (starting workers is ~20-50 ms).
MIN_ITEMS = 64


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells, else all)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_workers(items: int) -> int:
    """Worker processes for `items` files: MDFTS_WORKERS when set (1 means none), else one per
    core up to 4, and none for a small build or a one-core machine."""
    env = os.environ.get("MDFTS_WORKERS", "").strip()
    if env:
        if not env.isdigit() or int(env) < 1:
            from mdfts.errors import MdftsError

            raise MdftsError(f"MDFTS_WORKERS={env!r}: give a whole number, 1 for no worker processes")
        return int(env)
    cores = available_cores()
    return 1 if cores < 2 or items < MIN_ITEMS else min(cores, 4)


def ordered_map(fn: Callable[[T], R], items: Iterable[T], workers: int, chunksize: int = 8
                ) -> Generator[R, None, None]:
    """`map(fn, items)`, run by `workers` processes when it is more than 1.

    Results come back in input order. At most `4 * workers * chunksize` items are handed out
    ahead of the consumer, so memory stays bounded when the consumer (writing rows) is slower
    than the workers. `fn` must be a module-level function; its arguments and results are pickled.
    Leaving the loop early (an error) stops the workers: close the iterator then (a `with
    contextlib.closing(...)`), or the garbage collector does it at a time of its choosing.
    """
    if workers <= 1:
        yield from map(fn, items)
        return
    # fork where there is one: the workers start with the parent's modules already imported.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    window = 4 * workers * chunksize
    gate = threading.Semaphore(window)
    stop = threading.Event()

    def feed() -> Iterator[T]:  # runs in the pool's task-feeding thread
        for item in items:
            gate.acquire()
            if stop.is_set():
                return
            yield item

    pool = multiprocessing.get_context(method).Pool(workers, initializer=_worker_signals)
    done = False
    try:
        for result in pool.imap(fn, feed(), chunksize):
            gate.release()
            yield result
        done = True
    finally:
        if done:
            pool.close()
            pool.join()
        else:
            stop.set()
            for _ in range(window):  # wake the feeder if it waits, so terminate() can join it
                gate.release()
            pool.terminate()  # joins the workers, and may run in one of the pool's threads


def _worker_signals() -> None:
    # A forked worker inherits the parent's handlers (the CLI turns SIGTERM into
    # KeyboardInterrupt): terminate() must end it at once, and Ctrl-C is the parent's to handle.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Aside:
    """One call of a module-level function, run in a worker process while the caller goes on;
    `result()` waits for it. Run in this process instead (at `result()`) when `workers` is 1
    (default_workers() says so: one core, MDFTS_WORKERS=1, a small job) or the worker cannot be
    started or dies: the answer is the same, only later."""

    def __init__(self, fn: Callable[..., object], *args: object, workers: int) -> None:
        from concurrent.futures import Future, ProcessPoolExecutor

        self.fn, self.args = fn, args
        self.executor: ProcessPoolExecutor | None = None
        self.future: Future[object] | None = None
        if workers < 2:
            return
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        try:
            self.executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(method),
                                                initializer=_worker_signals)
            self.future = self.executor.submit(fn, *args)
        except (OSError, RuntimeError):  # no process could be started: run it here
            self.close()

    def result(self) -> object:
        """The call's return value (its exception raised here, as a direct call would)."""
        from concurrent.futures.process import BrokenProcessPool

        try:
            if self.future is not None:
                try:
                    return self.future.result()
                except BrokenProcessPool:  # the worker died (killed, out of memory): run it here
                    pass
            return self.fn(*self.args)
        finally:
            self.close()

    def close(self) -> None:
        """Wait for the worker and let it go (a no-op once done)."""
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None
