// Serializes ZooKeeper records with the real Java jute classes and prints `name hex` lines.
// The Rust test tests/golden.rs checks that zk-proto decodes these bytes to the values built
// here and encodes those values back to the same bytes. Run gen.sh to regenerate.

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.Record;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.MultiOperationRecord;
import org.apache.zookeeper.MultiResponse;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.*;

public class Golden {
    interface Body {
        void write(BinaryOutputArchive a) throws IOException;
    }

    static void emit(String name, Body body) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        body.write(BinaryOutputArchive.getArchive(out));
        StringBuilder hex = new StringBuilder();
        for (byte b : out.toByteArray()) {
            hex.append(String.format("%02x", b));
        }
        System.out.println(name + " " + hex);
    }

    /** Serializes records one after another, as a header followed by a body. */
    static void emit(String name, Record... records) throws IOException {
        emit(name, a -> {
            for (Record r : records) {
                r.serialize(a, "r");
            }
        });
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A Stat whose fields are all different, so a misplaced field shows. */
    static Stat stat(int seed) {
        return new Stat(
                0x100000001L * seed, 0x200000002L * seed, 1700000000000L + seed, 1700000001000L + seed,
                seed + 1, seed + 2, seed + 3, seed == 0 ? 0 : 0x0123456789abcdefL + seed, seed + 4,
                seed + 5, 0x300000003L * seed);
    }

    static byte[] bytes(int n, int start) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (start + i);
        }
        return b;
    }

    public static void main(String[] args) throws Exception {
        List<ACL> twoAcls = Arrays.asList(
                new ACL(ZooDefs.Perms.ALL, new Id("world", "anyone")),
                new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.WRITE, new Id("digest", "user:hash=")));

        // Connect frames have no header; ClientCnxn writes readOnly after the record.
        emit("connect_request_ro", a -> {
            new ConnectRequest(0, 0x1122334455667788L, 30000, 0L, new byte[16]).serialize(a, "connect");
            a.writeBool(true, "readOnly");
        });
        emit("connect_request_resume", a -> {
            new ConnectRequest(0, 0x200000005L, 10000, 0x0100abcdef000001L, bytes(16, 1)).serialize(a, "connect");
            a.writeBool(false, "readOnly");
        });
        // The server appends readOnly too; old servers do not (36-byte body).
        emit("connect_response_36", new ConnectResponse(0, 4000, 0x0123456789abcdefL, bytes(16, 0xa0)));
        emit("connect_response_37", a -> {
            new ConnectResponse(0, 4000, 0x0123456789abcdefL, bytes(16, 0xa0)).serialize(a, "connect");
            a.writeBool(true, "readOnly");
        });

        emit("stat", stat(7));
        emit("reply_header_error", new ReplyHeader(9, 0x55L, -101));

        // Requests: header + body.
        emit("create_request", new RequestHeader(7, ZooDefs.OpCode.create),
                new CreateRequest("/app/node", utf8("hello"), twoAcls, 3));
        emit("create2_null_data", new RequestHeader(8, ZooDefs.OpCode.create2),
                new CreateRequest("/app/empty", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, 0));
        emit("create_ttl_request", new RequestHeader(15, ZooDefs.OpCode.createTTL),
                new CreateTTLRequest("/ttl/node", utf8("t"), ZooDefs.Ids.CREATOR_ALL_ACL, 6, 60000L));
        emit("set_data_request_empty", new RequestHeader(19, ZooDefs.OpCode.setData),
                new SetDataRequest("/d", new byte[0], 7));
        emit("exists_request", new RequestHeader(20, ZooDefs.OpCode.exists), new ExistsRequest("/e", true));
        emit("get_children2_request", new RequestHeader(21, ZooDefs.OpCode.getChildren2),
                new GetChildren2Request("/c", false));
        emit("remove_watches_request", new RequestHeader(22, ZooDefs.OpCode.removeWatches),
                new RemoveWatchesRequest("/w", 3));
        emit("auth_packet", new RequestHeader(-4, ZooDefs.OpCode.auth),
                new AuthPacket(0, "digest", utf8("user:pass")));
        emit("add_watch_request", new RequestHeader(16, ZooDefs.OpCode.addWatch),
                new AddWatchRequest("/watched", 1));
        emit("reconfig_request_nulls", new RequestHeader(17, ZooDefs.OpCode.reconfig),
                new ReconfigRequest(null, "2,3", null, -1L));
        emit("set_watches", new RequestHeader(-8, ZooDefs.OpCode.setWatches),
                new SetWatches(0x10L, Arrays.asList("/d"), Arrays.asList("/e1", "/e2"), Collections.emptyList()));
        emit("set_watches2", new RequestHeader(-8, ZooDefs.OpCode.setWatches2),
                new SetWatches2(0x300L, Arrays.asList("/d1", "/d2"), Arrays.asList("/e"), Collections.emptyList(),
                        Arrays.asList("/p"), Arrays.asList("/r1", "/r2")));
        emit("ping_request", new RequestHeader(-2, ZooDefs.OpCode.ping));
        emit("who_am_i_request", new RequestHeader(23, ZooDefs.OpCode.whoAmI));
        emit("close_session_request", new RequestHeader(24, ZooDefs.OpCode.closeSession));

        // Multi requests, built the way ZooKeeper.multi builds them.
        List<Op> writes = new ArrayList<>();
        writes.add(Op.create("/m/a", utf8("A"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
        writes.add(Op.create("/m/seq-", null, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL));
        writes.add(Op.create("/m/c", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER));
        writes.add(Op.create("/m/ttl", utf8("T"), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_WITH_TTL, 5000L));
        writes.add(Op.delete("/m/x", 4));
        writes.add(Op.setData("/m/y", utf8("Y"), -1));
        writes.add(Op.check("/m", 2));
        emit("multi_request", new RequestHeader(12, ZooDefs.OpCode.multi), new MultiOperationRecord(writes));
        emit("multi_read_request", new RequestHeader(13, ZooDefs.OpCode.multiRead),
                new MultiOperationRecord(Arrays.asList(Op.getChildren("/m"), Op.getData("/m/a"))));

        // Replies: header + body.
        emit("get_data_response", new ReplyHeader(5, 0x100000002L, 0), new GetDataResponse(utf8("value"), stat(1)));
        emit("get_data_response_null", new ReplyHeader(6, 0x100000003L, 0), new GetDataResponse(null, stat(2)));
        emit("get_children2_response", new ReplyHeader(14, 0x402L, 0),
                new GetChildren2Response(Arrays.asList("x", "y", "z"), stat(3)));
        emit("get_acl_response", new ReplyHeader(25, 0x405L, 0), new GetACLResponse(twoAcls, stat(4)));
        emit("who_am_i_response", new ReplyHeader(18, 0x403L, 0), new WhoAmIResponse(Arrays.asList(
                new ClientInfo("ip", "127.0.0.1"), new ClientInfo("digest", "user"))));
        emit("add_watch_response", new ReplyHeader(16, 0x404L, 0), new ErrorResponse(0));
        emit("sync_response", new ReplyHeader(26, 0x406L, 0), new SyncResponse("/s"));
        emit("get_ephemerals_response", new ReplyHeader(27, 0x407L, 0),
                new GetEphemeralsResponse(Arrays.asList("/e1", "/a/e2")));
        emit("get_all_children_number_response", new ReplyHeader(28, 0x408L, 0),
                new GetAllChildrenNumberResponse(42));
        emit("watcher_event", new ReplyHeader(-1, -1L, 0), new WatcherEvent(3, 3, "/a/b"));

        MultiResponse ok = new MultiResponse();
        ok.add(new OpResult.CreateResult("/m/a"));
        ok.add(new OpResult.CreateResult("/m/c", stat(5)));
        ok.add(new OpResult.DeleteResult());
        ok.add(new OpResult.SetDataResult(stat(6)));
        ok.add(new OpResult.CheckResult());
        emit("multi_response", new ReplyHeader(12, 0x400L, 0), ok);

        // A failed transaction: ops before the failure carry 0, the failing op its code,
        // ops after it RUNTIMEINCONSISTENCY.
        MultiResponse failed = new MultiResponse();
        failed.add(new OpResult.ErrorResult(0));
        failed.add(new OpResult.ErrorResult(-101));
        failed.add(new OpResult.ErrorResult(-2));
        emit("multi_response_failed", new ReplyHeader(12, 0x400L, 0), failed);

        MultiResponse reads = new MultiResponse();
        reads.add(new OpResult.GetChildrenResult(Arrays.asList("a", "c")));
        reads.add(new OpResult.GetDataResult(utf8("A"), stat(8)));
        reads.add(new OpResult.ErrorResult(-101));
        emit("multi_read_response", new ReplyHeader(13, 0x401L, 0), reads);
    }
}
