// Curator's DistributedDoubleBarrier, PersistentNode (protected ephemeral-sequential) and
// GroupMember, driven line by line over stdin by conformance/tests/recipes_nodes_interop.rs
// to show that zk-recipes' DoubleBarrier, PersistentNode and GroupMember share znodes with
// Curator's.
//
// Compiled by the test with javac against Debian's jars (libcurator-recipes-java). Usage:
// CuratorMembers CONNECT; prints READY once connected, then answers each command on stdin
// (ERROR lines say what failed; end of input closes everything and exits):
//
//   enter PATH N          DistributedDoubleBarrier(PATH, N).enter(60 s); prints ENTERED
//   leave                 that barrier's leave(60 s); prints LEFT
//   node BASE DATA        PersistentNode(EPHEMERAL_SEQUENTIAL, protected, BASE, DATA),
//                         waits for its first create; prints NODE <actual path>
//   node-close            closes it; prints NODE-CLOSED
//   protected NAME        Curator's reading of a node name: prints
//                         PROTECTED <is protected> <protected id or -> <normalized name>
//   join PATH ID PAYLOAD  GroupMember(PATH, ID, PAYLOAD).start(); prints JOINED
//   payload PAYLOAD       its setThisData(PAYLOAD); prints PAYLOAD-SET
//   members               its current members, sorted: MEMBERS id=payload,id=payload
//   group-close           closes it; prints GROUP-CLOSED
//
// Every line is flushed at once so the test can follow along.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;

public final class CuratorMembers {
    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: CuratorMembers CONNECT");
            System.exit(2);
        }
        CuratorFramework client = CuratorPeers.connect(args[0]);
        DistributedDoubleBarrier barrier = null;
        PersistentNode node = null;
        GroupMember member = null;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            try {
                switch (w[0]) {
                    case "enter":
                        barrier = new DistributedDoubleBarrier(client, w[1], Integer.parseInt(w[2]));
                        CuratorPeers.say(barrier.enter(60, TimeUnit.SECONDS) ? "ENTERED" : "ERROR enter timed out");
                        break;
                    case "leave":
                        CuratorPeers.say(barrier.leave(60, TimeUnit.SECONDS) ? "LEFT" : "ERROR leave timed out");
                        break;
                    case "node":
                        node = new PersistentNode(client, CreateMode.EPHEMERAL_SEQUENTIAL, true, w[1], bytes(w[2]));
                        node.start();
                        if (!node.waitForInitialCreate(30, TimeUnit.SECONDS)) {
                            CuratorPeers.say("ERROR node not created");
                        } else {
                            CuratorPeers.say("NODE " + node.getActualPath());
                        }
                        break;
                    case "node-close":
                        node.close();
                        node = null;
                        CuratorPeers.say("NODE-CLOSED");
                        break;
                    case "protected":
                        CuratorPeers.say("PROTECTED " + ProtectedUtils.isProtectedZNode(w[1]) + " "
                                + ProtectedUtils.extractProtectedId(w[1]).orElse("-") + " "
                                + ProtectedUtils.normalize(w[1]));
                        break;
                    case "join":
                        member = new GroupMember(client, w[1], w[2], bytes(w[3]));
                        member.start();
                        CuratorPeers.say("JOINED");
                        break;
                    case "payload":
                        member.setThisData(bytes(w[1]));
                        CuratorPeers.say("PAYLOAD-SET");
                        break;
                    case "members": {
                        StringJoiner all = new StringJoiner(",");
                        Map<String, byte[]> sorted = new TreeMap<>(member.getCurrentMembers());
                        for (Map.Entry<String, byte[]> e : sorted.entrySet()) {
                            all.add(e.getKey() + "=" + new String(e.getValue(), StandardCharsets.UTF_8));
                        }
                        CuratorPeers.say("MEMBERS " + all);
                        break;
                    }
                    case "group-close":
                        member.close();
                        member = null;
                        CuratorPeers.say("GROUP-CLOSED");
                        break;
                    default:
                        CuratorPeers.say("ERROR unknown command " + line);
                }
            } catch (Exception e) {
                CuratorPeers.say("ERROR " + w[0] + ": " + e);
            }
        }
        if (member != null) {
            member.close();
        }
        if (node != null) {
            node.close();
        }
        client.close();
    }
}
