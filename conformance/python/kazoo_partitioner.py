"""kazoo's SetPartitioner, driven by conformance/tests/recipes_partitioner_interop.rs to show
that zk-recipes' SetPartitioner and kazoo's split one set between them on one path. Usage:

    python3 kazoo_partitioner.py CONNECT PATH IDENTIFIER TIME_BOUNDARY_S ITEMS

ITEMS is comma-separated. Prints READY once in the party, then ACQUIRED <items,...> each
time it acquires its partition and RELEASE each time it is asked to release (it calls
release_set at once). A line "finish" on stdin (or its end) calls finish(); prints FINISHED.
"""

import sys
import threading

from kazoo_peers import arguments, require_kazoo, say


def main():
    connect, path, identifier, boundary, items = arguments(5, __doc__)
    require_kazoo()
    from kazoo.client import KazooClient

    client = KazooClient(hosts=connect, timeout=30.0)
    client.start(timeout=60)
    changed = threading.Event()
    partitioner = client.SetPartitioner(
        path=path,
        set=items.split(","),
        identifier=identifier,
        time_boundary=float(boundary),
        state_change_event=changed,
    )
    say("READY")
    finish = threading.Event()

    def read_stdin():
        for line in sys.stdin:
            if line.strip() == "finish":
                break
        finish.set()
        changed.set()

    threading.Thread(target=read_stdin, daemon=True).start()
    seen = None
    while not finish.is_set():
        changed.wait(0.2)
        changed.clear()
        state = (partitioner.state_id, partitioner.state)
        if state == seen:
            continue
        seen = state
        if partitioner.failed:
            say("FAILED")
            break
        if partitioner.release:
            say("RELEASE")
            partitioner.release_set()
        elif partitioner.acquired:
            say("ACQUIRED " + ",".join(partitioner))
    partitioner.finish()
    client.stop()
    say("FINISHED")


if __name__ == "__main__":
    main()
