//! multi (14) and multiRead (22): atomicity and per-operation results.

use bytes::{BufMut, BytesMut};
use zk_proto::{
    decode_reply, jute::Record, CheckVersionRequest, CreateMode, DeleteRequest, ErrorCode,
    GetChildrenRequest, GetDataRequest, MultiHeader, MultiOp, MultiRequest, MultiResponse,
    MultiResult, OpCode, Request, Response, SetDataRequest,
};

use crate::{
    check::{ensure, ensure_eq, fail, Area, Check, CheckResult, Finding},
    ctx::{unexpected, Conn, Ctx, Ending},
    req,
};

const JUTE: &str = "zookeeper.jute: MultiHeader, MultiResponse";
const BUG_4026: &str = "ZOOKEEPER-4026: the server turns a create2 inside a multi into a create, \
so its result has the path but no Stat. Reproduce: multi [create2 /p] answers \
MultiHeader{type 1} + path only";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Multi, "multi";
    "success", "a multi's results come in operation order, each of its operation's kind", JUTE, success;
    "atomic", "a failing operation rolls the whole transaction back", "Programmer's Guide: multi (atomicity)", atomic;
    "error-codes", "a failed multi reports 0 before the failing op, its code, then RUNTIMEINCONSISTENCY", JUTE, error_codes;
    "check", "check inside a multi passes on the right version and fails with BADVERSION", JUTE, check_op;
    "zxid", "a multi's writes share the reply's zxid", JUTE, zxid;
    "create2", "create2 inside a multi answers the path and the Stat", JUTE, create2, bug = BUG_4026;
    "sequential-path", "a sequential create inside a multi answers the name it was given", JUTE, sequential_path;
    "sequential-twice", "two sequential creates under one parent in a multi get consecutive numbers", JUTE, sequential_twice;
    "sequential-rolled-back", "a rolled-back multi's sequential create leaves the parent's counter as it was", "Programmer's Guide: multi (atomicity)", sequential_rolled_back;
    "empty", "an empty multi is answered with no results", JUTE, empty;
    "read-in-write", "a multi (14) with a read operation is refused, never answered with data", JUTE, read_in_write;
    "read", "multiRead answers each read, a missing znode as a per-op NONODE without failing the rest", "zookeeper.jute: MultiResponse (multiRead)", read;
);

fn create_op(path: &str) -> MultiOp {
    MultiOp::Create(req::create_record(
        path,
        req::data(b"m"),
        zk_proto::Acl::open_unsafe(),
        CreateMode::Persistent,
    ))
}

fn multi(
    conn: &mut Conn,
    ops: Vec<MultiOp>,
    read: bool,
) -> Result<(zk_proto::ReplyHeader, MultiResponse), Finding> {
    let m = MultiRequest { ops };
    let r = if read {
        Request::MultiRead(m)
    } else {
        Request::Multi(m)
    };
    match conn.call(&r)? {
        (h, Some(Response::Multi(m))) => Ok((h, m)),
        (h, other) => Err(fail(
            "a MultiResponse (reply err 0)",
            format!("err {} body {other:?}", h.err),
        )),
    }
}

fn setup(ctx: &mut Ctx) -> Result<(Conn, String), Finding> {
    let mut conn = ctx.session()?;
    let path = ctx.path("m");
    conn.create(&path, b"", CreateMode::Persistent)?;
    Ok((conn, path))
}

fn success(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let a = format!("{path}/a");
    let ops = vec![
        create_op(&a),
        MultiOp::SetData(SetDataRequest {
            path: a.clone(),
            data: req::data(b"x"),
            version: 0,
        }),
        MultiOp::Check(CheckVersionRequest {
            path: a.clone(),
            version: 1,
        }),
        MultiOp::Delete(DeleteRequest {
            path: a.clone(),
            version: 1,
        }),
    ];
    let (_, m) = multi(&mut conn, ops, false)?;
    let kinds: Vec<&str> = m.results.iter().map(kind).collect();
    ensure_eq(
        "result kinds",
        kinds,
        vec!["create", "setData", "check", "delete"],
    )?;
    if let Some(MultiResult::Create(c)) = m.results.first() {
        ensure_eq("created path", c.path.as_str(), a.as_str())?;
    }
    if let Some(MultiResult::SetData(s)) = m.results.get(1) {
        ensure_eq("setData's stat.version", s.version, 1)?;
    }
    ensure(
        conn.exists(&a, false)?.is_none(),
        "the znode deleted by the last op",
        || "exists".into(),
    )
}

fn kind(r: &MultiResult) -> &'static str {
    match r {
        MultiResult::Create(_) | MultiResult::Create2(_) => "create",
        MultiResult::Delete => "delete",
        MultiResult::SetData(_) => "setData",
        MultiResult::Check => "check",
        MultiResult::GetData(_) => "getData",
        MultiResult::GetChildren(_) => "getChildren",
        MultiResult::Error(_) => "error",
    }
}

fn failing_ops(path: &str) -> Vec<MultiOp> {
    let a = format!("{path}/a");
    vec![
        create_op(&a),
        MultiOp::SetData(SetDataRequest {
            path: path.into(),
            data: req::data(b"changed"),
            version: -1,
        }),
        MultiOp::Check(CheckVersionRequest {
            path: a.clone(),
            version: 9,
        }),
        create_op(&format!("{path}/b")),
    ]
}

fn atomic(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    multi(&mut conn, failing_ops(&path), false)?;
    ensure(
        conn.exists(&format!("{path}/a"), false)?.is_none(),
        "the first op's create rolled back",
        || "it exists".into(),
    )?;
    let (data, stat) = conn.get_data(&path, false)?;
    ensure_eq(
        "data and version after the rollback",
        (data.as_deref(), stat.version),
        (Some(&b""[..]), 0),
    )
}

fn error_codes(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let (h, m) = multi(&mut conn, failing_ops(&path), false)?;
    ensure_eq("reply header err", h.err, 0)?;
    let want = [
        ErrorCode::Ok,
        ErrorCode::Ok,
        ErrorCode::BadVersion,
        ErrorCode::RuntimeInconsistency,
    ]
    .map(MultiResult::Error)
    .to_vec();
    ensure_eq("results", m.results, want)
}

fn check_op(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let ok = vec![MultiOp::Check(CheckVersionRequest {
        path: path.clone(),
        version: 0,
    })];
    let (_, m) = multi(&mut conn, ok, false)?;
    ensure_eq("results", m.results, vec![MultiResult::Check])?;
    let bad = vec![MultiOp::Check(CheckVersionRequest { path, version: 1 })];
    let (_, m) = multi(&mut conn, bad, false)?;
    ensure_eq(
        "results",
        m.results,
        vec![MultiResult::Error(ErrorCode::BadVersion)],
    )
}

fn zxid(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let (a, b) = (format!("{path}/a"), format!("{path}/b"));
    let (h, _) = multi(&mut conn, vec![create_op(&a), create_op(&b)], false)?;
    let sa = conn
        .exists(&a, false)?
        .ok_or_else(|| fail("a created", "NONODE"))?;
    let sb = conn
        .exists(&b, false)?
        .ok_or_else(|| fail("b created", "NONODE"))?;
    ensure_eq(
        "czxids of both creates",
        (sa.czxid, sb.czxid),
        (h.zxid, h.zxid),
    )
}

fn read(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    conn.create(&format!("{path}/c"), b"", CreateMode::Persistent)?;
    conn.set_data(&path, b"d", -1)?;
    let ops = vec![
        MultiOp::GetData(GetDataRequest {
            path: path.clone(),
            watch: false,
        }),
        MultiOp::GetData(GetDataRequest {
            path: format!("{path}/missing"),
            watch: false,
        }),
        MultiOp::GetChildren(GetChildrenRequest {
            path: path.clone(),
            watch: false,
        }),
    ];
    let (_, m) = multi(&mut conn, ops, true)?;
    match m.results.as_slice() {
        [MultiResult::GetData(d), MultiResult::Error(ErrorCode::NoNode), MultiResult::GetChildren(c)] =>
        {
            ensure_eq("data", d.data.as_deref(), Some(&b"d"[..]))?;
            ensure_eq("children", c.children.clone(), vec!["c".to_string()])
        }
        other => Err(unexpected(
            "getData, NONODE, getChildren",
            &Response::Multi(MultiResponse {
                results: other.to_vec(),
            }),
        )),
    }
}

fn create2(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let a = format!("{path}/a");
    let op = MultiOp::Create2(req::create_record(
        &a,
        None,
        zk_proto::Acl::open_unsafe(),
        CreateMode::Persistent,
    ));
    let (h, m) = multi(&mut conn, vec![op], false)?;
    match m.results.as_slice() {
        [MultiResult::Create2(c)] => {
            ensure_eq("path", c.path.as_str(), a.as_str())?;
            ensure_eq("stat.czxid", c.stat.czxid, h.zxid)
        }
        other => Err(unexpected(
            "one create2 result with a Stat",
            &Response::Multi(MultiResponse {
                results: other.to_vec(),
            }),
        )),
    }
}

fn sequential_path(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let prefix = format!("{path}/s-");
    let (_, m) = multi(&mut conn, vec![sequential_op(&prefix)], false)?;
    let want = format!("{prefix}0000000000");
    ensure_eq(
        "results",
        m.results,
        vec![MultiResult::Create(zk_proto::CreateResponse {
            path: want.clone(),
        })],
    )?;
    ensure(
        conn.exists(&want, false)?.is_some(),
        format!("{want} exists"),
        || "NONODE".into(),
    )
}

fn sequential_op(prefix: &str) -> MultiOp {
    MultiOp::Create(req::create_record(
        prefix,
        None,
        zk_proto::Acl::open_unsafe(),
        CreateMode::PersistentSequential,
    ))
}

fn created_paths(m: &MultiResponse) -> Vec<String> {
    m.results
        .iter()
        .filter_map(|r| match r {
            MultiResult::Create(c) => Some(c.path.clone()),
            _ => None,
        })
        .collect()
}

fn sequential_twice(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let prefix = format!("{path}/s-");
    let ops = vec![sequential_op(&prefix), sequential_op(&prefix)];
    let (_, m) = multi(&mut conn, ops, false)?;
    ensure_eq(
        "created paths",
        created_paths(&m),
        vec![format!("{prefix}0000000000"), format!("{prefix}0000000001")],
    )
}

fn sequential_rolled_back(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let prefix = format!("{path}/s-");
    // The second op fails (no such znode): the whole multi is rolled back.
    let ops = vec![
        sequential_op(&prefix),
        MultiOp::Delete(DeleteRequest {
            path: format!("{path}/missing"),
            version: -1,
        }),
    ];
    multi(&mut conn, ops, false)?;
    let (_, m) = multi(&mut conn, vec![sequential_op(&prefix)], false)?;
    ensure_eq(
        "created paths",
        created_paths(&m),
        vec![format!("{prefix}0000000000")],
    )
}

fn empty(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let (h, m) = multi(&mut conn, vec![], false)?;
    ensure_eq("reply err", h.err, 0)?;
    ensure_eq("results", m.results, vec![])
}

fn read_in_write(ctx: &mut Ctx) -> CheckResult {
    let (mut conn, path) = setup(ctx)?;
    let created = format!("{path}/a");
    // zk-proto refuses to build this mix: the body is put together op by op.
    let mut body = BytesMut::new();
    body.put_i32(1000);
    body.put_i32(OpCode::Multi.code());
    let ops = [
        create_op(&created),
        MultiOp::GetData(GetDataRequest {
            path: path.clone(),
            watch: false,
        }),
    ];
    for op in ops {
        let mut one = BytesMut::new();
        MultiRequest { ops: vec![op] }.encode(&mut one);
        body.extend_from_slice(&one[..one.len() - MultiHeader::LEN]);
    }
    MultiHeader::END.encode(&mut body);
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    conn.send_bytes(&frame)?;
    let refused = match conn.ending()? {
        Ending::Closed => {
            conn = ctx.session()?;
            Ok(())
        }
        Ending::Frame(f) => match decode_reply(f, OpCode::Multi) {
            Ok((h, _)) if h.err != 0 => Ok(()),
            Ok((_, Some(Response::Multi(m)))) => ensure(
                m.results.iter().all(|r| matches!(r, MultiResult::Error(_))),
                "a refusal: only error results",
                || format!("{:?}", m.results),
            ),
            other => Err(fail("a refusal", format!("{other:?}"))),
        },
    };
    refused?;
    ensure(
        conn.exists(&created, false)?.is_none(),
        "nothing created",
        || format!("{created} exists"),
    )
}
