//! Property tests: every record, every request variant, every response opcode, multi and
//! connect records survive encode → decode unchanged, and truncated or extended encodings are
//! refused.

mod roundtrip_support;

use std::fmt::Debug;

use bytes::BytesMut;
use proptest::{
    collection::vec,
    prelude::*,
    sample::select,
    test_runner::{Config, TestCaseError, TestRunner},
};
use roundtrip_support::*;
use zk_proto::{jute::Record, *};

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
