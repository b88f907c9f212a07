// What the Curator peers and the Curator lock benchmark share: a client connected the way
// every one of them connects, and the line printer that flushes at once so the reader can
// follow along. javac finds this file beside the program's source (JavaProgram::compile puts
// the source's directory on the source path; recipes_bench writes this file there too).

import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

final class CuratorPeers {
    private CuratorPeers() {}

    // Synchronized: the benchmark's threads print too, one whole line at a time.
    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    // A started client of `connect` (30 s sessions), once connected; says READY then, or
    // ERROR and exits when it cannot connect within a minute.
    static CuratorFramework connect(String connect) throws InterruptedException {
        return connect(connect, 30000);
    }

    // The same with sessions of `sessionMs` (the fault tests want short ones).
    static CuratorFramework connect(String connect, int sessionMs) throws InterruptedException {
        CuratorFramework client = connectedOrNull(connect, sessionMs);
        if (client == null) {
            say("ERROR not connected");
            System.exit(1);
        }
        say("READY");
        return client;
    }

    // A started client of `connect` (30 s sessions), once connected; throws when it cannot
    // connect within a minute. Says nothing: the benchmark connects many.
    static CuratorFramework connected(String connect) throws InterruptedException {
        CuratorFramework client = connectedOrNull(connect, 30000);
        if (client == null) {
            throw new IllegalStateException("not connected to " + connect);
        }
        return client;
    }

    // The started client once connected, null when it is not within a minute (left
    // started, as both callers end what they were doing then).
    private static CuratorFramework connectedOrNull(String connect, int sessionMs)
            throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(100, 10))
                .build();
        client.start();
        return client.blockUntilConnected(60, TimeUnit.SECONDS) ? client : null;
    }
}
