"""The kazoo side of the session benchmark (conformance/src/bin/session_bench.rs).

Usage:

    python3 kazoo_bench.py CONNECT DATA_PATH CD_BASE WARMUP_S MEASURE_S REPS SPEC...

SPEC is get:WINDOW (get_async of DATA_PATH) or cd:WINDOW (create_async + delete_async pairs
of nodes under CD_BASE). WINDOW requests are kept in flight with a semaphore: the main
thread takes a permit before each call, the completion callback gives it back. Each measured
repetition prints

    RESULT SPEC REP OPS NANOS CPU_NANOS ERRORS

with CPU_NANOS the whole process's CPU time (time.process_time_ns: every thread, including
kazoo's connection and callback threads).
"""

import threading
import time

from kazoo_peers import arguments, say

DATA_LEN = 100
CD_PATHS = 1024


class Counters:
    def __init__(self):
        self.done = 0
        self.errors = 0


def run(zk, kind, window, data_path, cd_paths, payload, warmup, measure, reps, spec):
    permits = threading.Semaphore(window)
    c = Counters()

    # Callbacks run on kazoo's single callback thread, so the counters need no lock.
    def got(result):
        if result.exception is not None or len(result.value[0]) != DATA_LEN:
            c.errors += 1
        c.done += 1
        permits.release()

    def created(result):
        if result.exception is not None:
            c.errors += 1
        permits.release()

    def deleted(result):
        if result.exception is not None:
            c.errors += 1
        c.done += 1
        permits.release()

    nxt = 0
    deadline = time.monotonic_ns() + int(warmup * 1e9)
    for rep in range(-1, reps):
        ops0, err0 = c.done, c.errors
        cpu0 = time.process_time_ns()
        t0 = time.monotonic_ns()
        if rep >= 0:
            deadline = t0 + int(measure * 1e9)
        while time.monotonic_ns() < deadline:
            if kind == "get":
                permits.acquire()
                zk.get_async(data_path).rawlink(got)
            else:
                # Requests of one session run in order, so a pair needs no waiting inside.
                path = cd_paths[nxt]
                nxt = (nxt + 1) % len(cd_paths)
                permits.acquire()
                zk.create_async(path, payload).rawlink(created)
                permits.acquire()
                zk.delete_async(path).rawlink(deleted)
        t1 = time.monotonic_ns()
        cpu1 = time.process_time_ns()
        ops1, err1 = c.done, c.errors
        if rep >= 0:
            say(f"RESULT {spec} {rep} {ops1 - ops0} {t1 - t0} {cpu1 - cpu0} {err1 - err0}")
    # Wait for everything in flight before the next workload.
    for _ in range(window):
        permits.acquire()


def main():
    args = arguments(7, __doc__)
    connect, data_path, cd_base = args[0:3]
    warmup, measure = float(args[3]), float(args[4])
    reps = int(args[5])
    specs = args[6:]

    from kazoo.client import KazooClient

    zk = KazooClient(hosts=connect, timeout=30.0)
    zk.start(timeout=30)
    payload = bytes(DATA_LEN)
    cd_paths = [f"{cd_base}/kazoo-{i}" for i in range(CD_PATHS)]
    for spec in specs:
        kind, window = spec.split(":")
        run(zk, kind, int(window), data_path, cd_paths, payload, warmup, measure, reps, spec)
    zk.stop()
    zk.close()


if __name__ == "__main__":
    main()
