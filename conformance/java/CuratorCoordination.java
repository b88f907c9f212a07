// Curator's InterProcessSemaphoreV2, InterProcessReadWriteLock, SharedCount and
// DistributedAtomicLong, driven by conformance/tests/recipes_coordination_interop.rs to show
// that zk-recipes' Semaphore, ReadWriteLock, SharedCount and DistributedAtomicLong share
// znodes with Curator's.
//
// Compiled by the test with javac against Debian's jars (libcurator-recipes-java). Usage
// (each prints READY once connected; ERROR lines say what failed):
//
//   semaphore CONNECT PATH MAX_LEASES FLAG_DIR ROUNDS
//       ROUNDS times: take a lease; create an ephemeral-sequential flag under FLAG_DIR; if
//       FLAG_DIR then has more than MAX_LEASES children, print VIOLATION; hold a few ms;
//       delete the flag; return the lease. Prints DONE.
//   rwlock CONNECT PATH FLAG_DIR ROUNDS
//       ROUNDS times, every third a writer, else a reader: take the lock; create a flag
//       (w-… or r-…) under FLAG_DIR; a writer that sees any other flag, or a reader that sees
//       a w- flag, prints VIOLATION; hold a few ms; delete the flag; release. Prints DONE.
//   semmutex CONNECT PATH FLAG_DIR ROUNDS
//       as semaphore, with an InterProcessSemaphoreMutex: any other flag is a VIOLATION.
//   multilock CONNECT PATH,PATH... FLAG_DIR ROUNDS
//       as semmutex, with an InterProcessMultiLock of the comma-separated paths.
//   dbarrier-set CONNECT PATH / dbarrier-remove CONNECT PATH
//       DistributedBarrier setBarrier / removeBarrier; prints DONE.
//   dbarrier-wait CONNECT PATH OPENED
//       prints WAITING, then waitOnBarrier(); once through, OPENED (a node the remover
//       creates before removing the barrier) must exist, else VIOLATION. Prints PASSED.
//   count-get CONNECT PATH            prints VALUE n (SharedCount, seed 0)
//   count-tryset CONNECT PATH N       trySetCount from the current version; prints OK or FAIL
//   long-get CONNECT PATH             prints VALUE n (DistributedAtomicLong)
//   long-add CONNECT PATH DELTA ROUNDS
//       adds DELTA ROUNDS times (optimistic, RetryNTimes(1000, 1)); prints DONE <successes>
//
// Every line is flushed at once so the test can follow along.

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;

public final class CuratorCoordination {
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: CuratorCoordination MODE CONNECT PATH ...");
            System.exit(2);
        }
        CuratorFramework client = CuratorPeers.connect(args[1]);
        String path = args[2];
        switch (args[0]) {
            case "semaphore":
                semaphore(client, path, Integer.parseInt(args[3]), args[4],
                        Integer.parseInt(args[5]));
                break;
            case "rwlock":
                rwlock(client, path, args[3], Integer.parseInt(args[4]));
                break;
            case "semmutex":
                exclusive(client, new InterProcessSemaphoreMutex(client, path), args[3],
                        Integer.parseInt(args[4]));
                break;
            case "multilock":
                exclusive(client, new InterProcessMultiLock(client, Arrays.asList(path.split(","))),
                        args[3], Integer.parseInt(args[4]));
                break;
            case "dbarrier-set":
                new DistributedBarrier(client, path).setBarrier();
                CuratorPeers.say("DONE");
                break;
            case "dbarrier-remove":
                new DistributedBarrier(client, path).removeBarrier();
                CuratorPeers.say("DONE");
                break;
            case "dbarrier-wait":
                CuratorPeers.say("WAITING");
                new DistributedBarrier(client, path).waitOnBarrier();
                if (client.checkExists().forPath(args[3]) == null) {
                    CuratorPeers.say("VIOLATION through before " + args[3] + " was made");
                }
                CuratorPeers.say("PASSED");
                break;
            case "count-get": {
                SharedCount count = new SharedCount(client, path, 0);
                count.start();
                CuratorPeers.say("VALUE " + count.getCount());
                count.close();
                break;
            }
            case "count-tryset": {
                SharedCount count = new SharedCount(client, path, 0);
                count.start();
                boolean ok = count.trySetCount(count.getVersionedValue(),
                        Integer.parseInt(args[3]));
                CuratorPeers.say(ok ? "OK" : "FAIL");
                count.close();
                break;
            }
            case "long-get": {
                DistributedAtomicLong n = new DistributedAtomicLong(client, path,
                        new RetryNTimes(10, 10));
                AtomicValue<Long> v = n.get();
                CuratorPeers.say(v.succeeded() ? "VALUE " + v.postValue() : "ERROR get failed");
                break;
            }
            case "long-add": {
                DistributedAtomicLong n = new DistributedAtomicLong(client, path,
                        new RetryNTimes(1000, 1));
                long delta = Long.parseLong(args[3]);
                int rounds = Integer.parseInt(args[4]);
                int ok = 0;
                for (int i = 0; i < rounds; i++) {
                    if (n.add(delta).succeeded()) {
                        ok++;
                    }
                }
                CuratorPeers.say("DONE " + ok);
                break;
            }
            default:
                CuratorPeers.say("ERROR unknown mode " + args[0]);
        }
        client.close();
    }

    private static void semaphore(CuratorFramework client, String path, int max, String flags,
            int rounds) throws Exception {
        InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, max);
        client.createContainers(flags);
        for (int i = 0; i < rounds; i++) {
            Lease lease = semaphore.acquire();
            String flag = client.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(flags + "/f-");
            List<String> inside = client.getChildren().forPath(flags);
            if (inside.size() > max) {
                CuratorPeers.say("VIOLATION round " + i + ": " + inside);
            }
            Thread.sleep(3);
            client.delete().forPath(flag);
            semaphore.returnLease(lease);
        }
        CuratorPeers.say("DONE");
    }

    private static void rwlock(CuratorFramework client, String path, String flags, int rounds)
            throws Exception {
        InterProcessReadWriteLock lock = new InterProcessReadWriteLock(client, path);
        client.createContainers(flags);
        for (int i = 0; i < rounds; i++) {
            boolean writer = i % 3 == 0;
            InterProcessMutex side = writer ? lock.writeLock() : lock.readLock();
            side.acquire();
            String flag = client.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(flags + (writer ? "/w-" : "/r-"));
            String own = flag.substring(flag.lastIndexOf('/') + 1);
            for (String other : client.getChildren().forPath(flags)) {
                if (!other.equals(own) && (writer || other.startsWith("w-"))) {
                    CuratorPeers.say("VIOLATION round " + i + ": " + own + " beside " + other);
                }
            }
            Thread.sleep(3);
            client.delete().forPath(flag);
            side.release();
        }
        CuratorPeers.say("DONE");
    }

    private static void exclusive(CuratorFramework client, InterProcessLock lock, String flags,
            int rounds) throws Exception {
        client.createContainers(flags);
        for (int i = 0; i < rounds; i++) {
            lock.acquire();
            String flag = client.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(flags + "/x-");
            List<String> inside = client.getChildren().forPath(flags);
            if (inside.size() > 1) {
                CuratorPeers.say("VIOLATION round " + i + ": " + inside);
            }
            Thread.sleep(3);
            client.delete().forPath(flag);
            lock.release();
        }
        CuratorPeers.say("DONE");
    }
}
