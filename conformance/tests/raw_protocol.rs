//! The wire protocol against a real ZooKeeper 3.8 server, using only zk-proto over the test
//! kit's raw connection (a plain blocking `TcpStream`): handshake, create / getData / delete
//! with data, NONODE after the delete, ping and closeSession. Against the shared standalone server and against every
//! member of a 3-server ensemble (one session per member).

use std::{
    net::SocketAddr,
    sync::atomic::{AtomicU32, Ordering},
    time::Duration,
};

use bytes::Bytes;
use conformance::{raw::RawConnection, shared_standalone, Ensemble};
use zk_proto::{
    decode_reply, jute::Record, xid, Acl, ConnectRequest, ConnectResponse, CreateMode,
    CreateRequest, DeleteRequest, ErrorCode, GetDataRequest, ReplyHeader, Request, Response,
    SyncRequest,
};

const IO_TIMEOUT: Duration = Duration::from_secs(10);
const SESSION_TIMEOUT_MS: i32 = 30_000;

/// A path no other test (or test run against the shared server) uses.
fn unique_path(tag: &str) -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    format!(
        "/raw-protocol-{tag}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// One raw connection (the test kit's) with the next xid to use.
struct RawConn {
    conn: RawConnection,
    next_xid: i32,
}

impl RawConn {
    fn connect(addr: SocketAddr) -> RawConn {
        let conn = RawConnection::connect(addr).expect("connect");
        conn.set_timeout(IO_TIMEOUT).unwrap();
        RawConn { conn, next_xid: 1 }
    }

    /// The next frame, or `None` when the server closed the connection (between frames).
    fn recv_frame(&mut self) -> Option<Bytes> {
        self.conn.recv_frame().expect("a valid frame")
    }

    /// The handshake for a new session: session id 0 and 16 zero bytes of password.
    fn handshake(&mut self) -> ConnectResponse {
        let req = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout: SESSION_TIMEOUT_MS,
            session_id: 0,
            passwd: Bytes::from_static(&[0; 16]),
            read_only: false,
        };
        self.conn.send_connect(&req).expect("write");
        let frame = self.recv_frame().expect("connect response");
        assert!(
            frame.len() == 36 || frame.len() == 37,
            "connect response body of {} bytes",
            frame.len()
        );
        let resp = ConnectResponse::decode_exact(frame, "ConnectResponse").unwrap();
        assert_eq!(resp.protocol_version, 0);
        assert!(!resp.is_expired(), "{resp:?}");
        assert_eq!(
            resp.timeout, SESSION_TIMEOUT_MS,
            "the server allows up to 60 s"
        );
        assert_ne!(resp.session_id, 0);
        assert_eq!(resp.passwd.len(), 16);
        assert!(!resp.read_only);
        resp
    }

    /// Sends `req` with `xid` and returns the reply, checking that the xid comes back.
    fn call_with_xid(&mut self, xid: i32, req: &Request) -> (ReplyHeader, Option<Response>) {
        self.conn.send_request(xid, req).expect("write");
        let frame = self.recv_frame().expect("a reply");
        let (header, body) = decode_reply(frame, req.op_code()).expect("a well-formed reply");
        assert_eq!(header.xid, xid, "reply to {:?}", req.op_code());
        (header, body)
    }

    fn call(&mut self, req: &Request) -> (ReplyHeader, Option<Response>) {
        let xid = self.next_xid;
        self.next_xid += 1;
        self.call_with_xid(xid, req)
    }
}

/// create / getData / delete / getData (NONODE) / ping / closeSession over one session.
fn create_read_delete_session(addr: SocketAddr, path: &str) {
    let mut conn = RawConn::connect(addr);
    conn.handshake();

    // create, with data
    let data = Bytes::from_static(b"raw protocol \x00\x01\xff data");
    let (h, body) = conn.call(&Request::Create(CreateRequest {
        path: path.to_string(),
        data: Some(data.clone()),
        acl: Acl::open_unsafe(),
        mode: CreateMode::Persistent,
    }));
    assert_eq!(h.error_code(), ErrorCode::Ok, "create {path}: {h:?}");
    assert!(h.zxid > 0);
    let create_zxid = h.zxid;
    match body {
        Some(Response::Create(c)) => assert_eq!(c.path, path),
        other => panic!("create reply body: {other:?}"),
    }

    // getData reads it back
    let (h, body) = conn.call(&Request::GetData(GetDataRequest {
        path: path.to_string(),
        watch: false,
    }));
    assert_eq!(h.error_code(), ErrorCode::Ok, "getData: {h:?}");
    assert!(h.zxid >= create_zxid);
    let Some(Response::GetData(got)) = body else {
        panic!("getData reply body: {body:?}");
    };
    assert_eq!(got.data.as_ref(), Some(&data));
    assert_eq!(got.stat.czxid, create_zxid);
    assert_eq!(got.stat.mzxid, create_zxid);
    assert_eq!(got.stat.version, 0);
    assert_eq!(got.stat.data_length as usize, data.len());
    assert_eq!(got.stat.num_children, 0);
    assert_eq!(got.stat.ephemeral_owner, 0);
    assert!(got.stat.ctime > 0 && got.stat.ctime == got.stat.mtime);

    // delete, with the right version
    let (h, body) = conn.call(&Request::Delete(DeleteRequest {
        path: path.to_string(),
        version: 0,
    }));
    assert_eq!(h.error_code(), ErrorCode::Ok, "delete: {h:?}");
    assert!(h.zxid > create_zxid);
    assert_eq!(body, Some(Response::Empty));
    let delete_zxid = h.zxid;

    // getData again: NONODE, no body
    let (h, body) = conn.call(&Request::GetData(GetDataRequest {
        path: path.to_string(),
        watch: false,
    }));
    assert_eq!(h.error_code(), ErrorCode::NoNode, "{h:?}");
    assert_eq!(h.err, -101);
    assert!(h.zxid >= delete_zxid);
    assert_eq!(body, None);

    // ping: xid -2 comes back
    let (h, body) = conn.call_with_xid(xid::PING, &Request::Ping);
    assert_eq!(h.error_code(), ErrorCode::Ok);
    assert_eq!(body, Some(Response::Empty));

    // closeSession: answered, then the server closes the socket
    let (h, body) = conn.call(&Request::CloseSession);
    assert_eq!(h.error_code(), ErrorCode::Ok, "closeSession: {h:?}");
    assert_eq!(body, Some(Response::Empty));
    assert_eq!(conn.recv_frame(), None, "the server keeps the socket open");
}

#[test]
fn raw_session_against_standalone() {
    let zk = shared_standalone();
    create_read_delete_session(zk.client_addr(), &unique_path("standalone"));
}

#[test]
fn raw_session_against_each_ensemble_member() {
    let ens = Ensemble::start(3).unwrap();
    for (i, server) in ens.servers().iter().enumerate() {
        create_read_delete_session(server.client_addr(), &unique_path(&format!("member{i}")));
    }

    // Writes through one member are visible through the others (after a sync).
    let path = unique_path("replicated");
    let mut writer = RawConn::connect(ens.server(0).client_addr());
    writer.handshake();
    let (h, _) = writer.call(&Request::Create(CreateRequest {
        path: path.clone(),
        data: Some(Bytes::from_static(b"v")),
        acl: Acl::open_unsafe(),
        mode: CreateMode::Persistent,
    }));
    assert_eq!(h.error_code(), ErrorCode::Ok);
    for server in &ens.servers()[1..] {
        let mut reader = RawConn::connect(server.client_addr());
        reader.handshake();
        let (h, body) = reader.call(&Request::Sync(SyncRequest { path: path.clone() }));
        assert_eq!(h.error_code(), ErrorCode::Ok);
        assert!(matches!(body, Some(Response::Sync(s)) if s.path == path));
        let (h, body) = reader.call(&Request::GetData(GetDataRequest {
            path: path.clone(),
            watch: false,
        }));
        assert_eq!(h.error_code(), ErrorCode::Ok);
        assert!(
            matches!(&body, Some(Response::GetData(g)) if g.data.as_deref() == Some(&b"v"[..])),
            "{body:?}"
        );
    }
}
