//! Writes the seed corpus: valid frames built with zk-proto's own encoders.
//!
//! `bash fuzz/run.sh seed` runs it (uninstrumented) as `cargo run --release --example seed --
//! corpus`. Server→client frames seed `server_frames`, client→server frames seed `client_frames`,
//! and `roundtrip` gets both. Each seed is one length-prefixed frame, except `*-stream` seeds,
//! which hold several frames back to back, as they arrive on a socket.

use std::path::Path;

use bytes::{Bytes, BytesMut};
use tokio_util::codec::Decoder;
use zk_proto::jute::Record;
use zk_proto::*;

fn frame(body: impl FnOnce(&mut BytesMut)) -> Vec<u8> {
    let mut out = BytesMut::new();
    FrameCodec::new()
        .encode_with(&mut out, body)
        .expect("seed frames are small");
    out.to_vec()
}

fn reply(xid: i32, err: i32, body: Option<Response>) -> Vec<u8> {
    frame(|b| {
        ReplyHeader {
            xid,
            zxid: 0x1_0000_0042,
            err,
        }
        .encode(b);
        if let Some(body) = body {
            body.encode(b);
        }
    })
}

fn request(xid: i32, req: Request) -> Vec<u8> {
    frame(|b| req.encode(xid, b))
}

fn stat() -> Stat {
    Stat {
        czxid: 0x1_0000_0002,
        mzxid: 0x1_0000_0042,
        ctime: 1_700_000_000_000,
        mtime: 1_700_000_123_456,
        version: 3,
        cversion: 2,
        aversion: 0,
        ephemeral_owner: 0,
        data_length: 5,
        num_children: 2,
        pzxid: 0x1_0000_0040,
    }
}

fn create(path: &str, mode: CreateMode) -> CreateRequest {
    CreateRequest {
        path: path.to_owned(),
        data: Some(Bytes::from_static(b"hello")),
        acl: Acl::open_unsafe(),
        mode,
    }
}

fn server_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let children = GetChildrenResponse {
        children: vec!["a".into(), "lock-0000000001".into(), "z".into()],
    };
    let multi = MultiResponse {
        results: vec![
            MultiResult::Create(CreateResponse {
                path: "/app/n-0000000007".into(),
            }),
            MultiResult::SetData(stat()),
            MultiResult::Delete,
            MultiResult::Check,
        ],
    };
    let failed_multi = MultiResponse {
        results: vec![
            MultiResult::Error(ErrorCode::Ok),
            MultiResult::Error(ErrorCode::NoNode),
            MultiResult::Error(ErrorCode::RuntimeInconsistency),
        ],
    };
    let event = WatcherEvent {
        event_type: EventType::NodeDataChanged,
        state: KeeperState::SyncConnected,
        path: "/app/config".into(),
    };
    let connect = ConnectResponse {
        protocol_version: 0,
        timeout: 30_000,
        session_id: 0x0100_0000_abcd_0001,
        passwd: Bytes::from_static(&[7; 16]),
        read_only: false,
    };
    let get_data = Response::GetData(GetDataResponse {
        data: Some(Bytes::from_static(b"hello")),
        stat: stat(),
    });
    let mut stream = reply(-2, 0, None);
    stream.extend(reply(1, 0, Some(get_data.clone())));
    stream.extend(frame(|b| {
        ReplyHeader {
            xid: -1,
            zxid: -1,
            err: 0,
        }
        .encode(b);
        event.encode(b);
    }));
    stream.extend(reply(2, ErrorCode::NoNode.code(), None));
    vec![
        ("connect-response", frame(|b| connect.encode(b))),
        ("ping", reply(-2, 0, None)),
        ("get-data", reply(1, 0, Some(get_data))),
        (
            "get-data-null",
            reply(
                1,
                0,
                Some(Response::GetData(GetDataResponse {
                    data: None,
                    stat: stat(),
                })),
            ),
        ),
        ("exists", reply(2, 0, Some(Response::Stat(stat())))),
        ("no-node", reply(3, ErrorCode::NoNode.code(), None)),
        (
            "get-children",
            reply(4, 0, Some(Response::GetChildren(children.clone()))),
        ),
        (
            "get-children2",
            reply(
                5,
                0,
                Some(Response::GetChildren2(GetChildren2Response {
                    children: children.children,
                    stat: stat(),
                })),
            ),
        ),
        (
            "create2",
            reply(
                6,
                0,
                Some(Response::Create2(Create2Response {
                    path: "/app/n-0000000007".into(),
                    stat: stat(),
                })),
            ),
        ),
        (
            "get-acl",
            reply(
                7,
                0,
                Some(Response::GetAcl(GetAclResponse {
                    acl: Acl::creator_all(),
                    stat: stat(),
                })),
            ),
        ),
        ("multi", reply(8, 0, Some(Response::Multi(multi)))),
        (
            "multi-failed",
            reply(9, 0, Some(Response::Multi(failed_multi))),
        ),
        (
            "who-am-i",
            reply(
                10,
                0,
                Some(Response::WhoAmI(WhoAmIResponse {
                    client_info: vec![ClientInfo {
                        auth_scheme: "digest".into(),
                        user: "alice".into(),
                    }],
                })),
            ),
        ),
        (
            "notification",
            frame(|b| {
                ReplyHeader {
                    xid: -1,
                    zxid: -1,
                    err: 0,
                }
                .encode(b);
                event.encode(b);
            }),
        ),
        ("server-stream", stream),
    ]
}

fn client_seeds() -> Vec<(&'static str, Vec<u8>)> {
    let connect = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout: 30_000,
        session_id: 0,
        passwd: Bytes::from_static(&[0; 16]),
        read_only: false,
    };
    let multi = MultiRequest {
        ops: vec![
            MultiOp::Create(create("/app/n-", CreateMode::PersistentSequential)),
            MultiOp::SetData(SetDataRequest {
                path: "/app/config".into(),
                data: Some(Bytes::from_static(b"v2")),
                version: 3,
            }),
            MultiOp::Delete(DeleteRequest {
                path: "/app/old".into(),
                version: -1,
            }),
            MultiOp::Check(CheckVersionRequest {
                path: "/app".into(),
                version: 7,
            }),
        ],
    };
    let mut stream = frame(|b| connect.encode(b));
    stream.extend(request(
        1,
        Request::GetData(GetDataRequest {
            path: "/app/config".into(),
            watch: true,
        }),
    ));
    stream.extend(request(xid::PING, Request::Ping));
    vec![
        ("connect-request", frame(|b| connect.encode(b))),
        (
            "create",
            request(1, Request::Create(create("/app", CreateMode::Persistent))),
        ),
        (
            "create-ttl",
            request(
                2,
                Request::CreateTtl(CreateTtlRequest {
                    path: "/ttl".into(),
                    data: None,
                    acl: Acl::open_unsafe(),
                    mode: CreateMode::PersistentWithTtl,
                    ttl: 60_000,
                }),
            ),
        ),
        (
            "get-data",
            request(
                3,
                Request::GetData(GetDataRequest {
                    path: "/app/config".into(),
                    watch: true,
                }),
            ),
        ),
        ("multi", request(4, Request::Multi(multi))),
        (
            "multi-read",
            request(
                5,
                Request::MultiRead(MultiRequest {
                    ops: vec![
                        MultiOp::GetData(GetDataRequest {
                            path: "/a".into(),
                            watch: false,
                        }),
                        MultiOp::GetChildren(GetChildrenRequest {
                            path: "/".into(),
                            watch: false,
                        }),
                    ],
                }),
            ),
        ),
        (
            "set-watches2",
            request(
                xid::SET_WATCHES,
                Request::SetWatches2(SetWatches2 {
                    relative_zxid: 0x1_0000_0042,
                    data_watches: vec!["/a".into()],
                    exist_watches: vec!["/b".into()],
                    child_watches: vec!["/".into()],
                    persistent_watches: vec!["/p".into()],
                    persistent_recursive_watches: vec!["/r".into()],
                }),
            ),
        ),
        (
            "auth",
            request(
                xid::AUTH,
                Request::Auth(AuthPacket {
                    auth_type: 0,
                    scheme: "digest".into(),
                    auth: Some(Bytes::from_static(b"alice:secret")),
                }),
            ),
        ),
        (
            "add-watch",
            request(
                6,
                Request::AddWatch(AddWatchRequest {
                    path: "/app".into(),
                    mode: AddWatchMode::PersistentRecursive,
                }),
            ),
        ),
        ("ping", request(xid::PING, Request::Ping)),
        ("close", request(7, Request::CloseSession)),
        ("client-stream", stream),
    ]
}

/// Splits `seed` into frame bodies; every seed must be whole frames.
fn bodies(seed: &[u8]) -> Vec<Bytes> {
    let mut src = BytesMut::from(seed);
    let mut out = Vec::new();
    while let Some(body) = FrameCodec::new()
        .decode(&mut src)
        .expect("seed frames are valid")
    {
        out.push(body);
    }
    assert!(src.is_empty(), "a seed ends with a partial frame");
    out
}

/// Every server frame must decode as a reply to some opcode (with its body when err is 0), as a
/// notification, or as the connect response: a seed that decodes as nothing seeds nothing.
fn check_server(name: &str, seed: &[u8]) {
    for body in bodies(seed) {
        let as_reply = OpCode::ALL.iter().any(
            |&op| matches!(decode_reply(body.clone(), op), Ok((h, r)) if h.err != 0 || r.is_some()),
        );
        let ok = as_reply
            || decode_notification(body.clone()).is_ok()
            || ConnectResponse::decode_exact(body, "ConnectResponse").is_ok();
        assert!(ok, "server seed {name} does not decode");
    }
}

/// Every client frame must decode as a request or as the connect request.
fn check_client(name: &str, seed: &[u8]) {
    for body in bodies(seed) {
        let ok = Request::decode(body.clone()).is_ok()
            || ConnectRequest::decode_exact(body, "ConnectRequest").is_ok();
        assert!(ok, "client seed {name} does not decode");
    }
}

fn write(dir: &Path, target: &str, seeds: &[(&'static str, Vec<u8>)]) {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir).expect("create corpus dir");
    for (name, bytes) in seeds {
        std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("write seed");
    }
    println!("{}: {} seeds", dir.display(), seeds.len());
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| "corpus".into());
    let dir = Path::new(&dir);
    let server = server_seeds();
    let client = client_seeds();
    for (name, seed) in &server {
        check_server(name, seed);
    }
    for (name, seed) in &client {
        check_client(name, seed);
    }
    write(dir, "server_frames", &server);
    write(dir, "client_frames", &client);
    let both: Vec<_> = server.into_iter().chain(client).collect();
    write(dir, "roundtrip", &both);
}
