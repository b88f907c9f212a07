//! Malformed input: the server must close the connection or answer with an error, never
//! crash, hang or harm other sessions (the runner's probe session checks that after each).

use std::net::Shutdown;

use bytes::{BufMut, BytesMut};
use zk_proto::{decode_reply, OpCode, Request};

use zk_proto::jute::Record;

use crate::{
    check::{ensure, ensure_eq, fail, Area, Check, CheckResult},
    ctx::{Conn, Ctx, Ending},
    req,
};

const FRAMING: &str = "zookeeper.jute: framing (i32 length, jute.maxbuffer)";
const HEADER: &str = "zookeeper.jute: RequestHeader";
const BUG_NETTY_EMPTY_FRAME: &str = "ZooKeeper, seen on 3.8.0 with the Netty connection factory \
(serverCnxnFactory=NettyServerCnxnFactory, which TLS needs; we know of no JIRA issue): \
NettyServerCnxn.receiveMessage reads a frame's body only when more bytes arrive, so an empty frame \
is left unread and the connection open and silent (the NIO factory closes it at once). Reproduce: \
a session on a Netty client port; send 00000000: nothing comes back; send one more byte: the \
server reads the empty frame and closes the connection";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Malformed, "malformed";
    "truncated-record", "a frame whose record is cut short is refused (error or close)", "zookeeper.jute: GetDataRequest", truncated_record;
    "truncated-frame", "a frame cut short by the client's close ends the connection", FRAMING, truncated_frame;
    "negative-length", "a negative length prefix closes the connection", FRAMING, negative_length;
    "huge-length", "a length prefix of 2^31-1 closes the connection without waiting for the bytes", FRAMING, huge_length;
    "over-max-length", "a length prefix just over jute.maxbuffer closes the connection", FRAMING, over_max_length;
    "zero-length", "an empty frame after the handshake is refused (error or close)", FRAMING, zero_length, bug = BUG_NETTY_EMPTY_FRAME;
    "unknown-opcode", "an unknown opcode is refused (error or close), never answered as a success", HEADER, unknown_opcode;
    "notification-xid", "a request with the notification xid -1 is answered or closed, not hung on", HEADER, notification_xid;
    "garbage-after-frame", "garbage after a valid frame: the connection closes, after at most the valid request's reply", FRAMING, garbage_after_frame;
    "garbage-before-connect", "a first frame that is not a ConnectRequest closes the connection", "zookeeper.jute: ConnectRequest", garbage_before_connect;
    "request-before-connect", "a request header before any connect gets no session", "zookeeper.jute: ConnectRequest", request_before_connect;
    "truncated-connect", "a ConnectRequest cut short closes the connection", "zookeeper.jute: ConnectRequest", truncated_connect;
    "negative-string-length", "a path length below -1 is refused (error or close)", "zookeeper.jute: ustring", negative_string_length;
    "huge-vector-count", "an ACL count of 2^31-1 is refused (error or close) without allocating it", "zookeeper.jute: vector<ACL>", huge_vector_count;
    "multi-without-end", "a multi without its end marker is refused (error or close)", "zookeeper.jute: MultiHeader", multi_without_end;
);

/// A frame around `body`.
pub(crate) fn framed(body: &[u8]) -> Vec<u8> {
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

/// A request header.
fn header(xid: i32, op: i32) -> BytesMut {
    let mut b = BytesMut::new();
    b.put_i32(xid);
    b.put_i32(op);
    b
}

/// After a malformed request with `xid`: the server closes the connection, or answers
/// that xid with an error (and then may close).
pub(crate) fn refused(conn: &mut Conn, xid: i32, op: OpCode) -> CheckResult {
    match conn.ending()? {
        Ending::Closed => Ok(()),
        Ending::Frame(f) => {
            let (h, _) = decode_reply(f, op).map_err(|e| fail("a reply header", e.to_string()))?;
            ensure_eq("xid of the answer to the malformed request", h.xid, xid)?;
            ensure(
                h.err != 0,
                "an error code for the malformed request",
                || "0 (success)".into(),
            )
        }
    }
}

fn truncated_record(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let mut b = header(1, OpCode::GetData.code());
    b.put_i32(9);
    b.put_u8(b'/');
    conn.send_bytes(&framed(&b))?;
    refused(&mut conn, 1, OpCode::GetData)
}

fn truncated_frame(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    conn.send_bytes(&[0, 0, 0, 20, 0, 0, 0, 1, 0])?;
    let _ = conn.stream().shutdown(Shutdown::Write);
    conn.expect_closed("the server closes a connection whose client closed mid-frame")
}

/// A frame header with length prefix `len` (and a few bytes after it): the server must
/// close without waiting for the rest.
fn closes_on_length(ctx: &mut Ctx, len: i32, why: &str) -> CheckResult {
    let mut conn = ctx.session()?;
    let mut bytes = len.to_be_bytes().to_vec();
    bytes.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 3]);
    conn.send_bytes(&bytes)?;
    conn.expect_closed(why)
}

fn negative_length(ctx: &mut Ctx) -> CheckResult {
    closes_on_length(
        ctx,
        -1,
        "the server closes the connection on a negative length",
    )
}

fn huge_length(ctx: &mut Ctx) -> CheckResult {
    closes_on_length(
        ctx,
        i32::MAX,
        "the server closes the connection on a 2 GiB length",
    )
}

fn over_max_length(ctx: &mut Ctx) -> CheckResult {
    let why = "the server closes the connection on a length over jute.maxbuffer";
    closes_on_length(ctx, 0x10_0000, why)
}

fn zero_length(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    conn.send_bytes(&[0, 0, 0, 0])?;
    // No xid to answer: only a close or an error frame will do.
    match conn.ending()? {
        Ending::Closed => Ok(()),
        Ending::Frame(f) => {
            let (h, _) = decode_reply(f, OpCode::Error)
                .map_err(|e| fail("a reply header", e.to_string()))?;
            ensure(h.err != 0, "an error code", || "0 (success)".into())
        }
    }
}

fn unknown_opcode(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let mut b = header(1, 9999);
    b.put_i32(1);
    b.put_u8(b'/');
    conn.send_bytes(&framed(&b))?;
    refused(&mut conn, 1, OpCode::Error)
}

fn notification_xid(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    conn.send_with_xid(-1, &req::exists("/", false))?;
    conn.ending().map(drop)
}

fn garbage_after_frame(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let mut b = BytesMut::new();
    req::exists("/", false).encode(1, &mut b);
    let mut bytes = framed(&b);
    bytes.extend_from_slice(&[0x7f, 0xab, 0xcd, 0xef, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4]);
    conn.send_bytes(&bytes)?;
    // The server may close at once (the valid request then had the fate of any request on
    // a lost connection), or answer it first; anything it answers is that request's reply.
    for _ in 0..2 {
        match conn.ending()? {
            Ending::Closed => return Ok(()),
            Ending::Frame(f) => {
                let (h, _) = decode_reply(f, OpCode::Exists)
                    .map_err(|e| fail("a reply header", e.to_string()))?;
                ensure_eq("xid of the answer", h.xid, 1)?;
            }
        }
    }
    conn.expect_closed("the server closes the connection on the garbage")
}

/// The first frame is `bytes`: the server must close without giving a session.
pub(crate) fn no_session(conn: &mut Conn, why: &str) -> CheckResult {
    for _ in 0..4 {
        match conn.ending()? {
            Ending::Closed => return Ok(()),
            Ending::Frame(f) => {
                let resp = <zk_proto::ConnectResponse as Record>::decode_exact(
                    f.clone(),
                    "ConnectResponse",
                );
                if let Ok(r) = resp {
                    ensure(r.is_expired(), why, || format!("a session: {r:?}"))?;
                }
            }
        }
    }
    Err(fail(why, "frame after frame, never a close"))
}

fn garbage_before_connect(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.connect()?;
    conn.send_bytes(&framed(&[0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5]))?;
    no_session(&mut conn, "the connection closed without a session")
}

fn request_before_connect(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.connect()?;
    conn.send_with_xid(1, &req::get_data("/", false))?;
    no_session(&mut conn, "the connection closed without a session")
}

fn truncated_connect(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.connect()?;
    // protocolVersion, lastZxidSeen, then nothing.
    conn.send_bytes(&framed(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))?;
    no_session(&mut conn, "the connection closed without a session")
}

fn negative_string_length(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let mut b = header(1, OpCode::GetData.code());
    b.put_i32(-5);
    b.put_u8(0);
    conn.send_bytes(&framed(&b))?;
    refused(&mut conn, 1, OpCode::GetData)
}

fn huge_vector_count(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    let mut b = header(1, OpCode::Create.code());
    b.put_i32(path.len() as i32);
    b.put_slice(path.as_bytes());
    b.put_i32(-1); // null data
    b.put_i32(i32::MAX); // ACL count
    b.put_i32(31);
    conn.send_bytes(&framed(&b))?;
    refused(&mut conn, 1, OpCode::Create)?;
    // Nothing may have been created from it.
    let mut other = ctx.session()?;
    let stat = other.exists(&path, false)?;
    ensure(stat.is_none(), "no znode created", || format!("{stat:?}"))
}

fn multi_without_end(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    let mut b = BytesMut::new();
    Request::Multi(zk_proto::MultiRequest {
        ops: vec![zk_proto::MultiOp::Delete(zk_proto::DeleteRequest {
            path,
            version: -1,
        })],
    })
    .encode(1, &mut b);
    b.truncate(b.len() - zk_proto::MultiHeader::LEN);
    conn.send_bytes(&framed(&b))?;
    refused(&mut conn, 1, OpCode::Multi)
}
