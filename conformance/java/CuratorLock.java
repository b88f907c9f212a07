// Curator's InterProcessMutex, driven by conformance/tests/recipes_interop.rs to show that
// zk-recipes' Mutex and Curator's exclude each other on one lock path.
//
// Compiled by the test with javac against Debian's jars (libcurator-recipes-java). Usage:
//
//   java CuratorLock hold CONNECT LOCK_PATH HOLD_MS
//       prints READY once connected, ACQUIRED once it holds the lock, then holds it until a
//       line "release" arrives on stdin (or HOLD_MS pass), releases, prints RELEASED.
//
//   java CuratorLock loop CONNECT LOCK_PATH FLAG_PATH ROUNDS
//       ROUNDS times: acquire; create the ephemeral FLAG_PATH (it exists only while someone is
//       inside, so NodeExists means two holders: prints VIOLATION); hold a few ms; delete it;
//       release. Prints DONE at the end.
//
// Every line is flushed at once so the test can follow along.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

public final class CuratorLock {
    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: CuratorLock hold CONNECT LOCK_PATH HOLD_MS"
                    + " | loop CONNECT LOCK_PATH FLAG_PATH ROUNDS");
            System.exit(2);
        }
        CuratorFramework client = CuratorPeers.connect(args[1]);
        InterProcessMutex mutex = new InterProcessMutex(client, args[2]);
        if (args[0].equals("hold")) {
            hold(mutex, Long.parseLong(args[3]));
        } else {
            loop(client, mutex, args[3], Integer.parseInt(args[4]));
        }
        client.close();
    }

    private static void hold(InterProcessMutex mutex, long holdMs) throws Exception {
        mutex.acquire();
        CuratorPeers.say("ACQUIRED");
        CountDownLatch release = new CountDownLatch(1);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("release")) {
                        break;
                    }
                }
            } catch (Exception e) {
                // stdin closed: release as well
            }
            release.countDown();
        });
        reader.setDaemon(true);
        reader.start();
        release.await(holdMs, TimeUnit.MILLISECONDS);
        mutex.release();
        CuratorPeers.say("RELEASED");
    }

    private static void loop(CuratorFramework client, InterProcessMutex mutex, String flag,
            int rounds) throws Exception {
        for (int i = 0; i < rounds; i++) {
            mutex.acquire();
            try {
                client.create().withMode(CreateMode.EPHEMERAL).forPath(flag);
            } catch (KeeperException.NodeExistsException e) {
                CuratorPeers.say("VIOLATION round " + i);
                mutex.release();
                continue;
            }
            Thread.sleep(3);
            client.delete().forPath(flag);
            mutex.release();
        }
        CuratorPeers.say("DONE");
    }
}
