// Idle sessions of the ZooKeeper Java client in one JVM, for conformance's scale_bench.
// Args: CONNECT N SETTLE_SECS IDLE_SECS SESSION_TIMEOUT_MS. Connects N sessions, waits
// SETTLE_SECS, measures IDLE_SECS of heartbeats only and prints
// RESULT n connect_ns rss_before_kib rss_after_kib cpu_ns idle_ns threads connected
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

public class IdleSessions {
    static long status(String key) throws Exception {
        for (String l : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (l.startsWith(key)) {
                return Long.parseLong(l.substring(key.length()).trim().split("\\s+")[0]);
            }
        }
        return 0;
    }

    static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean)
                ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    public static void main(String[] a) throws Exception {
        String connect = a[0];
        int n = Integer.parseInt(a[1]);
        long settleMs = (long) (Double.parseDouble(a[2]) * 1000);
        long idleMs = (long) (Double.parseDouble(a[3]) * 1000);
        int timeout = Integer.parseInt(a[4]);
        long before = status("VmRSS:");
        CountDownLatch up = new CountDownLatch(n);
        List<ZooKeeper> zks = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            boolean[] once = {false};
            zks.add(new ZooKeeper(connect, timeout, e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    synchronized (once) {
                        if (!once[0]) { once[0] = true; up.countDown(); }
                    }
                }
            }));
        }
        if (!up.await(300, TimeUnit.SECONDS)) {
            System.out.println("ERROR only " + (n - up.getCount()) + " sessions connected");
            System.exit(1);
        }
        long connectNs = System.nanoTime() - t0;
        Thread.sleep(settleMs);
        long cpu0 = cpu();
        long t1 = System.nanoTime();
        Thread.sleep(idleMs);
        long cpuNs = cpu() - cpu0;
        long idleNs = System.nanoTime() - t1;
        long after = status("VmRSS:");
        long threads = status("Threads:");
        int connected = 0;
        for (ZooKeeper zk : zks) {
            if (zk.getState() == ZooKeeper.States.CONNECTED) connected++;
        }
        System.out.println("RESULT " + n + " " + connectNs + " " + before + " " + after + " "
                + cpuNs + " " + idleNs + " " + threads + " " + connected);
        for (ZooKeeper zk : zks) zk.close(1000);
        System.exit(0);
    }
}
