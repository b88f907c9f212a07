//! The raw loop on a tokio socket, in one task of the benchmark's runtime: what any client
//! built on tokio pays before it does any work of its own (a readiness wait in `epoll_wait`
//! where the blocking loop sleeps in `recvfrom`, and the task's wake-ups). Beside the raw
//! loop it shows how much of ours' cost is the runtime's.

use std::{io, net::SocketAddr};

use conformance::{
    bench::Throughput,
    raw_session::{close_frame, raw_handshake, Next, RawLoop},
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{
    settings::{Paths, Settings},
    workloads::Workload,
};

/// Runs the raw loop as a task spawned on the current runtime (as a user's code runs: on a
/// worker, not on the thread that blocks on the runtime).
pub(crate) async fn tokio_raw_run(
    addr: SocketAddr,
    w: Workload,
    paths: &Paths,
    set: &Settings,
) -> io::Result<Vec<Throughput>> {
    let mut s = tokio_handshake(addr)?;
    let (paths, schedule) = (paths.clone(), set.schedule());
    let task = tokio::spawn(async move {
        let mut run = RawLoop::new(w, &paths, schedule);
        s.write_all(run.frames(run.first())).await?;
        loop {
            let n = s.read(run.space()).await?;
            match run.read(n)? {
                Next::Read => {}
                Next::Write(r) => s.write_all(run.frames(r)).await?,
                Next::Close => {
                    let _ = s.write_all(&close_frame()).await;
                    break;
                }
            }
        }
        Ok(run.into_results())
    });
    task.await.map_err(io::Error::other)?
}

/// The raw loop's handshake, its socket then handed to tokio (inside a runtime).
pub(crate) fn tokio_handshake(addr: SocketAddr) -> io::Result<tokio::net::TcpStream> {
    let std = raw_handshake(addr)?;
    std.set_read_timeout(None)?;
    std.set_nonblocking(true)?;
    tokio::net::TcpStream::from_std(std)
}
