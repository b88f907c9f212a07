//! Limits: path rules, jute.maxbuffer both ways, many children.

use zk_proto::{
    Acl, CreateMode, ErrorCode, GetAllChildrenNumberRequest, MultiOp, MultiRequest, Request,
    Response,
};

use crate::{
    check::{ensure, ensure_eq, Area, Check, CheckResult},
    ctx::{unexpected, Ctx},
    req,
};

const PATHS: &str = "Programmer's Guide: ZooKeeper Data Model (path rules)";
const MAXBUFFER: &str = "ZooKeeper Administrator's Guide: jute.maxbuffer";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Limits, "limits";
    "path.relative", "a path without a leading / is refused with BADARGUMENTS", PATHS, path_relative;
    "path.trailing-slash", "a path ending in / is refused with BADARGUMENTS", PATHS, path_trailing_slash;
    "path.empty-component", "a path with // is refused with BADARGUMENTS", PATHS, path_empty_component;
    "path.dot", "a path with a . component is refused with BADARGUMENTS", PATHS, path_dot;
    "path.dot-dot", "a path with a .. component is refused with BADARGUMENTS", PATHS, path_dot_dot;
    "path.nul", "a path with a NUL character is refused with BADARGUMENTS", PATHS, path_nul;
    "max-buffer.under", "data of 1,000,000 bytes (under jute.maxbuffer) is stored and read back whole", MAXBUFFER, max_buffer_under;
    "max-buffer.over", "a request frame over jute.maxbuffer closes that connection only", MAXBUFFER, max_buffer_over;
    "many-children", "a znode with 1000 children lists and counts them all", "zookeeper.jute: GetChildrenResponse", many_children;
);

/// A create of `<an existing znode><suffix>`: refused with BADARGUMENTS, or NONODE when the
/// server looks for the (impossible) parent first, as ZooKeeper does for `//`.
fn bad_path(ctx: &mut Ctx, suffix: &str, or_no_node: bool) -> CheckResult {
    let mut conn = ctx.session()?;
    let parent = ctx.path("p");
    conn.create(&parent, b"", CreateMode::Persistent)?;
    let path = format!("{parent}{suffix}");
    let (h, _) = conn.call(&req::create(&path, b"", CreateMode::Persistent))?;
    let code = h.error_code();
    let ok = code == ErrorCode::BadArguments || (or_no_node && code == ErrorCode::NoNode);
    ensure(
        ok,
        format!("create {path:?} refused with BadArguments"),
        || format!("{code:?}"),
    )
}

fn path_relative(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    conn.err(
        &req::create("zk-spec-relative", b"", CreateMode::Persistent),
        ErrorCode::BadArguments,
    )
}

fn path_trailing_slash(ctx: &mut Ctx) -> CheckResult {
    bad_path(ctx, "/", false)
}

fn path_empty_component(ctx: &mut Ctx) -> CheckResult {
    bad_path(ctx, "//x", true)
}

fn path_dot(ctx: &mut Ctx) -> CheckResult {
    bad_path(ctx, "/.", false)
}

fn path_dot_dot(ctx: &mut Ctx) -> CheckResult {
    bad_path(ctx, "/..", false)
}

fn path_nul(ctx: &mut Ctx) -> CheckResult {
    bad_path(ctx, "/a\0b", false)
}

fn max_buffer_under(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("big");
    let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    conn.create(&path, &data, CreateMode::Persistent)?;
    let (got, stat) = conn.get_data(&path, false)?;
    ensure_eq("dataLength", stat.data_length, 1_000_000)?;
    ensure_eq(
        "data read back equal",
        got.as_deref() == Some(&data[..]),
        true,
    )
}

fn max_buffer_over(ctx: &mut Ctx) -> CheckResult {
    let mut big = ctx.session()?;
    let mut other = ctx.session()?;
    let path = ctx.path("over");
    other.create(&path, b"", CreateMode::Persistent)?;
    // setData of 2 MiB, framed by hand: the codec refuses to frame it.
    let mut body = bytes::BytesMut::new();
    req::set_data(&path, &vec![7u8; 2 << 20], -1).encode(1, &mut body);
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    // The server may close before reading it all: a failed write is fine.
    let _ = big.send_bytes(&frame);
    big.expect_closed("the server closes a connection whose frame is over jute.maxbuffer")?;
    let (data, _) = other.get_data(&path, false)?;
    ensure_eq("data unchanged", data.as_deref(), Some(&b""[..]))
}

fn many_children(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("many");
    conn.create(&path, b"", CreateMode::Persistent)?;
    for batch in 0..4 {
        let ops = (0..250)
            .map(|i| {
                let child = format!("{path}/child-with-a-longish-name-{:04}", batch * 250 + i);
                MultiOp::Create(req::create_record(
                    &child,
                    None,
                    Acl::open_unsafe(),
                    CreateMode::Persistent,
                ))
            })
            .collect();
        conn.ok(&Request::Multi(MultiRequest { ops }))?;
    }
    ensure_eq(
        "number of children",
        conn.children(&path, false)?.len(),
        1000,
    )?;
    match conn.ok(&Request::GetAllChildrenNumber(
        GetAllChildrenNumberRequest { path },
    ))? {
        Response::GetAllChildrenNumber(n) => ensure_eq("totalNumber", n.total_number, 1000),
        other => Err(unexpected("a GetAllChildrenNumberResponse", &other)),
    }
}
