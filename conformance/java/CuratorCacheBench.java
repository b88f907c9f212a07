// Curator's CuratorCache on one tree, for the cache benchmark (conformance/src/bin/cache_bench),
// which compiles this with javac against Debian's jars and drives it over stdin/stdout:
//
//   java CuratorCacheBench CONNECT ROOT [split]
//
// "split" caches each child of ROOT with a CuratorCache of its own instead of one for ROOT:
// Curator 5.4 counts its outstanding reads in a Phaser limited to 65,535 (CURATOR-690, fixed
// in 5.6), so one cache of a tree that has more reads in flight at once loads only part of it.
// ROOT itself is then not cached.
//
// It connects, measures its heap (after a GC) and resident memory, starts a CuratorCache on ROOT
// and waits for initialized(), then prints
//   LOADED NODES ELAPSED_NS RSS_BEFORE_KB RSS_AFTER_KB HEAP_BEFORE HEAP_AFTER
//   READY
// and records every NODE_CHANGED event (path, version, wall-clock ns) in memory, so that
// printing does not slow its one listener thread. Then it answers stdin commands:
//   COUNT  -> "COUNT N", the changes recorded so far
//   DUMP   -> one "EV PATH VERSION NS" per change, then "END", and exits.
// Errors: "ERROR text".

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;

public final class CuratorCacheBench {
    private static final List<String> changes = new ArrayList<>();

    private static long wallNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    private static long rssKb() throws Exception {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    private static long heapAfterGc() throws Exception {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    private static void onChange(ChildData before, ChildData after) {
        String line = after.getPath() + " " + after.getStat().getVersion() + " " + wallNanos();
        synchronized (changes) {
            changes.add(line);
        }
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0];
        String root = args[1];
        CuratorFramework client = CuratorFrameworkFactory.newClient(
                connect, 60_000, 15_000, new ExponentialBackoffRetry(1000, 3));
        client.start();
        if (!client.blockUntilConnected(60, TimeUnit.SECONDS)) {
            System.out.println("ERROR no connection");
            return;
        }
        long heap0 = heapAfterGc();
        long rss0 = rssKb();
        List<String> roots = new ArrayList<>();
        if (args.length > 2 && args[2].equals("split")) {
            for (String child : client.getChildren().forPath(root)) {
                roots.add(ZKPaths.makePath(root, child));
            }
        } else {
            roots.add(root);
        }
        CountDownLatch initialized = new CountDownLatch(roots.size());
        List<CuratorCache> caches = new ArrayList<>();
        for (String r : roots) {
            CuratorCache cache = CuratorCache.build(client, r);
            cache.listenable().addListener(CuratorCacheListener.builder()
                    .forInitialized(initialized::countDown)
                    .forChanges(CuratorCacheBench::onChange)
                    .build());
            caches.add(cache);
        }
        long t0 = System.nanoTime();
        for (CuratorCache cache : caches) {
            cache.start();
        }
        initialized.await();
        long elapsed = System.nanoTime() - t0;
        long nodes = 0;
        for (CuratorCache cache : caches) {
            nodes += cache.size();
        }
        long heap1 = heapAfterGc();
        long rss1 = rssKb();
        System.out.println("LOADED " + nodes + " " + elapsed + " " + rss0 + " " + rss1 + " "
                + heap0 + " " + heap1);
        System.out.println("READY");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String cmd;
        while ((cmd = in.readLine()) != null) {
            if (cmd.equals("COUNT")) {
                synchronized (changes) {
                    System.out.println("COUNT " + changes.size());
                }
                System.out.flush();
            } else if (cmd.equals("DUMP")) {
                StringBuilder out = new StringBuilder();
                synchronized (changes) {
                    for (String c : changes) {
                        out.append("EV ").append(c).append('\n');
                    }
                }
                System.out.print(out);
                System.out.println("END");
                System.out.flush();
                break;
            }
        }
        for (CuratorCache cache : caches) {
            cache.close();
        }
        client.close();
    }
}
