//! Ordering: replies in request order, zxids, read-your-writes, sync.

use zk_proto::{CreateMode, ErrorCode, OpCode, Response};

use crate::{
    check::{ensure, ensure_eq, fail, Area, Check, CheckResult},
    ctx::Ctx,
    req,
};

const GUIDE: &str = "Programmer's Guide: ZooKeeper guarantees (sequential consistency)";

/// The checks of this area.
pub const CHECKS: &[Check] = checks!(Area::Ordering, "ordering";
    "replies-in-order", "pipelined requests are answered in request order", "Programmer's Guide: ZooKeeper guarantees (FIFO client order)", replies_in_order;
    "zxid-monotonic", "the zxid in a session's replies never goes backwards", GUIDE, zxid_monotonic;
    "write-zxid-increases", "every write's reply carries a zxid higher than the previous write's", GUIDE, write_zxid_increases;
    "read-your-writes", "a pipelined read sees the session's write sent before it", GUIDE, read_your_writes;
    "sync", "a read after sync sees a write another session made before it", "Programmer's Guide: ZooKeeper guarantees (sync)", sync_then_read;
    "cross-session", "a write acknowledged to one session is visible to another's later read", GUIDE, cross_session;
);

/// Sends a mix of reads and writes without waiting; their xids and opcodes.
fn pipeline(conn: &mut crate::Conn, path: &str) -> Result<Vec<(i32, OpCode)>, crate::Finding> {
    let mut sent = Vec::new();
    for i in 0..24 {
        let r = match i % 4 {
            0 => req::set_data(path, format!("{i}").as_bytes(), -1),
            1 => req::get_data(path, false),
            2 => req::exists(&format!("{path}-missing"), false),
            _ => req::get_children(path, false),
        };
        sent.push((conn.send(&r)?, r.op_code()));
    }
    Ok(sent)
}

fn replies_in_order(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    conn.create(&path, b"", CreateMode::Persistent)?;
    for (x, op) in pipeline(&mut conn, &path)? {
        conn.recv(x, op)?;
    }
    Ok(())
}

fn zxid_monotonic(ctx: &mut Ctx) -> CheckResult {
    // Conn::recv fails on a zxid below one seen before; a second session writes meanwhile.
    let mut conn = ctx.session()?;
    let mut writer = ctx.session()?;
    let path = ctx.path("n");
    conn.create(&path, b"", CreateMode::Persistent)?;
    let mut last = 0;
    for round in 0..4 {
        let sent = pipeline(&mut conn, &path)?;
        writer.set_data(&path, format!("w{round}").as_bytes(), -1)?;
        for (x, op) in sent {
            let (h, _) = conn.recv(x, op)?;
            ensure(h.zxid >= last, format!("a zxid >= {last:#x}"), || {
                format!("{:#x}", h.zxid)
            })?;
            last = h.zxid;
        }
    }
    Ok(())
}

fn write_zxid_increases(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    conn.create(&path, b"", CreateMode::Persistent)?;
    let sent: Vec<i32> = (0..10)
        .map(|i| conn.send(&req::set_data(&path, &[i], -1)))
        .collect::<Result<_, _>>()?;
    let mut last = 0;
    for x in sent {
        let (h, body) = conn.recv(x, OpCode::SetData)?;
        ensure(h.zxid > last, format!("a zxid > {last:#x}"), || {
            format!("{:#x}", h.zxid)
        })?;
        if let Some(Response::Stat(s)) = body {
            ensure_eq("stat.mzxid", s.mzxid, h.zxid)?;
        }
        last = h.zxid;
    }
    Ok(())
}

fn read_your_writes(ctx: &mut Ctx) -> CheckResult {
    let mut conn = ctx.session()?;
    let path = ctx.path("n");
    let c = conn.send(&req::create(&path, b"first", CreateMode::Persistent))?;
    let s = conn.send(&req::set_data(&path, b"second", -1))?;
    let g = conn.send(&req::get_data(&path, false))?;
    let d = conn.send(&req::delete(&path, -1))?;
    let e = conn.send(&req::exists(&path, false))?;
    conn.recv(c, OpCode::Create)?;
    conn.recv(s, OpCode::SetData)?;
    match conn.recv(g, OpCode::GetData)? {
        (_, Some(Response::GetData(r))) => ensure_eq(
            "data read after the write",
            r.data.as_deref(),
            Some(&b"second"[..]),
        )?,
        other => return Err(fail("getData's data", format!("{other:?}"))),
    }
    conn.recv(d, OpCode::Delete)?;
    let (h, _) = conn.recv(e, OpCode::Exists)?;
    ensure_eq("exists after the delete", h.error_code(), ErrorCode::NoNode)
}

fn sync_then_read(ctx: &mut Ctx) -> CheckResult {
    let mut writer = ctx.session()?;
    let mut reader = ctx.session()?;
    let path = ctx.path("n");
    writer.create(&path, b"", CreateMode::Persistent)?;
    let stat = writer.set_data(&path, b"synced", -1)?;
    let s = reader.send(&req::sync(&path))?;
    let g = reader.send(&req::get_data(&path, false))?;
    match reader.recv(s, OpCode::Sync)? {
        (h, Some(Response::Sync(r))) => {
            ensure_eq("sync path", r.path, path)?;
            ensure(
                h.zxid >= stat.mzxid,
                "sync's zxid at least the write's",
                || format!("{:#x} < {:#x}", h.zxid, stat.mzxid),
            )?;
        }
        other => return Err(fail("a SyncResponse", format!("{other:?}"))),
    }
    match reader.recv(g, OpCode::GetData)? {
        (_, Some(Response::GetData(r))) => {
            ensure_eq("data", r.data.as_deref(), Some(&b"synced"[..]))
        }
        other => Err(fail("getData's data", format!("{other:?}"))),
    }
}

fn cross_session(ctx: &mut Ctx) -> CheckResult {
    let mut a = ctx.session()?;
    let mut b = ctx.session()?;
    let path = ctx.path("n");
    a.create(&path, b"", CreateMode::Persistent)?;
    for i in 0..5u8 {
        let stat = a.set_data(&path, &[i], -1)?;
        let (data, seen) = b.get_data(&path, false)?;
        ensure(
            seen.version >= stat.version,
            format!("version >= {}", stat.version),
            || seen.version.to_string(),
        )?;
        ensure_eq("data", data.as_deref(), Some(&[i][..]))?;
    }
    Ok(())
}
