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
    test_runner::{Config, TestCaseError, TestRunner},
};
use zk_proto::{jute::Record, *};

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

fn arb_stat() -> impl Strategy<Value = Stat> {
    (
        (any::<i64>(), any::<i64>(), any::<i64>(), any::<i64>()),
        (any::<i32>(), any::<i32>(), any::<i32>()),
        (any::<i64>(), any::<i32>(), any::<i32>(), any::<i64>()),
    )
        .prop_map(
            |(
                (czxid, mzxid, ctime, mtime),
                (version, cversion, aversion),
                (ephemeral_owner, data_length, num_children, pzxid),
            )| Stat {
                czxid,
                mzxid,
                ctime,
                mtime,
                version,
                cversion,
                aversion,
                ephemeral_owner,
                data_length,
                num_children,
                pzxid,
            },
        )
}

fn arb_id() -> impl Strategy<Value = Id> {
    (arb_string(), arb_string()).prop_map(|(scheme, id)| Id { scheme, id })
}

fn arb_acl() -> impl Strategy<Value = Acl> {
    (any::<i32>(), arb_id()).prop_map(|(p, id)| Acl {
        perms: Perms(p),
        id,
    })
}

fn arb_acls() -> impl Strategy<Value = Vec<Acl>> {
    vec(arb_acl(), 0..4)
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

// ---------------------------------------------------------------- headers and small records

fn arb_request_header() -> impl Strategy<Value = RequestHeader> {
    (any::<i32>(), any::<i32>()).prop_map(|(xid, op)| RequestHeader { xid, op })
}

fn arb_reply_header() -> impl Strategy<Value = ReplyHeader> {
    (any::<i32>(), any::<i64>(), any::<i32>()).prop_map(|(xid, zxid, err)| ReplyHeader {
        xid,
        zxid,
        err,
    })
}

fn arb_multi_header() -> impl Strategy<Value = MultiHeader> {
    (any::<i32>(), any::<bool>(), any::<i32>()).prop_map(|(op, done, err)| MultiHeader {
        op,
        done,
        err,
    })
}

fn arb_watcher_event() -> impl Strategy<Value = WatcherEvent> {
    (arb_event_type(), arb_keeper_state(), arb_string()).prop_map(|(event_type, state, path)| {
        WatcherEvent {
            event_type,
            state,
            path,
        }
    })
}

fn arb_connect_request() -> impl Strategy<Value = ConnectRequest> {
    (
        any::<i32>(),
        any::<i64>(),
        any::<i32>(),
        any::<i64>(),
        arb_bytes(),
        any::<bool>(),
    )
        .prop_map(
            |(protocol_version, last_zxid_seen, timeout, session_id, passwd, read_only)| {
                ConnectRequest {
                    protocol_version,
                    last_zxid_seen,
                    timeout,
                    session_id,
                    passwd,
                    read_only,
                }
            },
        )
}

fn arb_connect_response() -> impl Strategy<Value = ConnectResponse> {
    (
        any::<i32>(),
        any::<i32>(),
        any::<i64>(),
        arb_bytes(),
        any::<bool>(),
    )
        .prop_map(
            |(protocol_version, timeout, session_id, passwd, read_only)| ConnectResponse {
                protocol_version,
                timeout,
                session_id,
                passwd,
                read_only,
            },
        )
}

// ---------------------------------------------------------------- request records

fn arb_create() -> impl Strategy<Value = CreateRequest> {
    (arb_string(), arb_opt_bytes(), arb_acls(), arb_create_mode()).prop_map(
        |(path, data, acl, mode)| CreateRequest {
            path,
            data,
            acl,
            mode,
        },
    )
}

fn arb_create_ttl() -> impl Strategy<Value = CreateTtlRequest> {
    (
        arb_string(),
        arb_opt_bytes(),
        arb_acls(),
        arb_create_mode(),
        any::<i64>(),
    )
        .prop_map(|(path, data, acl, mode, ttl)| CreateTtlRequest {
            path,
            data,
            acl,
            mode,
            ttl,
        })
}

fn arb_delete() -> impl Strategy<Value = DeleteRequest> {
    (arb_string(), any::<i32>()).prop_map(|(path, version)| DeleteRequest { path, version })
}

fn arb_exists() -> impl Strategy<Value = ExistsRequest> {
    (arb_string(), any::<bool>()).prop_map(|(path, watch)| ExistsRequest { path, watch })
}

fn arb_get_data() -> impl Strategy<Value = GetDataRequest> {
    (arb_string(), any::<bool>()).prop_map(|(path, watch)| GetDataRequest { path, watch })
}

fn arb_set_data() -> impl Strategy<Value = SetDataRequest> {
    (arb_string(), arb_opt_bytes(), any::<i32>()).prop_map(|(path, data, version)| SetDataRequest {
        path,
        data,
        version,
    })
}

fn arb_get_acl() -> impl Strategy<Value = GetAclRequest> {
    arb_string().prop_map(|path| GetAclRequest { path })
}

fn arb_set_acl() -> impl Strategy<Value = SetAclRequest> {
    (arb_string(), arb_acls(), any::<i32>()).prop_map(|(path, acl, version)| SetAclRequest {
        path,
        acl,
        version,
    })
}

fn arb_get_children() -> impl Strategy<Value = GetChildrenRequest> {
    (arb_string(), any::<bool>()).prop_map(|(path, watch)| GetChildrenRequest { path, watch })
}

fn arb_sync() -> impl Strategy<Value = SyncRequest> {
    arb_string().prop_map(|path| SyncRequest { path })
}

fn arb_check() -> impl Strategy<Value = CheckVersionRequest> {
    (arb_string(), any::<i32>()).prop_map(|(path, version)| CheckVersionRequest { path, version })
}

fn arb_reconfig() -> impl Strategy<Value = ReconfigRequest> {
    (
        arb_opt_string(),
        arb_opt_string(),
        arb_opt_string(),
        any::<i64>(),
    )
        .prop_map(
            |(joining_servers, leaving_servers, new_members, cur_config_id)| ReconfigRequest {
                joining_servers,
                leaving_servers,
                new_members,
                cur_config_id,
            },
        )
}

fn arb_remove_watches() -> impl Strategy<Value = RemoveWatchesRequest> {
    (arb_string(), arb_watcher_type())
        .prop_map(|(path, watcher_type)| RemoveWatchesRequest { path, watcher_type })
}

fn arb_auth() -> impl Strategy<Value = AuthPacket> {
    (any::<i32>(), arb_string(), arb_opt_bytes()).prop_map(|(auth_type, scheme, auth)| AuthPacket {
        auth_type,
        scheme,
        auth,
    })
}

fn arb_set_watches() -> impl Strategy<Value = SetWatches> {
    (any::<i64>(), arb_strings(), arb_strings(), arb_strings()).prop_map(
        |(relative_zxid, data_watches, exist_watches, child_watches)| SetWatches {
            relative_zxid,
            data_watches,
            exist_watches,
            child_watches,
        },
    )
}

fn arb_set_watches2() -> impl Strategy<Value = SetWatches2> {
    (
        any::<i64>(),
        arb_strings(),
        arb_strings(),
        arb_strings(),
        arb_strings(),
        arb_strings(),
    )
        .prop_map(|(relative_zxid, d, e, c, p, r)| SetWatches2 {
            relative_zxid,
            data_watches: d,
            exist_watches: e,
            child_watches: c,
            persistent_watches: p,
            persistent_recursive_watches: r,
        })
}

fn arb_sasl() -> impl Strategy<Value = GetSaslRequest> {
    arb_opt_bytes().prop_map(|token| GetSaslRequest { token })
}

fn arb_get_ephemerals() -> impl Strategy<Value = GetEphemeralsRequest> {
    arb_string().prop_map(|prefix_path| GetEphemeralsRequest { prefix_path })
}

fn arb_get_all_children_number() -> impl Strategy<Value = GetAllChildrenNumberRequest> {
    arb_string().prop_map(|path| GetAllChildrenNumberRequest { path })
}

fn arb_add_watch() -> impl Strategy<Value = AddWatchRequest> {
    (arb_string(), arb_add_watch_mode()).prop_map(|(path, mode)| AddWatchRequest { path, mode })
}

// ---------------------------------------------------------------- multi

fn arb_write_op() -> impl Strategy<Value = MultiOp> {
    prop_oneof![
        arb_create().prop_map(MultiOp::Create),
        arb_create().prop_map(MultiOp::Create2),
        arb_create().prop_map(MultiOp::CreateContainer),
        arb_create_ttl().prop_map(MultiOp::CreateTtl),
        arb_delete().prop_map(MultiOp::Delete),
        arb_set_data().prop_map(MultiOp::SetData),
        arb_check().prop_map(MultiOp::Check),
    ]
}

fn arb_read_op() -> impl Strategy<Value = MultiOp> {
    prop_oneof![
        arb_get_children().prop_map(MultiOp::GetChildren),
        arb_get_data().prop_map(MultiOp::GetData),
    ]
}

fn arb_multi_write() -> impl Strategy<Value = MultiRequest> {
    vec(arb_write_op(), 0..6).prop_map(|ops| MultiRequest { ops })
}

fn arb_multi_read() -> impl Strategy<Value = MultiRequest> {
    vec(arb_read_op(), 0..6).prop_map(|ops| MultiRequest { ops })
}

fn arb_multi_request() -> impl Strategy<Value = MultiRequest> {
    prop_oneof![arb_multi_write(), arb_multi_read()]
}

fn arb_multi_result() -> impl Strategy<Value = MultiResult> {
    prop_oneof![
        arb_create_response().prop_map(MultiResult::Create),
        arb_create2_response().prop_map(MultiResult::Create2),
        Just(MultiResult::Delete),
        arb_stat().prop_map(MultiResult::SetData),
        Just(MultiResult::Check),
        arb_get_data_response().prop_map(MultiResult::GetData),
        arb_get_children_response().prop_map(MultiResult::GetChildren),
        arb_error_code().prop_map(MultiResult::Error),
    ]
}

fn arb_multi_response() -> impl Strategy<Value = MultiResponse> {
    vec(arb_multi_result(), 0..6).prop_map(|results| MultiResponse { results })
}

// ---------------------------------------------------------------- response records

fn arb_create_response() -> impl Strategy<Value = CreateResponse> {
    arb_string().prop_map(|path| CreateResponse { path })
}

fn arb_create2_response() -> impl Strategy<Value = Create2Response> {
    (arb_string(), arb_stat()).prop_map(|(path, stat)| Create2Response { path, stat })
}

fn arb_get_data_response() -> impl Strategy<Value = GetDataResponse> {
    (arb_opt_bytes(), arb_stat()).prop_map(|(data, stat)| GetDataResponse { data, stat })
}

fn arb_get_acl_response() -> impl Strategy<Value = GetAclResponse> {
    (arb_acls(), arb_stat()).prop_map(|(acl, stat)| GetAclResponse { acl, stat })
}

fn arb_get_children_response() -> impl Strategy<Value = GetChildrenResponse> {
    arb_strings().prop_map(|children| GetChildrenResponse { children })
}

fn arb_get_children2_response() -> impl Strategy<Value = GetChildren2Response> {
    (arb_strings(), arb_stat()).prop_map(|(children, stat)| GetChildren2Response { children, stat })
}

fn arb_sync_response() -> impl Strategy<Value = SyncResponse> {
    arb_string().prop_map(|path| SyncResponse { path })
}

fn arb_sasl_response() -> impl Strategy<Value = GetSaslResponse> {
    arb_opt_bytes().prop_map(|token| GetSaslResponse { token })
}

fn arb_get_ephemerals_response() -> impl Strategy<Value = GetEphemeralsResponse> {
    arb_strings().prop_map(|ephemerals| GetEphemeralsResponse { ephemerals })
}

fn arb_get_all_children_number_response() -> impl Strategy<Value = GetAllChildrenNumberResponse> {
    any::<i32>().prop_map(|total_number| GetAllChildrenNumberResponse { total_number })
}

fn arb_client_info() -> impl Strategy<Value = ClientInfo> {
    (arb_string(), arb_string()).prop_map(|(auth_scheme, user)| ClientInfo { auth_scheme, user })
}

fn arb_who_am_i_response() -> impl Strategy<Value = WhoAmIResponse> {
    vec(arb_client_info(), 0..4).prop_map(|client_info| WhoAmIResponse { client_info })
}

fn arb_error_response() -> impl Strategy<Value = ErrorResponse> {
    any::<i32>().prop_map(|err| ErrorResponse { err })
}

// ---------------------------------------------------------------- per-opcode strategies

/// A request with opcode `op`, or `None` for the opcodes that are not requests.
fn arb_request_for(op: OpCode) -> Option<BoxedStrategy<Request>> {
    use Request as R;
    Some(match op {
        OpCode::Create => arb_create().prop_map(R::Create).boxed(),
        OpCode::Create2 => arb_create().prop_map(R::Create2).boxed(),
        OpCode::CreateContainer => arb_create().prop_map(R::CreateContainer).boxed(),
        OpCode::CreateTtl => arb_create_ttl().prop_map(R::CreateTtl).boxed(),
        OpCode::Delete => arb_delete().prop_map(R::Delete).boxed(),
        OpCode::Exists => arb_exists().prop_map(R::Exists).boxed(),
        OpCode::GetData => arb_get_data().prop_map(R::GetData).boxed(),
        OpCode::SetData => arb_set_data().prop_map(R::SetData).boxed(),
        OpCode::GetAcl => arb_get_acl().prop_map(R::GetAcl).boxed(),
        OpCode::SetAcl => arb_set_acl().prop_map(R::SetAcl).boxed(),
        OpCode::GetChildren => arb_get_children().prop_map(R::GetChildren).boxed(),
        OpCode::GetChildren2 => arb_get_children().prop_map(R::GetChildren2).boxed(),
        OpCode::Sync => arb_sync().prop_map(R::Sync).boxed(),
        OpCode::Check => arb_check().prop_map(R::Check).boxed(),
        OpCode::Multi => arb_multi_write().prop_map(R::Multi).boxed(),
        OpCode::MultiRead => arb_multi_read().prop_map(R::MultiRead).boxed(),
        OpCode::Reconfig => arb_reconfig().prop_map(R::Reconfig).boxed(),
        OpCode::CheckWatches => arb_remove_watches().prop_map(R::CheckWatches).boxed(),
        OpCode::RemoveWatches => arb_remove_watches().prop_map(R::RemoveWatches).boxed(),
        OpCode::Auth => arb_auth().prop_map(R::Auth).boxed(),
        OpCode::SetWatches => arb_set_watches().prop_map(R::SetWatches).boxed(),
        OpCode::SetWatches2 => arb_set_watches2().prop_map(R::SetWatches2).boxed(),
        OpCode::Sasl => arb_sasl().prop_map(R::Sasl).boxed(),
        OpCode::GetEphemerals => arb_get_ephemerals().prop_map(R::GetEphemerals).boxed(),
        OpCode::GetAllChildrenNumber => arb_get_all_children_number()
            .prop_map(R::GetAllChildrenNumber)
            .boxed(),
        OpCode::AddWatch => arb_add_watch().prop_map(R::AddWatch).boxed(),
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
        OpCode::Create => arb_create_response().prop_map(R::Create).boxed(),
        OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTtl => {
            arb_create2_response().prop_map(R::Create2).boxed()
        }
        OpCode::Exists | OpCode::SetData | OpCode::SetAcl => arb_stat().prop_map(R::Stat).boxed(),
        OpCode::GetData | OpCode::Reconfig => arb_get_data_response().prop_map(R::GetData).boxed(),
        OpCode::GetAcl => arb_get_acl_response().prop_map(R::GetAcl).boxed(),
        OpCode::GetChildren => arb_get_children_response().prop_map(R::GetChildren).boxed(),
        OpCode::GetChildren2 => arb_get_children2_response()
            .prop_map(R::GetChildren2)
            .boxed(),
        OpCode::Sync => arb_sync_response().prop_map(R::Sync).boxed(),
        OpCode::Multi | OpCode::MultiRead => arb_multi_response().prop_map(R::Multi).boxed(),
        OpCode::Sasl => arb_sasl_response().prop_map(R::Sasl).boxed(),
        OpCode::GetEphemerals => arb_get_ephemerals_response()
            .prop_map(R::GetEphemerals)
            .boxed(),
        OpCode::GetAllChildrenNumber => arb_get_all_children_number_response()
            .prop_map(R::GetAllChildrenNumber)
            .boxed(),
        OpCode::WhoAmI => arb_who_am_i_response().prop_map(R::WhoAmI).boxed(),
        OpCode::AddWatch | OpCode::Error => arb_error_response().prop_map(R::Error).boxed(),
        _ => return None,
    })
}

fn arb_request() -> impl Strategy<Value = Request> {
    let all: Vec<BoxedStrategy<Request>> = OpCode::ALL
        .iter()
        .filter_map(|&op| arb_request_for(op))
        .collect();
    proptest::strategy::Union::new(all)
}

fn arb_op_and_response() -> impl Strategy<Value = (OpCode, Response)> {
    let all: Vec<BoxedStrategy<(OpCode, Response)>> = OpCode::ALL
        .iter()
        .filter_map(|&op| arb_response_for(op).map(|s| s.prop_map(move |r| (op, r)).boxed()))
        .collect();
    proptest::strategy::Union::new(all)
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
    for (i, s) in [arb_write_op().boxed(), arb_read_op().boxed()]
        .into_iter()
        .enumerate()
    {
        run_cases(&format!("multi op kind {i}"), s, |op| {
            check_record(&MultiRequest { ops: vec![op] }, 0)
        });
    }
    run_cases("multi result", arb_multi_result(), |res| {
        check_record(&MultiResponse { results: vec![res] }, 0)
    });
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
    fn multi_request_round_trip(m in arb_multi_request()) {
        check_record(&m, 0)?;
        prop_assert_eq!(m.is_read_only(), m.ops.first().is_some_and(MultiOp::is_read));
    }

    #[test]
    fn multi_response_round_trip(m in arb_multi_response()) {
        check_record(&m, 0)?;
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
    fn header_records_round_trip(
        rq in arb_request_header(),
        rp in arb_reply_header(),
        mh in arb_multi_header(),
    ) {
        check_record(&rq, 0)?;
        check_record(&rp, 0)?;
        // Any non-zero byte decodes as true, so only 0/1 booleans survive unchanged.
        check_record(&mh, 0)?;
    }

    #[test]
    fn data_records_round_trip(
        stat in arb_stat(),
        id in arb_id(),
        acl in arb_acl(),
        ev in arb_watcher_event(),
        ci in arb_client_info(),
    ) {
        check_record(&stat, 0)?;
        check_record(&id, 0)?;
        check_record(&acl, 0)?;
        check_record(&ev, 0)?;
        check_record(&ci, 0)?;
    }

    #[test]
    fn create_records_round_trip(c in arb_create(), t in arb_create_ttl()) {
        check_record(&c, 0)?;
        check_record(&t, 0)?;
    }

    #[test]
    fn path_records_round_trip(
        d in arb_delete(),
        e in arb_exists(),
        g in arb_get_data(),
        s in arb_set_data(),
        ga in arb_get_acl(),
        sa in arb_set_acl(),
        gc in arb_get_children(),
        sy in arb_sync(),
        ch in arb_check(),
    ) {
        check_record(&d, 0)?;
        check_record(&e, 0)?;
        check_record(&g, 0)?;
        check_record(&s, 0)?;
        check_record(&ga, 0)?;
        check_record(&sa, 0)?;
        check_record(&gc, 0)?;
        check_record(&sy, 0)?;
        check_record(&ch, 0)?;
    }

    #[test]
    fn session_records_round_trip(
        rc in arb_reconfig(),
        rw in arb_remove_watches(),
        au in arb_auth(),
        sw in arb_set_watches(),
        sw2 in arb_set_watches2(),
        sa in arb_sasl(),
        ge in arb_get_ephemerals(),
        gn in arb_get_all_children_number(),
        aw in arb_add_watch(),
    ) {
        check_record(&rc, 0)?;
        check_record(&rw, 0)?;
        check_record(&au, 0)?;
        check_record(&sw, 0)?;
        check_record(&sw2, 0)?;
        check_record(&sa, 0)?;
        check_record(&ge, 0)?;
        check_record(&gn, 0)?;
        check_record(&aw, 0)?;
    }

    #[test]
    fn response_records_round_trip(
        cr in arb_create_response(),
        c2 in arb_create2_response(),
        gd in arb_get_data_response(),
        ga in arb_get_acl_response(),
        gc in arb_get_children_response(),
        gc2 in arb_get_children2_response(),
        sy in arb_sync_response(),
        sa in arb_sasl_response(),
        ge in arb_get_ephemerals_response(),
        gn in arb_get_all_children_number_response(),
        wa in arb_who_am_i_response(),
        er in arb_error_response(),
    ) {
        check_record(&cr, 0)?;
        check_record(&c2, 0)?;
        check_record(&gd, 0)?;
        check_record(&ga, 0)?;
        check_record(&gc, 0)?;
        check_record(&gc2, 0)?;
        check_record(&sy, 0)?;
        check_record(&sa, 0)?;
        check_record(&ge, 0)?;
        check_record(&gn, 0)?;
        check_record(&wa, 0)?;
        check_record(&er, 0)?;
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
