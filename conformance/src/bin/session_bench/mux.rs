//! The smallest multiplexed client on tokio: one I/O task owns the socket, `window` caller
//! tasks each hand it a pre-encoded frame and a oneshot through an unbounded channel and
//! await the reply, matched in order. No codec, no xid table, no watches, no timers: the
//! shape every client with a task per caller and a session task shares (ours, kezhuw's), at
//! its lowest cost. Between the raw loop on tokio and ours it tells the design's share of
//! ours' cost from the client's own work.

use std::{collections::VecDeque, io, net::SocketAddr};

use bytes::{Buf, Bytes, BytesMut};
use conformance::{
    bench::Throughput,
    counters::Counters,
    raw_session::{caller_frames, close_frame, next_reply},
};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::{mpsc, oneshot},
};

use crate::{
    settings::{Paths, Settings},
    tokio_raw::tokio_handshake,
    workloads::Workload,
};

/// A frame to send, and where its reply's error flag goes (true: the reply is an error).
type Call = (Bytes, oneshot::Sender<bool>);

pub(crate) async fn mux_run(
    addr: SocketAddr,
    w: Workload,
    paths: &Paths,
    set: &Settings,
) -> io::Result<Vec<Throughput>> {
    let s = tokio_handshake(addr)?;
    let (tx, rx) = mpsc::unbounded_channel::<Call>();
    let io_task = tokio::spawn(io_loop(s, rx));
    // The callers' senders go with them: the I/O task ends once they have stopped.
    let out = run_callers(w, paths, set, move |f, reply| {
        tx.send((f.clone(), reply)).is_ok()
    })
    .await;
    io_task.await.map_err(io::Error::other)??;
    Ok(out)
}

/// Runs `window` callers, each handing its frames to `send` with a oneshot for the reply's
/// error flag and awaiting it, through the warm-up and repetitions of `set`; returns the
/// repetitions once every caller has stopped. `send` says false when the connection is
/// gone.
pub(crate) async fn run_callers<S>(
    w: Workload,
    paths: &Paths,
    set: &Settings,
    send: S,
) -> Vec<Throughput>
where
    S: Fn(&Bytes, oneshot::Sender<bool>) -> bool + Clone + Send + 'static,
{
    let counters = Counters::default();
    let mut callers = tokio::task::JoinSet::new();
    for i in 0..w.window {
        let (send, counters) = (send.clone(), counters.clone());
        let frames = caller_frames(w.kind, paths, "mux", i);
        callers.spawn(async move {
            while !counters.stopped() {
                let mut failed = false;
                for f in &frames {
                    let (reply, rx) = oneshot::channel();
                    if !send(f, reply) {
                        return;
                    }
                    failed |= rx.await.unwrap_or(true);
                }
                counters.count(!failed);
            }
        });
    }
    drop(send);
    let out = counters.measure(set.schedule()).await;
    while callers.join_next().await.is_some() {}
    out
}

/// Writes what the callers queued (all of it, in one write), reads replies and answers the
/// callers in order; ends, closing the session, once every caller is gone and answered.
async fn io_loop(
    mut s: tokio::net::TcpStream,
    mut rx: mpsc::UnboundedReceiver<Call>,
) -> io::Result<()> {
    let mut waiting: VecDeque<oneshot::Sender<bool>> = VecDeque::new();
    let mut out = Vec::new();
    let mut inbuf = BytesMut::with_capacity(64 << 10);
    let mut open = true;
    while open || !waiting.is_empty() {
        tokio::select! {
            call = rx.recv(), if open => match call {
                Some(first) => {
                    let mut next = Some(first);
                    while let Some((frame, reply)) = next {
                        out.extend_from_slice(&frame);
                        waiting.push_back(reply);
                        next = rx.try_recv().ok();
                    }
                    s.write_all(&out).await?;
                    out.clear();
                }
                None => open = false,
            },
            n = s.read_buf(&mut inbuf) => {
                if n? == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                answer(&mut inbuf, &mut waiting);
                if inbuf.capacity() - inbuf.len() < 4096 {
                    inbuf.reserve(64 << 10);
                }
            }
        }
    }
    let _ = s.write_all(&close_frame()).await;
    Ok(())
}

/// Answers the callers waiting, in order, for each complete reply frame in `inbuf`.
pub(crate) fn answer(inbuf: &mut BytesMut, waiting: &mut VecDeque<oneshot::Sender<bool>>) {
    while let Some((len, failed)) = next_reply(inbuf) {
        inbuf.advance(len);
        if let Some(reply) = waiting.pop_front() {
            let _ = reply.send(failed);
        }
    }
}
