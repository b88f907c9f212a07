// Curator writing a tree, driven by conformance/tests/recipes_cache_interop.rs, which watches
// it through zk-recipes' Cache. Compiled by the test with javac against Debian's jars.
//
//   java CuratorTreeWriter CONNECT ROOT
//
// Under ROOT (which exists): creates svc/a/x (parents as containers, as Curator's recipes
// do), svc/b/y, then three protected ephemeral-sequential members under svc/members; sets
// svc/a/x 50 times ("x0".."x49"); deletes svc/b with its children; in one transaction creates
// svc/c and sets svc/a to "a1". Prints DONE and waits for a line on stdin, then closes its
// session (its ephemeral members go with it) and prints CLOSED.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;

public final class CuratorTreeWriter {
    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        String root = args[1];
        CuratorFramework c = CuratorFrameworkFactory.newClient(
                args[0], 30_000, 15_000, new ExponentialBackoffRetry(200, 5));
        c.start();
        if (!c.blockUntilConnected(60, TimeUnit.SECONDS)) {
            System.out.println("ERROR no connection");
            return;
        }
        String svc = root + "/svc";
        c.create().creatingParentContainersIfNeeded().forPath(svc + "/a/x", utf8("x"));
        c.create().creatingParentContainersIfNeeded().forPath(svc + "/b/y", utf8("y"));
        for (int i = 0; i < 3; i++) {
            c.create().creatingParentContainersIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .forPath(svc + "/members/m-", utf8("member" + i));
        }
        for (int i = 0; i < 50; i++) {
            c.setData().forPath(svc + "/a/x", utf8("x" + i));
        }
        c.delete().deletingChildrenIfNeeded().forPath(svc + "/b");
        c.transaction().forOperations(
                c.transactionOp().create().forPath(svc + "/c", utf8("c")),
                c.transactionOp().setData().forPath(svc + "/a", utf8("a1")));
        System.out.println("DONE");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        c.close();
        System.out.println("CLOSED");
        System.out.flush();
    }
}
