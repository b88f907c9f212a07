// A Curator election participant driven over stdin/stdout by the Rust interop tests
// (conformance/tests/recipes_election_interop.rs).
//
//   java ElectionPeer latch    CONNECT PATH ID
//   java ElectionPeer selector CONNECT PATH ID MARKER_DIR HOLD_MS
//
// Output lines: READY once started; for a latch LEADER / NOTLEADER as the listener hears
// them, STATUS true|false on "status"; for a selector START when takeLeadership begins and
// END when it ends, VIOLATION if the shared marker node (MARKER_DIR/active, an ephemeral node
// every leader creates while it leads) already existed. On "stop" (STOPPING) later terms
// lead without the marker until closed, so closing cannot cut a marked term short.
// CLOSED after "close"/"quit" on stdin. javac finds CuratorPeers.java (say) beside it.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

public class ElectionPeer {
    static volatile boolean stopping = false;

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        CuratorFramework client = CuratorFrameworkFactory.newClient(
                args[1], 20000, 15000, new ExponentialBackoffRetry(100, 10));
        client.start();
        client.blockUntilConnected();
        String path = args[2];
        String id = args[3];
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (mode.equals("latch")) {
            LeaderLatch latch = new LeaderLatch(client, path, id, LeaderLatch.CloseMode.NOTIFY_LEADER);
            latch.addListener(new LeaderLatchListener() {
                public void isLeader() { CuratorPeers.say("LEADER"); }
                public void notLeader() { CuratorPeers.say("NOTLEADER"); }
            });
            latch.start();
            CuratorPeers.say("READY");
            String line;
            while ((line = in.readLine()) != null) {
                if (line.equals("status")) {
                    CuratorPeers.say("STATUS " + latch.hasLeadership());
                } else if (line.equals("close")) {
                    break;
                }
            }
            latch.close();
        } else if (mode.equals("selector")) {
            String marker = args[4] + "/active";
            long holdMs = Long.parseLong(args[5]);
            LeaderSelector selector = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
                public void takeLeadership(CuratorFramework c) throws Exception {
                    CuratorPeers.say("START");
                    if (stopping) {
                        // Winding down: lead without the marker until closed.
                        try {
                            Thread.sleep(Long.MAX_VALUE);
                        } finally {
                            CuratorPeers.say("END");
                        }
                    }
                    try {
                        try {
                            c.create().withMode(CreateMode.EPHEMERAL)
                                    .forPath(marker, id.getBytes(StandardCharsets.UTF_8));
                        } catch (KeeperException.NodeExistsException e) {
                            CuratorPeers.say("VIOLATION");
                        }
                        // Deleted before the term ends, as the Rust leaders do; ephemeral in
                        // case this process dies meanwhile.
                        Thread.sleep(holdMs);
                        c.delete().forPath(marker);
                    } finally {
                        CuratorPeers.say("END");
                    }
                }
            });
            selector.setId(id);
            selector.autoRequeue();
            selector.start();
            CuratorPeers.say("READY");
            String line;
            while ((line = in.readLine()) != null) {
                if (line.equals("stop")) {
                    stopping = true;
                    CuratorPeers.say("STOPPING");
                } else if (line.equals("quit")) {
                    break;
                }
            }
            selector.close();
        } else {
            throw new IllegalArgumentException("mode " + mode);
        }
        client.close();
        CuratorPeers.say("CLOSED");
    }
}
