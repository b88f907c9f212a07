// Curator's InterProcessMutex and LeaderSelector under load, for the recipes benchmark
// (conformance/src/bin/recipes_bench), which compiles this with CuratorPeers.java (connect,
// say) and BenchArgs.java (the command line) with javac against Debian's jars and runs it
// once for all its workloads:
//
//   java CuratorLockBench CONNECT BASE WARMUP_S SECS JIT_WARMUP_S WORKLOAD...
//
// Workloads:
//   lock:N                  N contenders on BASE/lock-N, one CuratorFramework (session) and
//                           one thread each, all in this process. Each loops acquire, (empty
//                           critical section), release. After WARMUP_S seconds (plus
//                           JIT_WARMUP_S before the first workload) the acquisitions of SECS
//                           seconds are counted.
//   elect:N:TERMS:HOLD_MS   N LeaderSelectors with autoRequeue on BASE/elect-N; each leader's
//                           takeLeadership holds for HOLD_MS and returns. Runs until TERMS terms
//                           have started, then closes them all (interrupting the last leader,
//                           whose exit is then not a return: the Rust side ignores it).
//
// Every time stamp is System.nanoTime(), one monotonic clock for all threads. Output lines:
//   LOCK N ACQUISITIONS ELAPSED_NS VIOLATIONS ERRORS TOTAL REQUESTS
//                           ACQUISITIONS in the measured SECS, TOTAL from the first to the
//                           last; REQUESTS the server received from before the first connect
//                           to after the last close (its srvr "Received:"), -1 if unknown.
//   HANDOFF N NS NS ...     one per measured acquisition that followed a release: the time
//                           from the start of the previous holder's release() to the return
//                           of this acquire() (with N=1, the same thread's).
//   STARTS N NS ...         when each takeLeadership began (from one origin)
//   EXITS N NS ...          when each returned (the interrupted last one does not count)
//   ERROR text
// The Rust side computes the medians and percentiles, the same way for every client.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

public final class CuratorLockBench {
    private static final long NONE = Long.MIN_VALUE;

    /** The server's srvr "Received:" count (the first server of CONNECT), -1 if unknown. */
    private static long serverReceived(String connect) {
        String[] hostPort = connect.split(",")[0].split(":");
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])), 10000);
            socket.setSoTimeout(10000);
            OutputStream out = socket.getOutputStream();
            out.write("srvr".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            BufferedReader in = new BufferedReader(
                    new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("Received:")) {
                    return Long.parseLong(line.substring("Received:".length()).trim());
                }
            }
        } catch (Exception e) {
            // unknown
        }
        return -1;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs a = new BenchArgs(args, "CuratorLockBench",
                "CONNECT BASE WARMUP_S SECS JIT_WARMUP_S", "lock:N... elect:N:TERMS:HOLD_MS...");
        String connect = a.text("CONNECT");
        String base = a.text("BASE");
        // Added to the warm-up of the first lock workload that runs.
        double jit = a.seconds("JIT_WARMUP_S");
        for (String workload : a.workloads()) {
            String[] w = workload.split(":");
            try {
                if (w[0].equals("lock")) {
                    int n = Integer.parseInt(w[1]);
                    lock(connect, base + "/lock-" + n, n, a.seconds("WARMUP_S") + jit,
                            a.seconds("SECS"));
                    jit = 0;
                } else if (w[0].equals("elect")) {
                    elect(connect, base + "/elect-" + w[1], Integer.parseInt(w[1]),
                            Integer.parseInt(w[2]), Long.parseLong(w[3]));
                } else {
                    CuratorPeers.say("ERROR unknown workload " + workload);
                }
            } catch (Exception e) {
                CuratorPeers.say("ERROR " + workload + ": " + e);
            }
        }
        CuratorPeers.say("DONE");
        // Curator's threads are not all daemons.
        System.exit(0);
    }

    private static void lock(String connect, String path, int n, double warmup, double secs)
            throws Exception {
        long received = serverReceived(connect);
        List<CuratorFramework> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            clients.add(CuratorPeers.connected(connect));
        }
        AtomicBoolean stop = new AtomicBoolean(false);
        AtomicBoolean measuring = new AtomicBoolean(false);
        AtomicBoolean inside = new AtomicBoolean(false);
        AtomicLong lastRelease = new AtomicLong(NONE);
        AtomicLong acquisitions = new AtomicLong();
        AtomicLong total = new AtomicLong();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        List<long[]> perThread = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            InterProcessMutex mutex = new InterProcessMutex(clients.get(i), path);
            Thread t = new Thread(() -> {
                long[] samples = new long[1 << 16];
                int count = 0;
                long acquired = 0;
                long all = 0;
                while (!stop.get()) {
                    try {
                        mutex.acquire();
                    } catch (Exception e) {
                        errors.incrementAndGet();
                        continue;
                    }
                    long now = System.nanoTime();
                    long previous = lastRelease.get();
                    all++;
                    if (!inside.compareAndSet(false, true)) {
                        violations.incrementAndGet();
                    }
                    if (measuring.get()) {
                        acquired++;
                        if (previous != NONE) {
                            if (count == samples.length) {
                                samples = java.util.Arrays.copyOf(samples, count * 2);
                            }
                            samples[count++] = now - previous;
                        }
                    }
                    inside.set(false);
                    lastRelease.set(System.nanoTime());
                    try {
                        mutex.release();
                    } catch (Exception e) {
                        errors.incrementAndGet();
                    }
                }
                acquisitions.addAndGet(acquired);
                total.addAndGet(all);
                perThread.add(java.util.Arrays.copyOf(samples, count));
            });
            threads.add(t);
        }
        for (Thread t : threads) {
            t.start();
        }
        Thread.sleep((long) (warmup * 1000));
        long t0 = System.nanoTime();
        measuring.set(true);
        Thread.sleep((long) (secs * 1000));
        measuring.set(false);
        long elapsed = System.nanoTime() - t0;
        stop.set(true);
        for (Thread t : threads) {
            t.join(30000);
        }
        for (CuratorFramework c : clients) {
            c.close();
        }
        long after = serverReceived(connect);
        long requests = received < 0 || after < 0 ? -1 : after - received;
        CuratorPeers.say("LOCK " + n + " " + acquisitions.get() + " " + elapsed + " "
                + violations.get() + " " + errors.get() + " " + total.get() + " " + requests);
        StringBuilder line = new StringBuilder("HANDOFF " + n);
        synchronized (perThread) {
            for (long[] s : perThread) {
                for (long v : s) {
                    line.append(' ').append(v);
                }
            }
        }
        CuratorPeers.say(line.toString());
    }

    private static void elect(String connect, String path, int n, int terms, long holdMs)
            throws Exception {
        List<CuratorFramework> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            clients.add(CuratorPeers.connected(connect));
        }
        long origin = System.nanoTime();
        List<Long> starts = Collections.synchronizedList(new ArrayList<>());
        List<Long> exits = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch enough = new CountDownLatch(terms);
        List<LeaderSelector> selectors = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            LeaderSelector s = new LeaderSelector(clients.get(i), path,
                    new LeaderSelectorListenerAdapter() {
                        @Override
                        public void takeLeadership(CuratorFramework c) throws Exception {
                            starts.add(System.nanoTime() - origin);
                            enough.countDown();
                            Thread.sleep(holdMs);
                            exits.add(System.nanoTime() - origin);
                        }
                    });
            s.setId("curator-" + i);
            s.autoRequeue();
            selectors.add(s);
        }
        for (LeaderSelector s : selectors) {
            s.start();
        }
        boolean finished = enough.await(60 + terms * (holdMs + 1000) / 1000, TimeUnit.SECONDS);
        for (LeaderSelector s : selectors) {
            s.close();
        }
        if (!finished) {
            CuratorPeers.say("ERROR elect:" + n + ": only " + (terms - enough.getCount())
                    + " terms");
        }
        CuratorPeers.say(line("STARTS " + n, starts));
        CuratorPeers.say(line("EXITS " + n, exits));
        for (CuratorFramework c : clients) {
            c.close();
        }
    }

    private static String line(String head, List<Long> values) {
        StringBuilder line = new StringBuilder(head);
        synchronized (values) {
            for (long v : values) {
                line.append(' ').append(v);
            }
        }
        return line.toString();
    }
}
