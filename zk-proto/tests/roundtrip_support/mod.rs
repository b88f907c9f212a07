//! Proptest strategies for roundtrip.rs: every record, request and response of the jute
//! codec, per opcode and per multi operation kind.

use std::fmt::Debug;

use bytes::Bytes;
use proptest::{collection::vec, option, prelude::*, sample::select, strategy::Union};
use zk_proto::*;

/// Declares `pub fn $name() -> impl Strategy<Value = $ty>` building `$ty` from one strategy per
/// field.
macro_rules! arb_struct {
    ($name:ident -> $ty:ident { $($field:ident: $strategy:expr),* $(,)? }) => {
        pub fn $name() -> impl Strategy<Value = $ty> {
            ($($strategy,)*).prop_map(|($($field,)*)| $ty { $($field),* })
        }
    };
}

// ---------------------------------------------------------------- primitives

pub fn arb_string() -> impl Strategy<Value = String> {
    // Mostly short ASCII paths, sometimes arbitrary Unicode.
    prop_oneof![3 => "/[a-z0-9/._-]{0,12}", 1 => ".{0,8}"]
}

pub fn arb_strings() -> impl Strategy<Value = Vec<String>> {
    vec(arb_string(), 0..5)
}

pub fn arb_opt_string() -> impl Strategy<Value = Option<String>> {
    option::of(arb_string())
}

pub fn arb_bytes() -> impl Strategy<Value = Bytes> {
    vec(any::<u8>(), 0..24).prop_map(Bytes::from)
}

pub fn arb_opt_bytes() -> impl Strategy<Value = Option<Bytes>> {
    option::of(arb_bytes())
}

pub fn arb_create_mode() -> impl Strategy<Value = CreateMode> {
    select(CreateMode::ALL)
}

pub fn arb_watcher_type() -> impl Strategy<Value = WatcherType> {
    select(vec![
        WatcherType::Children,
        WatcherType::Data,
        WatcherType::Any,
    ])
}

pub fn arb_add_watch_mode() -> impl Strategy<Value = AddWatchMode> {
    select(vec![
        AddWatchMode::Persistent,
        AddWatchMode::PersistentRecursive,
    ])
}

pub fn arb_event_type() -> impl Strategy<Value = EventType> {
    prop_oneof![-2..9i32, any::<i32>()].prop_map(EventType::from_code)
}

pub fn arb_keeper_state() -> impl Strategy<Value = KeeperState> {
    prop_oneof![-113..9i32, any::<i32>()].prop_map(KeeperState::from_code)
}

pub fn arb_error_code() -> impl Strategy<Value = ErrorCode> {
    prop_oneof![
        select(ErrorCode::ALL),
        any::<i32>().prop_map(ErrorCode::from_code)
    ]
}

pub fn arb_perms() -> impl Strategy<Value = Perms> {
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

pub fn arb_acls() -> impl Strategy<Value = Vec<Acl>> {
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
pub fn write_op_kinds() -> Vec<BoxedStrategy<MultiOp>> {
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

pub fn read_op_kinds() -> Vec<BoxedStrategy<MultiOp>> {
    vec![
        tag(arb_get_children(), MultiOp::GetChildren),
        tag(arb_get_data(), MultiOp::GetData),
    ]
}

pub fn result_kinds() -> Vec<BoxedStrategy<MultiResult>> {
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

pub fn arb_multi_request() -> impl Strategy<Value = MultiRequest> {
    prop_oneof![arb_multi_write(), arb_multi_read()]
}

arb_struct!(arb_multi_response -> MultiResponse { results: vec(Union::new(result_kinds()), 0..6) });

// ---------------------------------------------------------------- per-opcode strategies

/// Boxes `s` mapped into an enum variant.
pub fn tag<T: Debug + 'static, U: Debug + 'static>(
    s: impl Strategy<Value = T> + 'static,
    variant: fn(T) -> U,
) -> BoxedStrategy<U> {
    s.prop_map(variant).boxed()
}

/// A request with opcode `op`, or `None` for the opcodes that are not requests.
pub fn arb_request_for(op: OpCode) -> Option<BoxedStrategy<Request>> {
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
pub fn arb_response_for(op: OpCode) -> Option<BoxedStrategy<Response>> {
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

pub fn arb_request() -> impl Strategy<Value = Request> {
    let all: Vec<BoxedStrategy<Request>> = OpCode::ALL
        .iter()
        .filter_map(|&op| arb_request_for(op))
        .collect();
    Union::new(all)
}

pub fn arb_op_and_response() -> impl Strategy<Value = (OpCode, Response)> {
    let all: Vec<BoxedStrategy<(OpCode, Response)>> = OpCode::ALL
        .iter()
        .filter_map(|&op| arb_response_for(op).map(|s| s.prop_map(move |r| (op, r)).boxed()))
        .collect();
    Union::new(all)
}
