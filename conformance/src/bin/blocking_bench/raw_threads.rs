//! The floor for any client with one I/O thread and callers on threads: a reader thread owns
//! the socket's read half and answers callers in order; `window` caller threads each write
//! their own pre-encoded frame (one at a time, under a mutex) and block on a std channel for
//! the reply. No codec, no xid table, no watches, no timers: what ours does per request
//! beyond this is the client's own work.

use std::{
    collections::VecDeque,
    io::{self, Read, Write},
    net::{SocketAddr, TcpStream},
    sync::{
        mpsc::{self, Receiver, Sender},
        Arc, Mutex,
    },
    thread,
};

use conformance::{
    bench::Throughput,
    raw_session::{caller_frames, close_frame, next_reply, raw_handshake},
    workload::{Paths, Schedule, Workload},
};

use crate::callers::run_callers;

/// The write half and the callers waiting for replies, in the order their frames went out.
struct Conn {
    writer: Mutex<TcpStream>,
    waiting: Mutex<VecDeque<usize>>,
}

impl Conn {
    /// Caller `i` sends `frame`; false when the socket is gone.
    fn call(&self, i: usize, frame: &[u8]) -> bool {
        let mut s = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        // Queued before the write, so the reply can never come in before its caller.
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(i);
        s.write_all(frame).is_ok()
    }
}

pub(crate) fn raw_threads_run(
    addr: SocketAddr,
    w: Workload,
    paths: &Paths,
    s: Schedule,
) -> io::Result<Vec<Throughput>> {
    let stream = raw_handshake(addr)?;
    let read_half = stream.try_clone()?;
    let conn = Arc::new(Conn {
        writer: Mutex::new(stream),
        waiting: Mutex::new(VecDeque::new()),
    });
    let (senders, receivers): (Vec<Sender<bool>>, Vec<Receiver<bool>>) =
        (0..w.window).map(|_| mpsc::channel()).unzip();
    let reader = {
        let conn = conn.clone();
        thread::spawn(move || read_replies(read_half, &conn, &senders))
    };
    let mut receivers = receivers.into_iter();
    let out = run_callers(w, s, |i| {
        let (conn, frames) = (conn.clone(), caller_frames(w.kind, paths, "threads", i));
        let rx = receivers.next().expect("a receiver per caller");
        move || {
            let mut ok = true;
            for f in &frames {
                if !conn.call(i, f) {
                    return false;
                }
                ok &= rx.recv() == Ok(false);
            }
            ok
        }
    });
    // Every caller is answered; the server answers closeSession and hangs up, which ends the
    // reader.
    let _ = conn
        .writer
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .write_all(&close_frame());
    reader
        .join()
        .map_err(|_| io::Error::other("reader panicked"))??;
    Ok(out)
}

/// Reads reply frames and hands each caller in the queue its reply's error flag, until the
/// server hangs up.
fn read_replies(mut s: TcpStream, conn: &Conn, senders: &[Sender<bool>]) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut filled = 0;
    let mut replies = Vec::new();
    let mut callers = Vec::new();
    loop {
        let n = s.read(&mut buf[filled..])?;
        if n == 0 {
            return Ok(());
        }
        filled += n;
        let mut pos = 0;
        while let Some((len, failed)) = next_reply(&buf[pos..filled]) {
            replies.push(failed);
            pos += len;
        }
        buf.copy_within(pos..filled, 0);
        filled -= pos;
        {
            let mut waiting = conn.waiting.lock().unwrap_or_else(|e| e.into_inner());
            // The closeSession reply has no caller.
            let n = replies.len().min(waiting.len());
            callers.extend(waiting.drain(..n));
        }
        for (i, failed) in callers.drain(..).zip(replies.drain(..)) {
            let _ = senders[i].send(failed);
        }
    }
}
