// Curator's DistributedQueue under load, for the queue benchmark (conformance/src/bin/
// queue_bench), which compiles this with CuratorPeers.java (connect, say) against Debian's
// jars and runs it once per workload, alternating with its own client:
//
//   java CuratorQueueBench put CONNECT PATH SECS
//       one producer, put(item) with putInBackground(false) (each put waits for the server,
//       as ours does) for SECS seconds; prints PUT COUNT ELAPSED_NS
//   java CuratorQueueBench take CONNECT PATH CONSUMERS ITEMS SECS
//       CONSUMERS CuratorFrameworks (sessions), each a plain-mode consumer of PATH, started
//       together; counts the items consumed until ITEMS or SECS; prints
//       TAKE CONSUMERS COUNT ELAPSED_NS
//   java CuratorQueueBench lookup CONNECT BASE NAME SECS
//       a ServiceProvider (round robin) of service NAME under BASE, after its cache holds 8
//       instances and one unmeasured second (JIT): getInstance() for SECS seconds; prints
//       LOOKUP COUNT ELAPSED_NS
//   ERROR text
// Items are 64 bytes; the Rust side fills the queue in Curator's envelope before a take.

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;

public final class CuratorQueueBench {
    static final QueueSerializer<byte[]> BYTES = new QueueSerializer<byte[]>() {
        public byte[] serialize(byte[] item) {
            return item;
        }

        public byte[] deserialize(byte[] bytes) {
            return bytes;
        }
    };

    public static void main(String[] args) throws Exception {
        try {
            if (args[0].equals("lookup")) {
                lookup(args[1], args[2], args[3], Double.parseDouble(args[4]));
            } else if (args[0].equals("put")) {
                put(args[1], args[2], Double.parseDouble(args[3]));
            } else {
                take(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                        Double.parseDouble(args[5]));
            }
        } catch (Exception e) {
            CuratorPeers.say("ERROR " + e);
        }
        System.exit(0);
    }

    static void put(String connect, String path, double secs) throws Exception {
        CuratorFramework client = CuratorPeers.connect(connect);
        DistributedQueue<byte[]> q =
            QueueBuilder.builder(client, null, BYTES, path).putInBackground(false).buildQueue();
        q.start();
        byte[] item = new byte[64];
        long start = System.nanoTime();
        long end = start + (long) (secs * 1e9);
        long n = 0;
        long now;
        do {
            q.put(item);
            n++;
            now = System.nanoTime();
        } while (now < end);
        CuratorPeers.say("PUT " + n + " " + (now - start));
        q.close();
        client.close();
    }

    static void take(String connect, String path, int consumers, int items, double secs)
            throws Exception {
        AtomicLong taken = new AtomicLong();
        AtomicLong last = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        QueueConsumer<byte[]> count = new QueueConsumer<byte[]>() {
            public void consumeMessage(byte[] item) {
                last.set(System.nanoTime());
                if (taken.incrementAndGet() >= items) {
                    done.countDown();
                }
            }

            public void stateChanged(CuratorFramework client, ConnectionState state) {}
        };
        List<CuratorFramework> clients = new ArrayList<>();
        List<DistributedQueue<byte[]>> queues = new ArrayList<>();
        for (int i = 0; i < consumers; i++) {
            CuratorFramework c = CuratorPeers.connect(connect);
            clients.add(c);
            queues.add(QueueBuilder.builder(c, count, BYTES, path).buildQueue());
        }
        long start = System.nanoTime();
        for (DistributedQueue<byte[]> q : queues) {
            q.start();
        }
        done.await((long) (secs * 1e9), TimeUnit.NANOSECONDS);
        long n = taken.get();
        long end = n >= items ? last.get() : System.nanoTime();
        CuratorPeers.say("TAKE " + consumers + " " + n + " " + (end - start));
        for (DistributedQueue<byte[]> q : queues) {
            q.close();
        }
        for (CuratorFramework c : clients) {
            c.close();
        }
    }

    static void lookup(String connect, String base, String name, double secs) throws Exception {
        CuratorFramework client = CuratorPeers.connect(connect);
        ServiceDiscovery<Object> discovery = ServiceDiscoveryBuilder.builder(Object.class)
            .client(client).basePath(base).build();
        discovery.start();
        ServiceProvider<Object> provider = discovery.serviceProviderBuilder()
            .serviceName(name).providerStrategy(new RoundRobinStrategy<>()).build();
        provider.start();
        while (provider.getAllInstances().size() < 8) {
            Thread.sleep(20);
        }
        long sum = 0;
        long warm = System.nanoTime() + 1_000_000_000L;
        while (System.nanoTime() < warm) {
            sum += provider.getInstance().getPort();
        }
        long start = System.nanoTime();
        long end = start + (long) (secs * 1e9);
        long n = 0;
        long now;
        do {
            for (int i = 0; i < 1000; i++) {
                sum += provider.getInstance().getPort();
            }
            n += 1000;
            now = System.nanoTime();
        } while (now < end);
        CuratorPeers.say("LOOKUP " + n + " " + (now - start) + " " + sum);
        provider.close();
        discovery.close();
        client.close();
    }
}
