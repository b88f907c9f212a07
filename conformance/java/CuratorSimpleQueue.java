// Curator's SimpleDistributedQueue beside zk-recipes' on the same qn- znodes
// (conformance/tests/recipes_simple_queue.rs).
//
// Compiled by the test with javac against Debian's jars (libcurator-recipes-java). Usage:
//   CuratorSimpleQueue offer CONNECT PATH PREFIX N   offers PREFIX-0 .. PREFIX-(N-1); prints PUT N
//   CuratorSimpleQueue take CONNECT PATH N           takes N items (blocking), printing
//                                                    TOOK <item> for each, then DONE
// Every line is flushed at once so the test can follow along.

import java.nio.charset.StandardCharsets;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.SimpleDistributedQueue;

public final class CuratorSimpleQueue {
    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorPeers.connect(args[1]);
        SimpleDistributedQueue q = new SimpleDistributedQueue(client, args[2]);
        switch (args[0]) {
            case "offer": {
                int n = Integer.parseInt(args[4]);
                for (int i = 0; i < n; i++) {
                    q.offer((args[3] + "-" + i).getBytes(StandardCharsets.UTF_8));
                }
                CuratorPeers.say("PUT " + n);
                break;
            }
            case "take": {
                int n = Integer.parseInt(args[3]);
                for (int i = 0; i < n; i++) {
                    CuratorPeers.say("TOOK " + new String(q.take(), StandardCharsets.UTF_8));
                }
                CuratorPeers.say("DONE");
                break;
            }
            default:
                System.err.println("unknown command " + args[0]);
                System.exit(2);
        }
        client.close();
    }
}
