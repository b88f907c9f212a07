//! multi (14) and multiRead (22): atomicity and per-operation results.

use zk_proto::{
    CheckVersionRequest, CreateMode, DeleteRequest, ErrorCode, GetChildrenRequest, GetDataRequest,
    MultiOp, MultiRequest, MultiResponse, MultiResult, Request, Response, SetDataRequest,
};

use crate::{
    check::{ensure, ensure_eq, fail, Area, Check, CheckResult, Finding},
    ctx::{unexpected, Conn, Ctx},
    req,
};

const JUTE: &str = "zookeeper.jute: MultiHeader, MultiResponse";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Multi, "multi";
    "success", "a multi's results come in operation order, each of its operation's kind", JUTE, success;
    "atomic", "a failing operation rolls the whole transaction back", "Programmer's Guide: multi (atomicity)", atomic;
    "error-codes", "a failed multi reports 0 before the failing op, its code, then RUNTIMEINCONSISTENCY", JUTE, error_codes;
    "check", "check inside a multi passes on the right version and fails with BADVERSION", JUTE, check_op;
    "zxid", "a multi's writes share the reply's zxid", JUTE, zxid;
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
