//! Property tests: every record, every request variant, every response opcode, multi and
//! connect records survive encode → decode unchanged, and truncated or extended encodings are
//! refused.

use std::fmt::Debug;

use bytes::{Bytes, BytesMut};
use proptest::{
    collection::vec,
    option,
    prelude::*,
    sample::select,
    strategy::Union,
    test_runner::{Config, TestCaseError, TestRunner},
};
use zk_proto::{jute::Record, *};

/// Declares `fn $name() -> impl Strategy<Value = $ty>` building `$ty` from one strategy per
/// field.
macro_rules! arb_struct {
    ($name:ident -> $ty:ident { $($field:ident: $strategy:expr),* $(,)? }) => {
        fn $name() -> impl Strategy<Value = $ty> {
            ($($strategy,)*).prop_map(|($($field,)*)| $ty { $($field),* })
        }
    };
}

// ---------------------------------------------------------------- primitives

fn arb_string() -> impl Strategy<Value = String> {
    // Mostly short ASCII paths, sometimes arbitrary Unicode.
    prop_oneof![3 => "/[a-z0-9/._-]{0,12}", 1 => ".{0,8}"]
}

fn arb_strings() -> impl Strategy<Value = Vec<String>> {
    vec(arb_string(), 0..5)
}

fn arb_opt_string() -> impl Strategy<Value = Option<String>> {
    option::of(arb_string())
}

fn arb_bytes() -> impl Strategy<Value = Bytes> {
    vec(any::<u8>(), 0..24).prop_map(Bytes::from)
}

fn arb_opt_bytes() -> impl Strategy<Value = Option<Bytes>> {
    option::of(arb_bytes())
}

fn arb_create_mode() -> impl Strategy<Value = CreateMode> {
    select(CreateMode::ALL)
}

fn arb_watcher_type() -> impl Strategy<Value = WatcherType> {
    select(vec![
        WatcherType::Children,
        WatcherType::Data,
        WatcherType::Any,
    ])
}

fn arb_add_watch_mode() -> impl Strategy<Value = AddWatchMode> {
    select(vec![
        AddWatchMode::Persistent,
        AddWatchMode::PersistentRecursive,
    ])
}

fn arb_event_type() -> impl Strategy<Value = EventType> {
    prop_oneof![-2..9i32, any::<i32>()].prop_map(EventType::from_code)
}

fn arb_keeper_state() -> impl Strategy<Value = KeeperState> {
    prop_oneof![-113..9i32, any::<i32>()].prop_map(KeeperState::from_code)
}

fn arb_error_code() -> impl Strategy<Value = ErrorCode> {
    prop_oneof![
        select(ErrorCode::ALL),
        any::<i32>().prop_map(ErrorCode::from_code)
    ]
}

fn arb_perms() -> impl Strategy<Value = Perms> {
    any::<i32>().prop_map(Perms)
}

// ---------------------------------------------------------------- small records

arb_struct!(arb_stat -> Stat {
    czxid: any::<i64>(),
    mzxid: any::<i64>(),
    ctime: any::<i64>(),
    mtime: any::<i64>(),
    version: any::<i32>(),
    cversion: any::<i32>(),
    aversion: any::<i32>(),
    ephemeral_owner: any::<i64>(),
    data_length: any::<i32>(),
    num_children: any::<i32>(),
    pzxid: any::<i64>(),
});
arb_struct!(arb_id -> Id { scheme: arb_string(), id: arb_string() });
arb_struct!(arb_acl -> Acl { perms: arb_perms(), id: arb_id() });

fn arb_acls() -> impl Strategy<Value = Vec<Acl>> {
    vec(arb_acl(), 0..4)
}

arb_struct!(arb_request_header -> RequestHeader { xid: any::<i32>(), op: any::<i32>() });
arb_struct!(arb_reply_header -> ReplyHeader {
    xid: any::<i32>(),
    zxid: any::<i64>(),
    err: any::<i32>(),
});
arb_struct!(arb_multi_header -> MultiHeader {
    op: any::<i32>(),
    done: any::<bool>(),
    err: any::<i32>(),
});
arb_struct!(arb_watcher_event -> WatcherEvent {
    event_type: arb_event_type(),
    state: arb_keeper_state(),
    path: arb_string(),
});
arb_struct!(arb_connect_request -> ConnectRequest {
    protocol_version: any::<i32>(),
    last_zxid_seen: any::<i64>(),
    timeout: any::<i32>(),
    session_id: any::<i64>(),
    passwd: arb_bytes(),
    read_only: any::<bool>(),
});
arb_struct!(arb_connect_response -> ConnectResponse {
    protocol_version: any::<i32>(),
    timeout: any::<i32>(),
    session_id: any::<i64>(),
    passwd: arb_bytes(),
    read_only: any::<bool>(),
});

// ---------------------------------------------------------------- request records

arb_struct!(arb_create -> CreateRequest {
    path: arb_string(),
    data: arb_opt_bytes(),
    acl: arb_acls(),
    mode: arb_create_mode(),
});
arb_struct!(arb_create_ttl -> CreateTtlRequest {
    path: arb_string(),
    data: arb_opt_bytes(),
    acl: arb_acls(),
    mode: arb_create_mode(),
    ttl: any::<i64>(),
});
arb_struct!(arb_delete -> DeleteRequest { path: arb_string(), version: any::<i32>() });
arb_struct!(arb_exists -> ExistsRequest { path: arb_string(), watch: any::<bool>() });
arb_struct!(arb_get_data -> GetDataRequest { path: arb_string(), watch: any::<bool>() });
arb_struct!(arb_set_data -> SetDataRequest {
    path: arb_string(),
    data: arb_opt_bytes(),
    version: any::<i32>(),
});
arb_struct!(arb_get_acl -> GetAclRequest { path: arb_string() });
arb_struct!(arb_set_acl -> SetAclRequest {
    path: arb_string(),
    acl: arb_acls(),
    version: any::<i32>(),
});
arb_struct!(arb_get_children -> GetChildrenRequest { path: arb_string(), watch: any::<bool>() });
arb_struct!(arb_sync -> SyncRequest { path: arb_string() });
arb_struct!(arb_check -> CheckVersionRequest { path: arb_string(), version: any::<i32>() });
arb_struct!(arb_reconfig -> ReconfigRequest {
    joining_servers: arb_opt_string(),
    leaving_servers: arb_opt_string(),
    new_members: arb_opt_string(),
    cur_config_id: any::<i64>(),
});
arb_struct!(arb_remove_watches -> RemoveWatchesRequest {
    path: arb_string(),
    watcher_type: arb_watcher_type(),
});
arb_struct!(arb_auth -> AuthPacket {
    auth_type: any::<i32>(),
    scheme: arb_string(),
    auth: arb_opt_bytes(),
});
arb_struct!(arb_set_watches -> SetWatches {
    relative_zxid: any::<i64>(),
    data_watches: arb_strings(),
    exist_watches: arb_strings(),
    child_watches: arb_strings(),
});
arb_struct!(arb_set_watches2 -> SetWatches2 {
    relative_zxid: any::<i64>(),
    data_watches: arb_strings(),
    exist_watches: arb_strings(),
    child_watches: arb_strings(),
    persistent_watches: arb_strings(),
    persistent_recursive_watches: arb_strings(),
});
arb_struct!(arb_sasl -> GetSaslRequest { token: arb_opt_bytes() });
arb_struct!(arb_get_ephemerals -> GetEphemeralsRequest { prefix_path: arb_string() });
arb_struct!(arb_get_all_children_number -> GetAllChildrenNumberRequest { path: arb_string() });
arb_struct!(arb_add_watch -> AddWatchRequest { path: arb_string(), mode: arb_add_watch_mode() });

// ---------------------------------------------------------------- response records

arb_struct!(arb_create_response -> CreateResponse { path: arb_string() });
arb_struct!(arb_create2_response -> Create2Response { path: arb_string(), stat: arb_stat() });
arb_struct!(arb_get_data_response -> GetDataResponse { data: arb_opt_bytes(), stat: arb_stat() });
arb_struct!(arb_get_acl_response -> GetAclResponse { acl: arb_acls(), stat: arb_stat() });
arb_struct!(arb_get_children_response -> GetChildrenResponse { children: arb_strings() });
arb_struct!(arb_get_children2_response -> GetChildren2Response {
    children: arb_strings(),
    stat: arb_stat(),
});
arb_struct!(arb_sync_response -> SyncResponse { path: arb_string() });
arb_struct!(arb_sasl_response -> GetSaslResponse { token: arb_opt_bytes() });
arb_struct!(arb_get_ephemerals_response -> GetEphemeralsResponse { ephemerals: arb_strings() });
arb_struct!(arb_get_all_children_number_response -> GetAllChildrenNumberResponse {
    total_number: any::<i32>(),
});
arb_struct!(arb_client_info -> ClientInfo { auth_scheme: arb_string(), user: arb_string() });
arb_struct!(arb_who_am_i_response -> WhoAmIResponse { client_info: vec(arb_client_info(), 0..4) });
arb_struct!(arb_error_response -> ErrorResponse { err: any::<i32>() });

// ---------------------------------------------------------------- multi

/// One strategy per write operation kind, so a test can cover each for sure.
fn write_op_kinds() -> Vec<BoxedStrategy<MultiOp>> {
    vec![
        tag(arb_create(), MultiOp::Create),
        tag(arb_create(), MultiOp::Create2),
        tag(arb_create(), MultiOp::CreateContainer),
        tag(arb_create_ttl(), MultiOp::CreateTtl),
        tag(arb_delete(), MultiOp::Delete),
        tag(arb_set_data(), MultiOp::SetData),
        tag(arb_check(), MultiOp::Check),
    ]
}

fn read_op_kinds() -> Vec<BoxedStrategy<MultiOp>> {
    vec![
        tag(arb_get_children(), MultiOp::GetChildren),
        tag(arb_get_data(), MultiOp::GetData),
    ]
}

fn result_kinds() -> Vec<BoxedStrategy<MultiResult>> {
    vec![
        tag(arb_create_response(), MultiResult::Create),
        tag(arb_create2_response(), MultiResult::Create2),
        Just(MultiResult::Delete).boxed(),
        tag(arb_stat(), MultiResult::SetData),
        Just(MultiResult::Check).boxed(),
        tag(arb_get_data_response(), MultiResult::GetData),
        tag(arb_get_children_response(), MultiResult::GetChildren),
        tag(arb_error_code(), MultiResult::Error),
    ]
}

arb_struct!(arb_multi_write -> MultiRequest { ops: vec(Union::new(write_op_kinds()), 0..6) });
arb_struct!(arb_multi_read -> MultiRequest { ops: vec(Union::new(read_op_kinds()), 0..6) });

fn arb_multi_request() -> impl Strategy<Value = MultiRequest> {
    prop_oneof![arb_multi_write(), arb_multi_read()]
}

arb_struct!(arb_multi_response -> MultiResponse { results: vec(Union::new(result_kinds()), 0..6) });

// ---------------------------------------------------------------- per-opcode strategies

/// Boxes `s` mapped into an enum variant.
fn tag<T: Debug + 'static, U: Debug + 'static>(
    s: impl Strategy<Value = T> + 'static,
    variant: fn(T) -> U,
) -> BoxedStrategy<U> {
    s.prop_map(variant).boxed()
}

/// A request with opcode `op`, or `None` for the opcodes that are not requests.
fn arb_request_for(op: OpCode) -> Option<BoxedStrategy<Request>> {
    use Request as R;
    Some(match op {
        OpCode::Create => tag(arb_create(), R::Create),
        OpCode::Create2 => tag(arb_create(), R::Create2),
        OpCode::CreateContainer => tag(arb_create(), R::CreateContainer),
        OpCode::CreateTtl => tag(arb_create_ttl(), R::CreateTtl),
        OpCode::Delete => tag(arb_delete(), R::Delete),
        OpCode::Exists => tag(arb_exists(), R::Exists),
        OpCode::GetData => tag(arb_get_data(), R::GetData),
        OpCode::SetData => tag(arb_set_data(), R::SetData),
        OpCode::GetAcl => tag(arb_get_acl(), R::GetAcl),
        OpCode::SetAcl => tag(arb_set_acl(), R::SetAcl),
        OpCode::GetChildren => tag(arb_get_children(), R::GetChildren),
        OpCode::GetChildren2 => tag(arb_get_children(), R::GetChildren2),
        OpCode::Sync => tag(arb_sync(), R::Sync),
        OpCode::Check => tag(arb_check(), R::Check),
        OpCode::Multi => tag(arb_multi_write(), R::Multi),
        OpCode::MultiRead => tag(arb_multi_read(), R::MultiRead),
        OpCode::Reconfig => tag(arb_reconfig(), R::Reconfig),
        OpCode::CheckWatches => tag(arb_remove_watches(), R::CheckWatches),
        OpCode::RemoveWatches => tag(arb_remove_watches(), R::RemoveWatches),
        OpCode::Auth => tag(arb_auth(), R::Auth),
        OpCode::SetWatches => tag(arb_set_watches(), R::SetWatches),
        OpCode::SetWatches2 => tag(arb_set_watches2(), R::SetWatches2),
        OpCode::Sasl => tag(arb_sasl(), R::Sasl),
        OpCode::GetEphemerals => tag(arb_get_ephemerals(), R::GetEphemerals),
        OpCode::GetAllChildrenNumber => tag(arb_get_all_children_number(), R::GetAllChildrenNumber),
        OpCode::AddWatch => tag(arb_add_watch(), R::AddWatch),
        OpCode::WhoAmI => Just(R::WhoAmI).boxed(),
        OpCode::Ping => Just(R::Ping).boxed(),
        OpCode::CloseSession => Just(R::CloseSession).boxed(),
        _ => return None,
    })
}

/// A successful reply body to a request with opcode `op`, or `None` for notifications.
fn arb_response_for(op: OpCode) -> Option<BoxedStrategy<Response>> {
    use Response as R;
    Some(match op {
        OpCode::Delete
        | OpCode::Ping
        | OpCode::Auth
        | OpCode::SetWatches
        | OpCode::SetWatches2
        | OpCode::CheckWatches
        | OpCode::RemoveWatches
        | OpCode::Check
        | OpCode::CloseSession => Just(R::Empty).boxed(),
        OpCode::Create => tag(arb_create_response(), R::Create),
        OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTtl => {
            tag(arb_create2_response(), R::Create2)
        }
        OpCode::Exists | OpCode::SetData | OpCode::SetAcl => tag(arb_stat(), R::Stat),
        OpCode::GetData | OpCode::Reconfig => tag(arb_get_data_response(), R::GetData),
        OpCode::GetAcl => tag(arb_get_acl_response(), R::GetAcl),
        OpCode::GetChildren => tag(arb_get_children_response(), R::GetChildren),
        OpCode::GetChildren2 => tag(arb_get_children2_response(), R::GetChildren2),
        OpCode::Sync => tag(arb_sync_response(), R::Sync),
        OpCode::Multi | OpCode::MultiRead => tag(arb_multi_response(), R::Multi),
        OpCode::Sasl => tag(arb_sasl_response(), R::Sasl),
        OpCode::GetEphemerals => tag(arb_get_ephemerals_response(), R::GetEphemerals),
        OpCode::GetAllChildrenNumber => tag(
            arb_get_all_children_number_response(),
            R::GetAllChildrenNumber,
        ),
        OpCode::WhoAmI => tag(arb_who_am_i_response(), R::WhoAmI),
        OpCode::AddWatch | OpCode::Error => tag(arb_error_response(), R::Error),
        _ => return None,
    })
}

fn arb_request() -> impl Strategy<Value = Request> {
    let all: Vec<BoxedStrategy<Request>> = OpCode::ALL
        .iter()
        .filter_map(|&op| arb_request_for(op))
        .collect();
    Union::new(all)
}

fn arb_op_and_response() -> impl Strategy<Value = (OpCode, Response)> {
    let all: Vec<BoxedStrategy<(OpCode, Response)>> = OpCode::ALL
        .iter()
        .filter_map(|&op| arb_response_for(op).map(|s| s.prop_map(move |r| (op, r)).boxed()))
        .collect();
    Union::new(all)
}

// ---------------------------------------------------------------- checks

/// Encodes, decodes, compares; then checks that truncations and an extra byte are refused.
/// `optional_tail` is the number of trailing bytes that may be missing (connect records).
fn check_record<T: Record + PartialEq + Debug>(
    v: &T,
    optional_tail: usize,
) -> Result<(), TestCaseError> {
    let mut buf = BytesMut::new();
    v.encode(&mut buf);
    let bytes = buf.freeze();
    prop_assert_eq!(&T::decode_exact(bytes.clone(), "T")?, v);
    for cut in cuts(bytes.len().saturating_sub(optional_tail)) {
        prop_assert!(
            T::decode_exact(bytes.slice(..cut), "T").is_err(),
            "prefix of {} bytes decoded",
            cut
        );
    }
    let mut longer = BytesMut::from(&bytes[..]);
    longer.extend_from_slice(&[0]);
    prop_assert!(
        matches!(
            T::decode_exact(longer.freeze(), "T"),
            Err(DecodeError::TrailingBytes { .. })
        ),
        "an extra byte was accepted"
    );
    Ok(())
}

/// The prefix lengths to try: all of them for small encodings, a sample for large ones.
fn cuts(len: usize) -> Vec<usize> {
    if len <= 200 {
        (0..len).collect()
    } else {
        vec![0, 1, len / 3, len / 2, len - 9, len - 1]
    }
}

fn check_request(xid: i32, req: &Request) -> Result<(), TestCaseError> {
    let mut buf = BytesMut::new();
    req.encode(xid, &mut buf);
    let frame = buf.freeze();
    let (header, back) = Request::decode(frame.clone())?;
    prop_assert_eq!(header.xid, xid);
    prop_assert_eq!(header.op, req.op_code().code());
    prop_assert_eq!(&back, req);
    // decode_body alone reads the same.
    let mut r = zk_proto::jute::Reader::new(frame.slice(8..));
    prop_assert_eq!(&Request::decode_body(req.op_code(), &mut r)?, req);
    for cut in cuts(frame.len()) {
        prop_assert!(Request::decode(frame.slice(..cut)).is_err());
    }
    Ok(())
}

fn check_response(header: ReplyHeader, op: OpCode, resp: &Response) -> Result<(), TestCaseError> {
    let header = ReplyHeader { err: 0, ..header };
    let mut buf = BytesMut::new();
    header.encode(&mut buf);
    resp.encode(&mut buf);
    let frame = buf.freeze();
    let (h, back) = decode_reply(frame.clone(), op)?;
    prop_assert_eq!(h, header);
    prop_assert_eq!(back.as_ref(), Some(resp));
    for cut in cuts(frame.len()) {
        prop_assert!(decode_reply(frame.slice(..cut), op).is_err());
    }
    Ok(())
}

/// Runs `strategy` through `check` for a few cases, naming `what` on failure.
fn run_cases<S: Strategy>(
    what: &str,
    strategy: S,
    check: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    if let Err(e) = runner.run(&strategy, check) {
        panic!("{what}: {e}");
    }
}

#[test]
fn every_opcode_round_trips() {
    for &op in OpCode::ALL {
        let req = arb_request_for(op);
        let resp = arb_response_for(op);
        match op {
            // Notifications are not replies to a request: see `notification_round_trip`.
            OpCode::Notification => assert!(req.is_none() && resp.is_none()),
            // Error is only a result type, never a request.
            OpCode::Error => assert!(req.is_none() && resp.is_some()),
            _ => assert!(req.is_some() && resp.is_some(), "{op:?} not covered"),
        }
        if let Some(s) = req {
            run_cases(&format!("request {op:?}"), (any::<i32>(), s), |(xid, r)| {
                prop_assert_eq!(r.op_code(), op);
                check_request(xid, &r)
            });
        }
        if let Some(s) = resp {
            run_cases(
                &format!("response {op:?}"),
                (arb_reply_header(), s),
                |(h, r)| check_response(h, op, &r),
            );
        }
    }
}

#[test]
fn every_multi_op_and_result_kind_round_trips() {
    for (i, s) in write_op_kinds()
        .into_iter()
        .chain(read_op_kinds())
        .enumerate()
    {
        run_cases(&format!("multi op kind {i}"), s, |op| {
            check_record(&MultiRequest { ops: vec![op] }, 0)
        });
    }
    for (i, s) in result_kinds().into_iter().enumerate() {
        run_cases(&format!("multi result kind {i}"), s, |res| {
            check_record(&MultiResponse { results: vec![res] }, 0)
        });
    }
}

/// One round-trip property per record type, named after it.
macro_rules! record_round_trips {
    ($($test:ident: $strategy:expr;)*) => {
        proptest! {
            $(
                #[test]
                fn $test(v in $strategy) {
                    check_record(&v, 0)?;
                }
            )*
        }
    };
}

record_round_trips! {
    // Headers. A MultiHeader's `done` survives because we only generate 0/1 booleans.
    request_header: arb_request_header();
    reply_header: arb_reply_header();
    multi_header: arb_multi_header();
    // Data records.
    stat: arb_stat();
    id: arb_id();
    acl: arb_acl();
    watcher_event: arb_watcher_event();
    client_info: arb_client_info();
    // Requests.
    create_request: arb_create();
    create_ttl_request: arb_create_ttl();
    delete_request: arb_delete();
    exists_request: arb_exists();
    get_data_request: arb_get_data();
    set_data_request: arb_set_data();
    get_acl_request: arb_get_acl();
    set_acl_request: arb_set_acl();
    get_children_request: arb_get_children();
    sync_request: arb_sync();
    check_version_request: arb_check();
    reconfig_request: arb_reconfig();
    remove_watches_request: arb_remove_watches();
    auth_packet: arb_auth();
    set_watches: arb_set_watches();
    set_watches2: arb_set_watches2();
    get_sasl_request: arb_sasl();
    get_ephemerals_request: arb_get_ephemerals();
    get_all_children_number_request: arb_get_all_children_number();
    add_watch_request: arb_add_watch();
    // Responses.
    create_response: arb_create_response();
    create2_response: arb_create2_response();
    get_data_response: arb_get_data_response();
    get_acl_response: arb_get_acl_response();
    get_children_response: arb_get_children_response();
    get_children2_response: arb_get_children2_response();
    sync_response: arb_sync_response();
    get_sasl_response: arb_sasl_response();
    get_ephemerals_response: arb_get_ephemerals_response();
    get_all_children_number_response: arb_get_all_children_number_response();
    who_am_i_response: arb_who_am_i_response();
    error_response: arb_error_response();
    // Multi.
    multi_request: arb_multi_request();
    multi_response: arb_multi_response();
}

proptest! {
    #[test]
    fn request_round_trip(xid in any::<i32>(), req in arb_request()) {
        check_request(xid, &req)?;
    }

    #[test]
    fn response_round_trip(h in arb_reply_header(), (op, resp) in arb_op_and_response()) {
        check_response(h, op, &resp)?;
        // Response::decode on the body alone.
        let mut buf = BytesMut::new();
        resp.encode(&mut buf);
        let mut r = zk_proto::jute::Reader::new(buf.freeze());
        prop_assert_eq!(Response::decode(op, &mut r)?, resp);
    }

    #[test]
    fn notification_round_trip(zxid in any::<i64>(), err in any::<i32>(), ev in arb_watcher_event()) {
        let header = ReplyHeader { xid: xid::NOTIFICATION, zxid, err };
        let mut buf = BytesMut::new();
        header.encode(&mut buf);
        ev.encode(&mut buf);
        let frame = buf.freeze();
        prop_assert_eq!(decode_notification(frame.clone())?, (header, ev));
        for cut in cuts(frame.len()) {
            prop_assert!(decode_notification(frame.slice(..cut)).is_err());
        }
    }

    #[test]
    fn connect_request_round_trip(v in arb_connect_request()) {
        check_record(&v, 1)?;
        // Without the readOnly byte the request still decodes, as read_only = false.
        let mut buf = BytesMut::new();
        v.encode(&mut buf);
        buf.truncate(buf.len() - 1);
        let back = ConnectRequest::decode_exact(buf.freeze(), "ConnectRequest")?;
        prop_assert_eq!(back, ConnectRequest { read_only: false, ..v });
    }

    #[test]
    fn connect_response_round_trip(v in arb_connect_response()) {
        check_record(&v, 1)?;
        let mut buf = BytesMut::new();
        v.encode(&mut buf);
        buf.truncate(buf.len() - 1);
        let back = ConnectResponse::decode_exact(buf.freeze(), "ConnectResponse")?;
        prop_assert_eq!(back, ConnectResponse { read_only: false, ..v });
    }

    #[test]
    fn error_replies_never_carry_a_body(
        h in arb_reply_header().prop_filter("error", |h| h.err != 0),
        op in select(OpCode::ALL),
        junk in vec(any::<u8>(), 0..16),
    ) {
        let mut buf = BytesMut::new();
        h.encode(&mut buf);
        buf.extend_from_slice(&junk);
        prop_assert_eq!(decode_reply(buf.freeze(), op)?, (h, None));
    }

    #[test]
    fn enum_codes_round_trip(code in any::<i32>()) {
        prop_assert_eq!(EventType::from_code(code).code(), code);
        prop_assert_eq!(KeeperState::from_code(code).code(), code);
        prop_assert_eq!(ErrorCode::from_code(code).code(), code);
        if let Some(op) = OpCode::from_code(code) {
            prop_assert_eq!(op.code(), code);
        }
        if let Some(m) = CreateMode::from_flags(code) {
            prop_assert_eq!(m.flags(), code);
        }
    }
}
