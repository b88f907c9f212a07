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
const CHARS: &str = "Programmer's Guide: ZooKeeper Data Model (characters not allowed in a path)";
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
    "path.char.u0001", "a name with U+0001 is refused with BADARGUMENTS", CHARS, char_0001;
    "path.char.tab", "a name with a tab (U+0009) is refused with BADARGUMENTS", CHARS, char_0009;
    "path.char.u001f", "a name with U+001F is refused with BADARGUMENTS", CHARS, char_001f;
    "path.char.u007f", "a name with DEL (U+007F) is refused with BADARGUMENTS", CHARS, char_007f;
    "path.char.u0080", "a name with U+0080 is refused with BADARGUMENTS", CHARS, char_0080;
    "path.char.u009f", "a name with U+009F is refused with BADARGUMENTS", CHARS, char_009f;
    "path.char.ue000", "a name with U+E000 (in U+D800-U+F8FF) is refused with BADARGUMENTS", CHARS, char_e000;
    "path.char.uf8ff", "a name with U+F8FF is refused with BADARGUMENTS", CHARS, char_f8ff;
    "path.char.ufff0", "a name with U+FFF0 is refused with BADARGUMENTS", CHARS, char_fff0;
    "path.char.uffff", "a name with U+FFFF is refused with BADARGUMENTS", CHARS, char_ffff;
    "path.dot-inside", "a /./ component inside a path is refused (BADARGUMENTS, or NONODE for its impossible parent)", PATHS, path_dot_inside;
    "path.dot-dot-inside", "a /../ component inside a path is refused (BADARGUMENTS, or NONODE for its impossible parent)", PATHS, path_dot_dot_inside;
    "path.allowed.space", "a name with a space (U+0020) is created and listed as sent", CHARS, allowed_space;
    "path.allowed.u00a0", "a name with U+00A0, just past the refused U+007F-U+009F, is created and listed as sent", CHARS, allowed_00a0;
    "path.allowed.uf900", "a name with U+F900, just past the refused U+D800-U+F8FF, is created and listed as sent", CHARS, allowed_f900;
    "path.allowed.uffef", "a name with U+FFEF, just below the refused U+FFF0-U+FFFF, is created and listed as sent", CHARS, allowed_ffef;
    "path.allowed.dots-in-names", "names such as .x, x. and ... are created and listed as sent", PATHS, allowed_dots;
    "path.allowed.zookeeper-below", "the reserved name zookeeper is allowed below the root", "Programmer's Guide: ZNodes (the name \"zookeeper\" is reserved at /)", allowed_zookeeper_below;
    "path.long-name", "a 4000-character name is created and listed as sent", PATHS, long_name;
    "path.deep", "a path 64 levels deep is created and read back", PATHS, deep_path;
    "max-buffer.at-limit", "a request frame of exactly jute.maxbuffer (1048575) bytes is served", MAXBUFFER, max_buffer_at_limit;
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

fn bad_char(ctx: &mut Ctx, c: char) -> CheckResult {
    bad_path(ctx, &format!("/a{c}b"), false)
}

fn char_0001(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\u{1}')
}

fn char_0009(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\t')
}

fn char_001f(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\u{1f}')
}

fn char_007f(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\u{7f}')
}

fn char_0080(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\u{80}')
}

fn char_009f(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\u{9f}')
}

fn char_e000(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\u{e000}')
}

fn char_f8ff(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\u{f8ff}')
}

fn char_fff0(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\u{fff0}')
}

fn char_ffff(ctx: &mut Ctx) -> CheckResult {
    bad_char(ctx, '\u{ffff}')
}

fn path_dot_inside(ctx: &mut Ctx) -> CheckResult {
    bad_path(ctx, "/./x", true)
}

fn path_dot_dot_inside(ctx: &mut Ctx) -> CheckResult {
    bad_path(ctx, "/../x", true)
}

/// Creates each of `names` under a new parent: each must be created and listed as sent.
fn allowed(ctx: &mut Ctx, names: &[&str]) -> CheckResult {
    let mut conn = ctx.session()?;
    let parent = ctx.path("p");
    conn.create(&parent, b"", CreateMode::Persistent)?;
    for name in names {
        conn.create(&format!("{parent}/{name}"), b"", CreateMode::Persistent)?;
    }
    let mut want: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    want.sort();
    ensure_eq("children", conn.children(&parent, false)?, want)
}

fn allowed_space(ctx: &mut Ctx) -> CheckResult {
    allowed(ctx, &["a b"])
}

fn allowed_00a0(ctx: &mut Ctx) -> CheckResult {
    allowed(ctx, &["a\u{a0}b"])
}

fn allowed_f900(ctx: &mut Ctx) -> CheckResult {
    allowed(ctx, &["a\u{f900}b"])
}

fn allowed_ffef(ctx: &mut Ctx) -> CheckResult {
    allowed(ctx, &["a\u{ffef}b"])
}

fn allowed_dots(ctx: &mut Ctx) -> CheckResult {
    allowed(ctx, &[".x", "x.", "...", "a.b"])
}

fn allowed_zookeeper_below(ctx: &mut Ctx) -> CheckResult {
    allowed(ctx, &["zookeeper"])
}

fn long_name(ctx: &mut Ctx) -> CheckResult {
    allowed(ctx, &["n".repeat(4000).as_str()])
}

fn deep_path(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let mut path = ctx.path("d");
    for level in 0..64 {
        if level > 0 {
            path.push_str(&format!("/{level}"));
        }
        conn.create(&path, b"", CreateMode::Persistent)?;
    }
    conn.set_data(&path, b"deep", -1)?;
    let (data, _) = conn.get_data(&path, false)?;
    ensure_eq("data at depth 64", data.as_deref(), Some(&b"deep"[..]))
}

fn max_buffer_at_limit(ctx: &mut Ctx) -> CheckResult {
    const LIMIT: usize = 0xfffff;
    let mut conn = ctx.session()?;
    let path = ctx.path("limit");
    conn.create(&path, b"", CreateMode::Persistent)?;
    // header 8, path 4+n, data length 4, version 4: the data fills the rest.
    let fill = LIMIT - 8 - (4 + path.len()) - 4 - 4;
    let mut body = bytes::BytesMut::new();
    req::set_data(&path, &vec![3u8; fill], -1).encode(1, &mut body);
    ensure_eq("frame length", body.len(), LIMIT)?;
    let mut frame = (LIMIT as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    conn.send_bytes(&frame)?;
    let (h, _) = conn.recv(1, zk_proto::OpCode::SetData)?;
    ensure_eq("setData err", h.error_code(), ErrorCode::Ok)?;
    let stat = conn.exists(&path, false)?;
    ensure_eq(
        "dataLength",
        stat.map(|s| s.data_length as usize),
        Some(fill),
    )
}
