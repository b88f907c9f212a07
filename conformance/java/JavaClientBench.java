// The ZooKeeper Java client (3.8, async API) side of the session benchmark.
//
// Compiled with BenchArgs.java (the command line) and run by conformance/src/bin/session_bench
// with the machine's javac and Debian's jars; see BENCHMARKS.md. Usage:
//
//   java JavaClientBench CONNECT DATA_PATH CD_BASE JIT_WARMUP_S WARMUP_S MEASURE_S REPS SPEC...
//
// SPEC is get:WINDOW (getData of DATA_PATH) or cd:WINDOW (create + delete pairs of nodes
// under CD_BASE). WINDOW requests are kept in flight with a semaphore: the main thread takes
// a permit before each call, the callback gives it back. Each measured repetition prints
//
//   RESULT SPEC REP OPS NANOS CPU_NANOS ERRORS
//
// with OPS completed getData calls (or create + delete pairs) and CPU_NANOS the whole JVM's
// CPU time (every thread: caller, the client's send and event threads, GC, JIT) over NANOS
// of wall-clock time.

import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public final class JavaClientBench {
    private static final AtomicLong DONE = new AtomicLong();
    private static final AtomicLong ERRORS = new AtomicLong();
    private static final int DATA_LEN = 100;
    private static final int CD_PATHS = 1024;

    private static com.sun.management.OperatingSystemMXBean os;

    public static void main(String[] args) throws Exception {
        BenchArgs a = new BenchArgs(args, "JavaClientBench",
                "CONNECT DATA_PATH CD_BASE JIT_WARMUP_S WARMUP_S MEASURE_S REPS", "SPEC...");
        os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        String dataPath = a.text("DATA_PATH");
        String cdBase = a.text("CD_BASE");
        double jitWarmup = a.seconds("JIT_WARMUP_S");
        double warmup = a.seconds("WARMUP_S");
        double measure = a.seconds("MEASURE_S");
        int reps = a.number("REPS");
        ZooKeeper zk = connected(a.text("CONNECT"));
        byte[] payload = new byte[DATA_LEN];
        String[] cdPaths = new String[CD_PATHS];
        for (int i = 0; i < CD_PATHS; i++) {
            cdPaths[i] = cdBase + "/java-" + i;
        }

        // JIT warm-up: both kinds of workload, unmeasured.
        if (jitWarmup > 0) {
            run(zk, "get", 64, dataPath, cdPaths, payload, jitWarmup / 2, 0, 0, "warmup");
            run(zk, "cd", 64, dataPath, cdPaths, payload, jitWarmup / 2, 0, 0, "warmup");
        }
        for (String spec : a.workloads()) {
            String[] kw = spec.split(":");
            run(zk, kw[0], Integer.parseInt(kw[1]), dataPath, cdPaths, payload, warmup, measure,
                    reps, spec);
        }
        zk.close();
    }

    // A client of `connect` (30 s sessions), once connected; exits when it is not within 30 s.
    // (JavaBlockingBench connects with it too.)
    static ZooKeeper connected(String connect) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, 30000, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(30, TimeUnit.SECONDS)) {
            System.err.println("no connection to " + connect);
            System.exit(1);
        }
        return zk;
    }

    private static void run(ZooKeeper zk, String kind, int window, String dataPath,
            String[] cdPaths, byte[] payload, double warmup, double measure, int reps,
            String spec) throws InterruptedException {
        Semaphore permits = new Semaphore(window);
        AsyncCallback.DataCallback got = (rc, path, ctx, data, stat) -> {
            if (rc != 0 || data == null || data.length != DATA_LEN) {
                ERRORS.incrementAndGet();
            }
            DONE.incrementAndGet();
            permits.release();
        };
        AsyncCallback.StringCallback created = (rc, path, ctx, name) -> {
            if (rc != 0) {
                ERRORS.incrementAndGet();
            }
            permits.release();
        };
        AsyncCallback.VoidCallback deleted = (rc, path, ctx) -> {
            if (rc != 0) {
                ERRORS.incrementAndGet();
            }
            DONE.incrementAndGet();
            permits.release();
        };
        boolean get = kind.equals("get");
        int next = 0;
        long deadline = System.nanoTime() + (long) (warmup * 1e9);
        for (int rep = -1; rep < reps; rep++) {
            long ops0 = DONE.get();
            long err0 = ERRORS.get();
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            if (rep >= 0) {
                deadline = t0 + (long) (measure * 1e9);
            }
            while (System.nanoTime() < deadline) {
                if (get) {
                    permits.acquire();
                    zk.getData(dataPath, false, got, null);
                } else {
                    // Requests of one session run in order, so a pair needs no waiting inside.
                    String path = cdPaths[next];
                    next = (next + 1) % cdPaths.length;
                    permits.acquire();
                    zk.create(path, payload, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT,
                            created, null);
                    permits.acquire();
                    zk.delete(path, -1, deleted, null);
                }
            }
            long t1 = System.nanoTime();
            long cpu1 = os.getProcessCpuTime();
            long ops1 = DONE.get();
            long err1 = ERRORS.get();
            if (rep >= 0) {
                System.out.println("RESULT " + spec + " " + rep + " " + (ops1 - ops0) + " "
                        + (t1 - t0) + " " + (cpu1 - cpu0) + " " + (err1 - err0));
                System.out.flush();
            }
        }
        // Wait for everything in flight before the next workload.
        permits.acquire(window);
    }
}
