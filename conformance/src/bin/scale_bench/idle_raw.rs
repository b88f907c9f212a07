//! The floor for idle sessions on tokio: `n` sessions made by hand (the test kit's raw
//! connection does the handshake), each then a tokio task that writes a ping every third of
//! the session timeout and reads its reply. No client around it: what a task, a socket and a
//! heartbeat per session cost on the runtime, beside ours.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use bytes::{Bytes, BytesMut};
use conformance::raw::RawConnection;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    task::JoinSet,
};
use zk_proto::{FrameCodec, Request};

use crate::{
    idle::{run_child, runtime, ChildArgs, Idle, SESSION_TIMEOUT},
    procstat::sample,
};

/// The reference client's heartbeat, a third of the session timeout, rounded down to the
/// grain of the grid below.
const PING_EVERY: Duration =
    Duration::from_millis(SESSION_TIMEOUT.as_millis() as u64 / 3 / 64 * 64);
/// Pings fall on a grid of this step shared by every session, as zk-session's far deadlines
/// do (its `deadline_grid`): without it each session would wake the runtime on its own,
/// which costs several times the heartbeat itself.
const GRAIN: Duration = Duration::from_millis(64);
/// A ping's reply: length, xid, zxid, err.
const PING_REPLY: usize = 4 + 4 + 8 + 4;

/// Runs this program as `--child-idle-raw N ADDR SETTLE IDLE` and reads its result.
pub(crate) fn raw(addr: SocketAddr, n: usize, settle: f64, idle: f64) -> Result<Idle, String> {
    run_child("--child-idle-raw", n, &addr.to_string(), settle, idle)
}

/// The child's side: handshakes, settle, measure, print, close.
pub(crate) fn child(args: &[String]) -> Result<(), String> {
    let a = ChildArgs::parse(args, "--child-idle-raw N ADDR SETTLE IDLE")?;
    let addr: SocketAddr = a.target.parse().map_err(|e| format!("{}: {e}", a.target))?;
    let rt = runtime()?;
    let before = sample();
    let start = Instant::now();
    let sockets = handshakes(addr, a.n)?;
    let connect_time = start.elapsed();
    rt.block_on(async {
        let stop = Arc::new(AtomicBool::new(false));
        let frames = Frames {
            ping: frame(-2, &Request::Ping),
            close: frame(1, &Request::CloseSession),
        };
        let mut tasks = JoinSet::new();
        let t0 = tokio::time::Instant::now();
        for (i, s) in sockets.into_iter().enumerate() {
            let s = TcpStream::from_std(s).map_err(|e| e.to_string())?;
            // Spread over the interval, as sessions connected one after another would be,
            // on the grid.
            let slots = (PING_EVERY.as_millis() / GRAIN.as_millis()) as usize;
            let first = t0 + GRAIN * (i * slots / a.n) as u32;
            tasks.spawn(heartbeat(s, first, frames.clone(), stop.clone()));
        }
        let m = a.measure(before, connect_time).await;
        stop.store(true, Ordering::Relaxed);
        let mut alive = 0;
        while let Some(r) = tasks.join_next().await {
            alive += usize::from(r.unwrap_or(false));
        }
        m.print(alive);
        Ok(())
    })
}

/// `n` new sessions, their sockets ready for tokio.
fn handshakes(addr: SocketAddr, n: usize) -> Result<Vec<std::net::TcpStream>, String> {
    (0..n)
        .map(|_| {
            let mut c = RawConnection::connect(addr).map_err(|e| e.to_string())?;
            c.handshake(SESSION_TIMEOUT.as_millis() as i32)
                .map_err(|e| e.to_string())?;
            let s = c.stream().try_clone().map_err(|e| e.to_string())?;
            s.set_read_timeout(None).map_err(|e| e.to_string())?;
            s.set_nonblocking(true).map_err(|e| e.to_string())?;
            Ok(s)
        })
        .collect()
}

/// Pings every [`PING_EVERY`] from `first` until `stop`, then closes the session. Whether
/// every ping was answered.
async fn heartbeat(
    mut s: TcpStream,
    first: tokio::time::Instant,
    frames: Frames,
    stop: Arc<AtomicBool>,
) -> bool {
    let Frames { ping, close } = frames;
    let mut reply = [0u8; PING_REPLY];
    let mut every = tokio::time::interval_at(first, PING_EVERY);
    loop {
        every.tick().await;
        if stop.load(Ordering::Relaxed) {
            return s.write_all(&close).await.is_ok();
        }
        if s.write_all(&ping).await.is_err() || s.read_exact(&mut reply).await.is_err() {
            return false;
        }
    }
}

/// The frames every session sends, made once and shared.
#[derive(Clone)]
struct Frames {
    ping: Bytes,
    close: Bytes,
}

fn frame(xid: i32, r: &Request) -> Bytes {
    let mut b = BytesMut::new();
    FrameCodec::new()
        .encode_with(&mut b, |b| r.encode(xid, b))
        .expect("small frame");
    b.freeze()
}
