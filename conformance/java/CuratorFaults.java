// Curator's InterProcessMutex, InterProcessSemaphoreV2 (one lease), LeaderLatch and
// LeaderSelector on a session of a chosen length, driven by
// conformance/tests/recipes_interop_faults.rs (locks, leases) and
// recipes_election_interop_faults.rs (elections) to show that zk-recipes and Curator hand a
// lock, a lease or leadership over correctly when one side's session expires or its
// process dies.
//
// Compiled by the test with javac against Debian's jars (libcurator-recipes-java). Usage:
//
//   java CuratorFaults MODE CONNECT PATH SESSION_MS
//
// Prints READY once connected, then SESSION <id> (decimal, as znodes' ephemeralOwner).
//   mutex      acquires the lock at PATH, prints ACQUIRED <children of PATH, sorted, by ",">
//   semaphore  takes the one lease of PATH, prints ACQUIRED <children of PATH/leases>
//   latch      joins the election at PATH as "curator"; prints LEADER and NOTLEADER as its
//              listener hears them
//   selector   joins the LeaderSelector election at PATH as "curator" (no requeue); prints
//              LEADER <children of PATH, sorted, by ","> when its term begins and NOTLEADER
//              when the term ends (on "release", or cancelled by a connection loss)
// Then, on a line "release" (or the end of stdin), releases the lock, returns the lease,
// closes the latch or ends the term and closes the selector, prints RELEASED and exits.
// Every line is flushed at once.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;

public final class CuratorFaults {
    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println(
                    "usage: CuratorFaults mutex|semaphore|latch|selector CONNECT PATH SESSION_MS");
            System.exit(2);
        }
        String path = args[2];
        CuratorFramework client = CuratorPeers.connect(args[1], Integer.parseInt(args[3]));
        CuratorPeers.say("SESSION " + client.getZookeeperClient().getZooKeeper().getSessionId());
        switch (args[0]) {
            case "mutex": {
                InterProcessMutex mutex = new InterProcessMutex(client, path);
                mutex.acquire();
                CuratorPeers.say("ACQUIRED " + sortedChildren(client, path));
                awaitRelease();
                mutex.release();
                break;
            }
            case "semaphore": {
                InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, 1);
                Lease lease = semaphore.acquire();
                CuratorPeers.say("ACQUIRED " + sortedChildren(client, path + "/leases"));
                awaitRelease();
                semaphore.returnLease(lease);
                break;
            }
            case "latch": {
                LeaderLatch latch = new LeaderLatch(client, path, "curator",
                        LeaderLatch.CloseMode.NOTIFY_LEADER);
                latch.addListener(new LeaderLatchListener() {
                    public void isLeader() { CuratorPeers.say("LEADER"); }
                    public void notLeader() { CuratorPeers.say("NOTLEADER"); }
                });
                latch.start();
                awaitRelease();
                latch.close();
                break;
            }
            case "selector": {
                CountDownLatch release = new CountDownLatch(1);
                // The adapter cancels the term when the connection is suspended or lost.
                LeaderSelector selector = new LeaderSelector(client, path,
                        new LeaderSelectorListenerAdapter() {
                            public void takeLeadership(CuratorFramework c) throws Exception {
                                CuratorPeers.say("LEADER " + sortedChildren(c, path));
                                try {
                                    release.await();
                                } finally {
                                    CuratorPeers.say("NOTLEADER");
                                }
                            }
                        });
                selector.setId("curator");
                selector.start();
                awaitRelease();
                release.countDown();
                selector.close();
                break;
            }
            default:
                CuratorPeers.say("ERROR unknown mode " + args[0]);
                System.exit(2);
        }
        CuratorPeers.say("RELEASED");
        client.close();
    }

    private static String sortedChildren(CuratorFramework client, String path) throws Exception {
        List<String> kids = new ArrayList<>(client.getChildren().forPath(path));
        Collections.sort(kids);
        return String.join(",", kids);
    }

    // Returns on a line "release" or at the end of stdin.
    private static void awaitRelease() throws Exception {
        BufferedReader in = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals("release")) {
                return;
            }
        }
    }
}
