//! The values each record of golden.rs's `java.hex` should decode to, as
//! `zk-proto/golden/Golden.java` builds them.

use bytes::Bytes;
use zk_proto::*;

/// What a golden record should decode to.
pub enum Expect {
    Stat(Stat),
    ConnectRequest(ConnectRequest),
    /// A connect response; `has_read_only` is false for the 36-byte form.
    ConnectResponse(ConnectResponse, bool),
    Request(i32, Request),
    Reply(ReplyHeader, OpCode, Option<Response>),
    Notification(WatcherEvent),
}

/// Mirrors `Golden.stat`: every field different, so a misplaced field shows.
fn stat(seed: i64) -> Stat {
    Stat {
        czxid: 0x1_0000_0001 * seed,
        mzxid: 0x2_0000_0002 * seed,
        ctime: 1_700_000_000_000 + seed,
        mtime: 1_700_000_001_000 + seed,
        version: seed as i32 + 1,
        cversion: seed as i32 + 2,
        aversion: seed as i32 + 3,
        ephemeral_owner: if seed == 0 {
            0
        } else {
            0x0123_4567_89ab_cdef + seed
        },
        data_length: seed as i32 + 4,
        num_children: seed as i32 + 5,
        pzxid: 0x3_0000_0003 * seed,
    }
}

fn counting(n: u8, start: u8) -> Bytes {
    (0..n).map(|i| start.wrapping_add(i)).collect()
}

fn s(v: &str) -> String {
    v.to_owned()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| s(x)).collect()
}

fn reply(xid: i32, zxid: i64) -> ReplyHeader {
    ReplyHeader { xid, zxid, err: 0 }
}

fn two_acls() -> Vec<Acl> {
    vec![
        Acl::new(Perms::ALL, Id::anyone()),
        Acl::new(Perms::READ | Perms::WRITE, Id::new("digest", "user:hash=")),
    ]
}

fn create(path: &str, data: Option<&'static [u8]>, mode: CreateMode) -> CreateRequest {
    CreateRequest {
        path: s(path),
        data: data.map(Bytes::from_static),
        acl: Acl::open_unsafe(),
        mode,
    }
}

pub fn expectations() -> Vec<(&'static str, Expect)> {
    use Expect as E;
    vec![
        (
            "connect_request_ro",
            E::ConnectRequest(ConnectRequest {
                protocol_version: 0,
                last_zxid_seen: 0x1122_3344_5566_7788,
                timeout: 30_000,
                session_id: 0,
                passwd: Bytes::from_static(&[0; 16]),
                read_only: true,
            }),
        ),
        (
            "connect_request_resume",
            E::ConnectRequest(ConnectRequest {
                protocol_version: 0,
                last_zxid_seen: 0x2_0000_0005,
                timeout: 10_000,
                session_id: 0x0100_abcd_ef00_0001,
                passwd: counting(16, 1),
                read_only: false,
            }),
        ),
        (
            "connect_response_36",
            E::ConnectResponse(
                ConnectResponse {
                    protocol_version: 0,
                    timeout: 4000,
                    session_id: 0x0123_4567_89ab_cdef,
                    passwd: counting(16, 0xa0),
                    read_only: false,
                },
                false,
            ),
        ),
        (
            "connect_response_37",
            E::ConnectResponse(
                ConnectResponse {
                    protocol_version: 0,
                    timeout: 4000,
                    session_id: 0x0123_4567_89ab_cdef,
                    passwd: counting(16, 0xa0),
                    read_only: true,
                },
                true,
            ),
        ),
        ("stat", E::Stat(stat(7))),
        (
            "reply_header_error",
            E::Reply(
                ReplyHeader {
                    xid: 9,
                    zxid: 0x55,
                    err: -101,
                },
                OpCode::GetData,
                None,
            ),
        ),
        (
            "create_request",
            E::Request(
                7,
                Request::Create(CreateRequest {
                    path: s("/app/node"),
                    data: Some(Bytes::from_static(b"hello")),
                    acl: two_acls(),
                    mode: CreateMode::EphemeralSequential,
                }),
            ),
        ),
        (
            "create2_null_data",
            E::Request(
                8,
                Request::Create2(create("/app/empty", None, CreateMode::Persistent)),
            ),
        ),
        (
            "create_ttl_request",
            E::Request(
                15,
                Request::CreateTtl(CreateTtlRequest {
                    path: s("/ttl/node"),
                    data: Some(Bytes::from_static(b"t")),
                    acl: Acl::creator_all(),
                    mode: CreateMode::PersistentSequentialWithTtl,
                    ttl: 60_000,
                }),
            ),
        ),
        (
            "set_data_request_empty",
            E::Request(
                19,
                Request::SetData(SetDataRequest {
                    path: s("/d"),
                    data: Some(Bytes::new()),
                    version: 7,
                }),
            ),
        ),
        (
            "exists_request",
            E::Request(
                20,
                Request::Exists(ExistsRequest {
                    path: s("/e"),
                    watch: true,
                }),
            ),
        ),
        (
            "get_children2_request",
            E::Request(
                21,
                Request::GetChildren2(GetChildrenRequest {
                    path: s("/c"),
                    watch: false,
                }),
            ),
        ),
        (
            "remove_watches_request",
            E::Request(
                22,
                Request::RemoveWatches(RemoveWatchesRequest {
                    path: s("/w"),
                    watcher_type: WatcherType::Any,
                }),
            ),
        ),
        (
            "auth_packet",
            E::Request(
                xid::AUTH,
                Request::Auth(AuthPacket {
                    auth_type: 0,
                    scheme: s("digest"),
                    auth: Some(Bytes::from_static(b"user:pass")),
                }),
            ),
        ),
        (
            "add_watch_request",
            E::Request(
                16,
                Request::AddWatch(AddWatchRequest {
                    path: s("/watched"),
                    mode: AddWatchMode::PersistentRecursive,
                }),
            ),
        ),
        (
            "reconfig_request_nulls",
            E::Request(
                17,
                Request::Reconfig(ReconfigRequest {
                    joining_servers: None,
                    leaving_servers: Some(s("2,3")),
                    new_members: None,
                    cur_config_id: -1,
                }),
            ),
        ),
        (
            "set_watches",
            E::Request(
                xid::SET_WATCHES,
                Request::SetWatches(SetWatches {
                    relative_zxid: 0x10,
                    data_watches: strings(&["/d"]),
                    exist_watches: strings(&["/e1", "/e2"]),
                    child_watches: vec![],
                }),
            ),
        ),
        (
            "set_watches2",
            E::Request(
                xid::SET_WATCHES,
                Request::SetWatches2(SetWatches2 {
                    relative_zxid: 0x300,
                    data_watches: strings(&["/d1", "/d2"]),
                    exist_watches: strings(&["/e"]),
                    child_watches: vec![],
                    persistent_watches: strings(&["/p"]),
                    persistent_recursive_watches: strings(&["/r1", "/r2"]),
                }),
            ),
        ),
        ("ping_request", E::Request(xid::PING, Request::Ping)),
        ("who_am_i_request", E::Request(23, Request::WhoAmI)),
        (
            "close_session_request",
            E::Request(24, Request::CloseSession),
        ),
        (
            "multi_request",
            E::Request(
                12,
                Request::Multi(MultiRequest {
                    ops: vec![
                        MultiOp::Create(create("/m/a", Some(b"A"), CreateMode::Persistent)),
                        MultiOp::Create(create("/m/seq-", None, CreateMode::EphemeralSequential)),
                        MultiOp::CreateContainer(create("/m/c", Some(b""), CreateMode::Container)),
                        MultiOp::CreateTtl(CreateTtlRequest {
                            path: s("/m/ttl"),
                            data: Some(Bytes::from_static(b"T")),
                            acl: Acl::open_unsafe(),
                            mode: CreateMode::PersistentWithTtl,
                            ttl: 5000,
                        }),
                        MultiOp::Delete(DeleteRequest {
                            path: s("/m/x"),
                            version: 4,
                        }),
                        MultiOp::SetData(SetDataRequest {
                            path: s("/m/y"),
                            data: Some(Bytes::from_static(b"Y")),
                            version: -1,
                        }),
                        MultiOp::Check(CheckVersionRequest {
                            path: s("/m"),
                            version: 2,
                        }),
                    ],
                }),
            ),
        ),
        (
            "multi_read_request",
            E::Request(
                13,
                Request::MultiRead(MultiRequest {
                    ops: vec![
                        MultiOp::GetChildren(GetChildrenRequest {
                            path: s("/m"),
                            watch: false,
                        }),
                        MultiOp::GetData(GetDataRequest {
                            path: s("/m/a"),
                            watch: false,
                        }),
                    ],
                }),
            ),
        ),
        (
            "get_data_response",
            E::Reply(
                reply(5, 0x1_0000_0002),
                OpCode::GetData,
                Some(Response::GetData(GetDataResponse {
                    data: Some(Bytes::from_static(b"value")),
                    stat: stat(1),
                })),
            ),
        ),
        (
            "get_data_response_null",
            E::Reply(
                reply(6, 0x1_0000_0003),
                OpCode::GetData,
                Some(Response::GetData(GetDataResponse {
                    data: None,
                    stat: stat(2),
                })),
            ),
        ),
        (
            "get_children2_response",
            E::Reply(
                reply(14, 0x402),
                OpCode::GetChildren2,
                Some(Response::GetChildren2(GetChildren2Response {
                    children: strings(&["x", "y", "z"]),
                    stat: stat(3),
                })),
            ),
        ),
        (
            "get_acl_response",
            E::Reply(
                reply(25, 0x405),
                OpCode::GetAcl,
                Some(Response::GetAcl(GetAclResponse {
                    acl: two_acls(),
                    stat: stat(4),
                })),
            ),
        ),
        (
            "who_am_i_response",
            E::Reply(
                reply(18, 0x403),
                OpCode::WhoAmI,
                Some(Response::WhoAmI(WhoAmIResponse {
                    client_info: vec![
                        ClientInfo {
                            auth_scheme: s("ip"),
                            user: s("127.0.0.1"),
                        },
                        ClientInfo {
                            auth_scheme: s("digest"),
                            user: s("user"),
                        },
                    ],
                })),
            ),
        ),
        (
            "add_watch_response",
            E::Reply(
                reply(16, 0x404),
                OpCode::AddWatch,
                Some(Response::Error(ErrorResponse { err: 0 })),
            ),
        ),
        (
            "sync_response",
            E::Reply(
                reply(26, 0x406),
                OpCode::Sync,
                Some(Response::Sync(SyncResponse { path: s("/s") })),
            ),
        ),
        (
            "get_ephemerals_response",
            E::Reply(
                reply(27, 0x407),
                OpCode::GetEphemerals,
                Some(Response::GetEphemerals(GetEphemeralsResponse {
                    ephemerals: strings(&["/e1", "/a/e2"]),
                })),
            ),
        ),
        (
            "get_all_children_number_response",
            E::Reply(
                reply(28, 0x408),
                OpCode::GetAllChildrenNumber,
                Some(Response::GetAllChildrenNumber(
                    GetAllChildrenNumberResponse { total_number: 42 },
                )),
            ),
        ),
        (
            "watcher_event",
            E::Notification(WatcherEvent {
                event_type: EventType::NodeDataChanged,
                state: KeeperState::SyncConnected,
                path: s("/a/b"),
            }),
        ),
        (
            "multi_response",
            E::Reply(
                reply(12, 0x400),
                OpCode::Multi,
                Some(Response::Multi(MultiResponse {
                    results: vec![
                        MultiResult::Create(CreateResponse { path: s("/m/a") }),
                        MultiResult::Create2(Create2Response {
                            path: s("/m/c"),
                            stat: stat(5),
                        }),
                        MultiResult::Delete,
                        MultiResult::SetData(stat(6)),
                        MultiResult::Check,
                    ],
                })),
            ),
        ),
        (
            "multi_response_failed",
            E::Reply(
                reply(12, 0x400),
                OpCode::Multi,
                Some(Response::Multi(MultiResponse {
                    results: vec![
                        MultiResult::Error(ErrorCode::Ok),
                        MultiResult::Error(ErrorCode::NoNode),
                        MultiResult::Error(ErrorCode::RuntimeInconsistency),
                    ],
                })),
            ),
        ),
        (
            "multi_read_response",
            E::Reply(
                reply(13, 0x401),
                OpCode::MultiRead,
                Some(Response::Multi(MultiResponse {
                    results: vec![
                        MultiResult::GetChildren(GetChildrenResponse {
                            children: strings(&["a", "c"]),
                        }),
                        MultiResult::GetData(GetDataResponse {
                            data: Some(Bytes::from_static(b"A")),
                            stat: stat(8),
                        }),
                        MultiResult::Error(ErrorCode::NoNode),
                    ],
                })),
            ),
        ),
    ]
}
