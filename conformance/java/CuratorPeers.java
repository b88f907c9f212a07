// What the Curator peers share: a client connected the way every peer connects, and the
// line printer that flushes at once so the test can follow along. javac finds this file
// beside a peer's source (JavaProgram::compile puts conformance/java on the source path).

import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

final class CuratorPeers {
    private CuratorPeers() {}

    static void say(String line) {
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
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(sessionMs)
                .connectionTimeoutMs(15000)
                .retryPolicy(new ExponentialBackoffRetry(100, 10))
                .build();
        client.start();
        if (!client.blockUntilConnected(60, TimeUnit.SECONDS)) {
            say("ERROR not connected");
            System.exit(1);
        }
        say("READY");
        return client;
    }
}
