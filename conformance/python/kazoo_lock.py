"""kazoo's Lock, driven by conformance/tests/recipes_interop.rs to show that zk-recipes' Mutex
and kazoo's Lock exclude each other on one lock path.

kazoo only counts children matching its own names as contenders; it is given
extra_lock_patterns=["-lock-"] so that it also counts Curator-format nodes, which is what
zk-recipes writes. Usage:

    python3 kazoo_lock.py hold CONNECT LOCK_PATH HOLD_MS
        prints READY once connected, ACQUIRED once it holds the lock, then holds it until a
        line "release" arrives on stdin (or HOLD_MS pass), releases, prints RELEASED.

    python3 kazoo_lock.py loop CONNECT LOCK_PATH FLAG_PATH ROUNDS
        ROUNDS times: acquire; create the ephemeral FLAG_PATH (NodeExists means two holders:
        prints VIOLATION); hold a few ms; delete it; release. Prints DONE at the end.

Exits with status 3 and an ERROR line when kazoo is missing or too old for
extra_lock_patterns (added in kazoo 2.7.1).
"""

import inspect
import sys
import threading
import time

from kazoo_peers import arguments, require_kazoo, say


def main():
    args = arguments(4, __doc__)
    require_kazoo()
    import kazoo
    from kazoo.client import KazooClient
    from kazoo.exceptions import NodeExistsError
    from kazoo.recipe.lock import Lock

    if "extra_lock_patterns" not in inspect.signature(Lock.__init__).parameters:
        say("ERROR kazoo %s has no extra_lock_patterns (needs 2.7.1 or later)"
            % getattr(kazoo, "__version__", "?"))
        sys.exit(3)

    mode, connect, path = args[0:3]
    client = KazooClient(hosts=connect, timeout=30.0)
    client.start(timeout=60)
    lock = client.Lock(path, "kazoo", extra_lock_patterns=["-lock-"])
    say("READY")
    if mode == "hold":
        hold_ms = int(args[3])
        lock.acquire()
        say("ACQUIRED")
        released = threading.Event()

        def read_stdin():
            for line in sys.stdin:
                if line.strip() == "release":
                    break
            released.set()

        threading.Thread(target=read_stdin, daemon=True).start()
        released.wait(hold_ms / 1000.0)
        lock.release()
        say("RELEASED")
    else:
        flag, rounds = args[3], int(args[4])
        for i in range(rounds):
            lock.acquire()
            try:
                client.create(flag, ephemeral=True)
            except NodeExistsError:
                say("VIOLATION round %d" % i)
                lock.release()
                continue
            time.sleep(0.003)
            client.delete(flag)
            lock.release()
        say("DONE")
    client.stop()
    client.close()


if __name__ == "__main__":
    main()
