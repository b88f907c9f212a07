"""kazoo's Queue and LockingQueue, driven by conformance/tests/recipes_kazoo_queue.rs to show
that zk-recipes' KazooQueue and KazooLockingQueue share their znodes with kazoo's. Items
are UTF-8 text. Usage:

    python3 kazoo_queue.py put CONNECT PATH P:TEXT...
        Queue.put(TEXT, priority=P) for each; prints PUT <n>.
    python3 kazoo_queue.py get CONNECT PATH
        Queue.get() until it returns None; prints GOT <text> for each, then EMPTY.
    python3 kazoo_queue.py lput CONNECT PATH P TEXT...
        LockingQueue.put_all([TEXT...], priority=P); prints PUT <n>.
    python3 kazoo_queue.py lconsume CONNECT PATH
        LockingQueue: get(0.2), consume(), prints TOOK <text> once consumed; until a line
        "stop" (or the end of stdin); prints STOPPED.
    python3 kazoo_queue.py lhold CONNECT PATH SESSION_S
        LockingQueue on a session of SESSION_S seconds: get(), prints HELD <text> <id>, then
        holds it until killed.

Each prints READY once connected.
"""

import sys
import threading
import time

from kazoo_peers import arguments, require_kazoo, say


def main():
    args = arguments(3, __doc__)
    require_kazoo()
    from kazoo.client import KazooClient

    mode, connect, path = args[0:3]
    session = float(args[3]) if mode == "lhold" else 30.0
    client = KazooClient(hosts=connect, timeout=session)
    client.start(timeout=60)
    say("READY")
    if mode == "put":
        queue = client.Queue(path)
        for item in args[3:]:
            priority, text = item.split(":", 1)
            queue.put(text.encode("utf-8"), priority=int(priority))
        say("PUT %d" % (len(args) - 3))
    elif mode == "get":
        queue = client.Queue(path)
        while True:
            data = queue.get()
            if data is None:
                break
            say("GOT " + data.decode("utf-8"))
        say("EMPTY")
    elif mode == "lput":
        queue = client.LockingQueue(path)
        texts = [t.encode("utf-8") for t in args[4:]]
        queue.put_all(texts, priority=int(args[3]))
        say("PUT %d" % len(texts))
    elif mode == "lconsume":
        queue = client.LockingQueue(path)
        stop = threading.Event()

        def read_stdin():
            for line in sys.stdin:
                if line.strip() == "stop":
                    break
            stop.set()

        threading.Thread(target=read_stdin, daemon=True).start()
        while not stop.is_set():
            data = queue.get(0.2)
            if data is None:
                continue
            time.sleep(0.002)
            if queue.consume():
                say("TOOK " + data.decode("utf-8"))
            else:
                say("ERROR lost the lock on " + data.decode("utf-8"))
        say("STOPPED")
    elif mode == "lhold":
        queue = client.LockingQueue(path)
        data = queue.get()
        say("HELD %s %s" % (data.decode("utf-8"), queue.id.decode("ascii")))
        while True:
            time.sleep(60)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    client.stop()
    client.close()


if __name__ == "__main__":
    main()
