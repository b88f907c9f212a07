"""kazoo's Lock under load, for the recipes benchmark (conformance/src/bin/recipes_bench.rs),
which runs it once for all its workloads:

    python3 kazoo_lock_bench.py CONNECT BASE WARMUP_S SECS lock:N ...

lock:N runs N contenders on BASE/lock-N, one KazooClient (session) and one thread each, all
in this process; kazoo's default node names (it runs alone on its path). Each loops
acquire, (empty critical section), release. After WARMUP_S seconds the acquisitions of SECS
seconds are counted.

Every time stamp is time.monotonic_ns(), one clock for all threads. Output lines:

    LOCK N ACQUISITIONS ELAPSED_NS VIOLATIONS ERRORS TOTAL REQUESTS
                          ACQUISITIONS in the measured SECS, TOTAL from the first to the
                          last; REQUESTS the server received from before the first connect
                          to after the last close (its srvr "Received:"), -1 if unknown
    HANDOFF N NS NS ...   one per measured acquisition that followed a release: the time from
                          the start of the previous holder's release() to the return of this
                          acquire() (with N=1, the same thread's)
    ERROR text

Exits with status 3 and an ERROR line when kazoo is missing.
"""

import socket
import threading
import time

from kazoo_peers import arguments, require_kazoo, say


def server_received(connect):
    """The server's srvr "Received:" count (the first server of CONNECT), -1 if unknown."""
    host, _, port = connect.split(",")[0].rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"srvr")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        for line in data.decode("ascii", "replace").splitlines():
            if line.startswith("Received:"):
                return int(line[len("Received:"):].strip())
    except (OSError, ValueError):
        pass
    return -1


class Shared:
    def __init__(self):
        self.stop = False
        self.measuring = False
        self.inside = False
        self.last_release = None
        self.guard = threading.Lock()
        self.acquisitions = 0
        self.total = 0
        self.violations = 0
        self.errors = 0
        self.samples = []


def contender(lock, shared):
    samples = []
    acquired = 0
    total = 0
    while not shared.stop:
        try:
            lock.acquire()
        except Exception:  # noqa: BLE001 - counted, the run goes on
            shared.errors += 1
            continue
        now = time.monotonic_ns()
        previous = shared.last_release
        total += 1
        with shared.guard:
            if shared.inside:
                shared.violations += 1
            shared.inside = True
        if shared.measuring:
            acquired += 1
            if previous is not None:
                samples.append(now - previous)
        shared.inside = False
        shared.last_release = time.monotonic_ns()
        try:
            lock.release()
        except Exception:  # noqa: BLE001
            shared.errors += 1
    with shared.guard:
        shared.acquisitions += acquired
        shared.total += total
        shared.samples.extend(samples)


def run_lock(KazooClient, connect, path, n, warmup, secs):
    received = server_received(connect)
    clients = []
    for _ in range(n):
        c = KazooClient(hosts=connect, timeout=30.0)
        c.start(timeout=60)
        clients.append(c)
    shared = Shared()
    threads = [
        threading.Thread(target=contender, args=(c.Lock(path, "bench"), shared), daemon=True)
        for c in clients
    ]
    for t in threads:
        t.start()
    time.sleep(warmup)
    t0 = time.monotonic_ns()
    shared.measuring = True
    time.sleep(secs)
    shared.measuring = False
    elapsed = time.monotonic_ns() - t0
    shared.stop = True
    for t in threads:
        t.join(30)
    for c in clients:
        c.stop()
        c.close()
    after = server_received(connect)
    requests = -1 if received < 0 or after < 0 else after - received
    say("LOCK %d %d %d %d %d %d %d" % (n, shared.acquisitions, elapsed, shared.violations,
                                      shared.errors, shared.total, requests))
    say("HANDOFF %d %s" % (n, " ".join(str(s) for s in shared.samples)))


def main():
    args = arguments(5, __doc__)
    require_kazoo()
    from kazoo.client import KazooClient

    connect, base = args[0], args[1]
    warmup, secs = float(args[2]), float(args[3])
    for spec in args[4:]:
        kind, _, n = spec.partition(":")
        try:
            if kind != "lock":
                raise ValueError("unknown workload")
            run_lock(KazooClient, connect, "%s/lock-%s" % (base, n), int(n), warmup, secs)
        except Exception as e:  # noqa: BLE001 - reported, the next workload runs
            say("ERROR %s: %r" % (spec, e))
    say("DONE")


if __name__ == "__main__":
    main()
