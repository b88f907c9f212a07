//! The raw connection against a real server: a session by hand, well-formed requests
//! answered and decoded, and frames no client would send.

use bytes::Bytes;
use zk_proto::{
    Acl, CreateMode, CreateRequest, DeleteRequest, ErrorCode, GetDataRequest, OpCode, Request,
    Response,
};
use zk_testkit::{
    raw::{RawConnection, RawError},
    shared_standalone,
};

fn unique(tag: &str) -> String {
    format!("/testkit-raw-{tag}-{}", std::process::id())
}

fn session() -> RawConnection {
    let mut conn = RawConnection::connect(shared_standalone().client_addr()).unwrap();
    let answer = conn.handshake(10_000).unwrap();
    assert!(!answer.is_expired(), "{answer:?}");
    assert_ne!(answer.session_id, 0);
    conn
}

#[test]
fn requests_by_hand_are_answered_and_decoded() {
    let mut conn = session();
    let path = unique("crud");
    let create = Request::Create(CreateRequest {
        path: path.clone(),
        data: Some(Bytes::from_static(b"hello")),
        acl: Acl::open_unsafe(),
        mode: CreateMode::Ephemeral,
    });
    let (header, reply) = conn.call(1, &create).unwrap();
    assert_eq!((header.xid, header.error_code()), (1, ErrorCode::Ok));
    assert!(matches!(reply, Some(Response::Create(r)) if r.path == path));

    let get = Request::GetData(GetDataRequest {
        path: path.clone(),
        watch: false,
    });
    let (_, reply) = conn.call(2, &get).unwrap();
    let Some(Response::GetData(data)) = reply else {
        panic!("not a getData reply: {reply:?}");
    };
    assert_eq!(data.data.as_deref(), Some(&b"hello"[..]));

    let delete = Request::Delete(DeleteRequest { path, version: -1 });
    assert_eq!(conn.call(3, &delete).unwrap().0.error_code(), ErrorCode::Ok);
    // The same request again: the error code comes back in the header, with no body.
    let (header, reply) = conn.call(4, &get).unwrap();
    assert_eq!(header.error_code(), ErrorCode::NoNode);
    assert!(reply.is_none());

    let (header, _) = conn.call(5, &Request::CloseSession).unwrap();
    assert_eq!(header.error_code(), ErrorCode::Ok);
    assert!(
        conn.recv_frame().unwrap().is_none(),
        "closed after closeSession"
    );
}

/// ZooKeeper 3.8 does not close the connection: it answers the request's xid with
/// MarshallingError, and the session goes on.
#[test]
fn a_request_with_a_truncated_path_is_answered_with_a_marshalling_error() {
    let mut conn = session();
    // xid 1, getData, a path of 9 bytes of which one is sent.
    let sent = conn
        .send_frame(|b| b.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 9, b'/']))
        .unwrap();
    assert_eq!(&sent[..4], &[0, 0, 0, 13], "the length prefix is added");
    let (header, body) = conn.recv_reply(OpCode::GetData).unwrap();
    assert_eq!(
        (header.xid, header.error_code()),
        (1, ErrorCode::MarshallingError)
    );
    assert!(body.is_none());
    let get = Request::GetData(GetDataRequest {
        path: "/".into(),
        watch: false,
    });
    assert_eq!(conn.call(2, &get).unwrap().0.error_code(), ErrorCode::Ok);
}

#[test]
fn a_negative_length_prefix_gets_the_connection_closed() {
    let mut conn = session();
    conn.send_bytes(&(-5i32).to_be_bytes()).unwrap();
    assert!(matches!(conn.recv_frame(), Ok(None) | Err(RawError::Io(_))));
}

#[test]
fn a_request_before_the_handshake_is_not_answered() {
    let mut conn = RawConnection::connect(shared_standalone().client_addr()).unwrap();
    // Read as a connect request, this is too short: the server drops the connection.
    let get = Request::GetData(GetDataRequest {
        path: "/".into(),
        watch: false,
    });
    conn.send_request(1, &get).unwrap();
    assert!(matches!(conn.recv_frame(), Ok(None) | Err(RawError::Io(_))));
}
