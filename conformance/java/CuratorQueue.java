// Curator's DistributedQueue and DistributedPriorityQueue beside zk-recipes' DistributedQueue
// on the same znodes (conformance/tests/recipes_queue_interop.rs).
//
// Compiled by the test with javac against Debian's jars (libcurator-recipes-java). Usage:
//   CuratorQueue produce CONNECT PATH PREFIX N      puts PREFIX-0 .. PREFIX-(N-1); prints PUT N
//   CuratorQueue produce-prio CONNECT PATH P:TEXT.. puts each TEXT with priority P; prints PUT n
//   CuratorQueue produce-id CONNECT PATH ID:TEXT..   DistributedIdQueue: puts each TEXT with ID;
//                                                   prints PUT n
//   CuratorQueue remove-id CONNECT PATH ID          DistributedIdQueue.remove(ID); prints
//                                                   REMOVED <count>
//   CuratorQueue consume CONNECT PATH LOCKPATH      consumes (lock-safe) until killed, printing
//                                                   TOOK <item> for each; READY once started
//   CuratorQueue hold CONNECT PATH LOCKPATH         takes one item (lock-safe), prints HELD <item>
//                                                   and never returns from consumeMessage, until
//                                                   killed; READY once started
// Every line is flushed at once so the test can follow along.

import java.nio.charset.StandardCharsets;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.DistributedIdQueue;
import org.apache.curator.framework.recipes.queue.DistributedPriorityQueue;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;

public final class CuratorQueue {
    static final QueueSerializer<String> TEXT = new QueueSerializer<String>() {
        public byte[] serialize(String item) {
            return item.getBytes(StandardCharsets.UTF_8);
        }

        public String deserialize(byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
    };

    static final QueueConsumer<String> PRINT = new QueueConsumer<String>() {
        public void consumeMessage(String item) {
            CuratorPeers.say("TOOK " + item);
        }

        public void stateChanged(CuratorFramework client, ConnectionState state) {}
    };

    static final QueueConsumer<String> HOLD = new QueueConsumer<String>() {
        public void consumeMessage(String item) throws Exception {
            CuratorPeers.say("HELD " + item);
            Thread.sleep(Long.MAX_VALUE);
        }

        public void stateChanged(CuratorFramework client, ConnectionState state) {}
    };

    public static void main(String[] args) throws Exception {
        // A consumer that is killed mid-item gets a short session, so that its lock goes soon.
        CuratorFramework client = args[0].equals("hold")
            ? CuratorPeers.connect(args[1], 2000)
            : CuratorPeers.connect(args[1]);
        String path = args[2];
        switch (args[0]) {
            case "produce": {
                DistributedQueue<String> q = QueueBuilder.builder(client, null, TEXT, path).buildQueue();
                q.start();
                int n = Integer.parseInt(args[4]);
                for (int i = 0; i < n; i++) {
                    q.put(args[3] + "-" + i);
                }
                q.flushPuts(60, java.util.concurrent.TimeUnit.SECONDS);
                CuratorPeers.say("PUT " + n);
                q.close();
                break;
            }
            case "produce-prio": {
                DistributedPriorityQueue<String> q =
                    QueueBuilder.builder(client, null, TEXT, path).buildPriorityQueue(1);
                q.start();
                for (int i = 3; i < args.length; i++) {
                    String[] pt = args[i].split(":", 2);
                    q.put(pt[1], Integer.parseInt(pt[0]));
                }
                q.flushPuts(60, java.util.concurrent.TimeUnit.SECONDS);
                CuratorPeers.say("PUT " + (args.length - 3));
                q.close();
                break;
            }
            case "produce-id": {
                DistributedIdQueue<String> q =
                    QueueBuilder.builder(client, null, TEXT, path).buildIdQueue();
                q.start();
                for (int i = 3; i < args.length; i++) {
                    String[] it = args[i].split(":", 2);
                    q.put(it[1], it[0]);
                }
                q.flushPuts(60, java.util.concurrent.TimeUnit.SECONDS);
                CuratorPeers.say("PUT " + (args.length - 3));
                q.close();
                break;
            }
            case "remove-id": {
                DistributedIdQueue<String> q =
                    QueueBuilder.builder(client, null, TEXT, path).buildIdQueue();
                q.start();
                CuratorPeers.say("REMOVED " + q.remove(args[3]));
                q.close();
                break;
            }
            case "consume":
            case "hold": {
                QueueConsumer<String> consumer = args[0].equals("hold") ? HOLD : PRINT;
                DistributedQueue<String> q =
                    QueueBuilder.builder(client, consumer, TEXT, path).lockPath(args[3]).buildQueue();
                q.start();
                CuratorPeers.say("READY");
                Thread.sleep(Long.MAX_VALUE);
                break;
            }
            default:
                System.err.println("unknown command " + args[0]);
                System.exit(2);
        }
        client.close();
    }
}
