//! The smallest multiplexed client whose callers write their own requests: each caller, under
//! a lock, queues its oneshot and writes its frame to the socket itself (`try_write`); one
//! task reads replies and answers callers in order, and flushes what a full socket left
//! over. Beside `mux` it shows what the hop from a caller's task to a session task costs.

use std::{
    collections::VecDeque,
    io,
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use bytes::BytesMut;
use conformance::{bench::Throughput, raw_session::close_frame};
use tokio::{
    net::TcpStream,
    sync::{oneshot, Notify},
};

use crate::{
    mux::{answer, run_callers},
    settings::{Paths, Settings},
    tokio_raw::tokio_handshake,
    workloads::Workload,
};

struct Conn {
    s: TcpStream,
    state: Mutex<State>,
    /// Wakes the I/O task when a write is left over.
    flush: Notify,
}

#[derive(Default)]
struct State {
    waiting: VecDeque<oneshot::Sender<bool>>,
    /// Bytes a full socket did not take, written before any later frame.
    unsent: Vec<u8>,
    closed: bool,
}

impl Conn {
    /// Queues `reply` and writes `frame` now if the socket takes it; the rest waits for the
    /// I/O task. False once the connection is closed.
    fn call(&self, frame: &[u8], reply: oneshot::Sender<bool>) -> bool {
        let mut st = self.state.lock().unwrap();
        if st.closed {
            return false;
        }
        st.waiting.push_back(reply);
        if !st.unsent.is_empty() {
            st.unsent.extend_from_slice(frame);
            return true;
        }
        let n = match self.s.try_write(frame) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(_) => {
                st.closed = true;
                return false;
            }
        };
        if n < frame.len() {
            st.unsent.extend_from_slice(&frame[n..]);
            self.flush.notify_one();
        }
        true
    }
}

pub(crate) async fn direct_run(
    addr: SocketAddr,
    w: Workload,
    paths: &Paths,
    set: &Settings,
) -> io::Result<Vec<Throughput>> {
    let conn = Arc::new(Conn {
        s: tokio_handshake(addr)?,
        state: Mutex::new(State::default()),
        flush: Notify::new(),
    });
    let io_task = tokio::spawn(io_loop(conn.clone()));
    let c = conn.clone();
    let out = run_callers(w, paths, set, move |f, reply| c.call(f, reply)).await;
    conn.state.lock().unwrap().closed = true;
    conn.flush.notify_one();
    io_task.await.map_err(io::Error::other)??;
    Ok(out)
}

/// Reads replies and answers callers in order, flushes what callers left unsent; ends,
/// closing the session, once closed and every caller is answered.
async fn io_loop(conn: Arc<Conn>) -> io::Result<()> {
    let mut inbuf = BytesMut::with_capacity(64 << 10);
    loop {
        {
            let st = conn.state.lock().unwrap();
            if st.closed && st.waiting.is_empty() {
                break;
            }
        }
        tokio::select! {
            r = conn.s.readable() => {
                r?;
                inbuf.reserve(4096);
                match conn.s.try_read_buf(&mut inbuf) {
                    Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(e),
                }
                answer(&mut inbuf, &mut conn.state.lock().unwrap().waiting);
            }
            _ = conn.flush.notified() => flush(&conn).await?,
        }
    }
    let _ = conn.s.try_write(&close_frame());
    Ok(())
}

/// Writes what callers left unsent, waiting for the socket to take it.
async fn flush(conn: &Conn) -> io::Result<()> {
    loop {
        conn.s.writable().await?;
        let mut st = conn.state.lock().unwrap();
        if st.unsent.is_empty() {
            return Ok(());
        }
        match conn.s.try_write(&st.unsent) {
            Ok(n) => {
                st.unsent.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
    }
}
