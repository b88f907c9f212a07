// The ZooKeeper Java client (3.8, synchronous API, callers on threads) side of the blocking
// client's benchmark.
//
// Compiled with BenchArgs.java (the command line) and JavaClientBench.java (the connect), run by
// conformance/src/bin/blocking_bench with the machine's javac and Debian's jars; see
// BENCHMARKS.md. Usage:
//
//   java JavaBlockingBench CONNECT DATA_PATH CD_BASE JIT_WARMUP_S WARMUP_S MEASURE_S REPS SPEC...
//
// SPEC is get:WINDOW (getData of DATA_PATH) or cd:WINDOW (create + delete pairs, each thread
// of its own node under CD_BASE). WINDOW threads share one ZooKeeper handle, each making one
// synchronous call after another; the main thread only samples the counts. Each measured
// repetition prints
//
//   RESULT SPEC REP OPS NANOS CPU_NANOS ERRORS
//
// with OPS completed getData calls (or create + delete pairs) and CPU_NANOS the whole JVM's
// CPU time (every thread: the callers, the client's send and event threads, GC, JIT) over
// NANOS of wall-clock time.

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public final class JavaBlockingBench {
    private static final AtomicLong DONE = new AtomicLong();
    private static final AtomicLong ERRORS = new AtomicLong();
    private static final int DATA_LEN = 100;

    private static com.sun.management.OperatingSystemMXBean os;
    private static volatile boolean stop;

    public static void main(String[] args) throws Exception {
        BenchArgs a = new BenchArgs(args, "JavaBlockingBench",
                "CONNECT DATA_PATH CD_BASE JIT_WARMUP_S WARMUP_S MEASURE_S REPS", "SPEC...");
        os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        String dataPath = a.text("DATA_PATH");
        String cdBase = a.text("CD_BASE");
        double jitWarmup = a.seconds("JIT_WARMUP_S");
        ZooKeeper zk = JavaClientBench.connected(a.text("CONNECT"));

        // JIT warm-up: both kinds of workload, unmeasured.
        if (jitWarmup > 0) {
            run(zk, "get", 64, dataPath, cdBase, jitWarmup / 2, 0, 0, "warmup");
            run(zk, "cd", 64, dataPath, cdBase, jitWarmup / 2, 0, 0, "warmup");
        }
        for (String spec : a.workloads()) {
            String[] kw = spec.split(":");
            run(zk, kw[0], Integer.parseInt(kw[1]), dataPath, cdBase, a.seconds("WARMUP_S"),
                    a.seconds("MEASURE_S"), a.number("REPS"), spec);
        }
        zk.close();
    }

    // One caller: synchronous ops until told to stop.
    private static void caller(ZooKeeper zk, boolean get, String dataPath, String cdPath) {
        byte[] payload = new byte[DATA_LEN];
        while (!stop) {
            boolean ok;
            try {
                if (get) {
                    byte[] data = zk.getData(dataPath, false, null);
                    ok = data != null && data.length == DATA_LEN;
                } else {
                    zk.create(cdPath, payload, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                    zk.delete(cdPath, -1);
                    ok = true;
                }
            } catch (Exception e) {
                ok = false;
            }
            if (!ok) {
                ERRORS.incrementAndGet();
            }
            DONE.incrementAndGet();
        }
    }

    private static void run(ZooKeeper zk, String kind, int window, String dataPath,
            String cdBase, double warmup, double measure, int reps, String spec)
            throws InterruptedException {
        boolean get = kind.equals("get");
        stop = false;
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < window; i++) {
            String cdPath = cdBase + "/java-" + i;
            Thread t = new Thread(() -> caller(zk, get, dataPath, cdPath));
            t.start();
            threads.add(t);
        }
        Thread.sleep((long) (warmup * 1000));
        for (int rep = 0; rep < reps; rep++) {
            long ops0 = DONE.get();
            long err0 = ERRORS.get();
            long cpu0 = os.getProcessCpuTime();
            long t0 = System.nanoTime();
            Thread.sleep((long) (measure * 1000));
            long t1 = System.nanoTime();
            long cpu1 = os.getProcessCpuTime();
            long ops1 = DONE.get();
            long err1 = ERRORS.get();
            System.out.println("RESULT " + spec + " " + rep + " " + (ops1 - ops0) + " "
                    + (t1 - t0) + " " + (cpu1 - cpu0) + " " + (err1 - err0));
            System.out.flush();
        }
        // Every caller done before the next workload.
        stop = true;
        for (Thread t : threads) {
            t.join();
        }
    }
}
