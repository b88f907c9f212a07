//! The server-bound limit: a session made by hand on one `TcpStream`, `window` pre-encoded
//! frames kept in flight, replies counted by their length prefix. Also the pieces of it that
//! the benchmarks' other hand-made clients use: the handshake, the pre-encoded frames, and
//! the reply frames told apart by their length prefix and error field.
//!
//! ```no_run
//! use std::time::Duration;
//! use conformance::{raw_session::raw_run, workload::{Paths, Schedule, Workload}};
//!
//! # let addr = "127.0.0.1:2181".parse().unwrap();
//! let paths = Paths::under("/bench".to_owned());
//! let s = Duration::from_secs(1);
//! let reps = raw_run(addr, Workload::from_spec("get:64").unwrap(), &paths,
//!     Schedule { warmup: s, secs: s, reps: 2 }).unwrap();
//! println!("{:.0} ops/s", reps[0].ops_per_sec());
//! ```

use std::{
    io::{self, Read, Write},
    net::{SocketAddr, TcpStream},
    ops::Range,
    time::{Duration, Instant},
};

use bytes::{Bytes, BytesMut};
use tokio_util::codec::Decoder;
use zk_proto::{
    jute::Record, Acl, ConnectRequest, ConnectResponse, CreateMode, CreateRequest, DeleteRequest,
    FrameCodec, GetDataRequest, Request,
};

use crate::{
    bench::Throughput,
    cpu::process_cpu,
    workload::{Kind, Paths, Schedule, Workload, DATA_LEN},
};

/// Frames in the raw loop's ring of pre-encoded requests (at least twice the largest window).
pub const RING_FRAMES: usize = 1024;
/// The session timeout the hand-made sessions ask for.
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(30);

/// Pre-encoded request frames, laid out twice in a row so that any run of up to
/// `RING_FRAMES` frames from any position is one contiguous slice.
pub struct Ring {
    pub bytes: Vec<u8>,
    /// Start of each frame in `bytes`, plus the end: `2 * RING_FRAMES + 1` entries.
    pub offsets: Vec<usize>,
}

impl Ring {
    pub fn new(kind: Kind, paths: &Paths) -> Ring {
        let codec = FrameCodec::new();
        let mut one = BytesMut::new();
        let mut offsets = vec![0];
        let per_op = Workload { kind, window: 1 }.frames_per_op();
        for i in 0..RING_FRAMES {
            // Pairs in order on one session: the delete always follows its create.
            let reqs = op_requests(kind, paths, &format!("raw-{}", i / per_op));
            let xid = i as i32 + 1;
            codec
                .encode_with(&mut one, |b| reqs[i % per_op].encode(xid, b))
                .expect("small frame");
            offsets.push(one.len());
        }
        let once = one.len();
        let mut bytes = one.to_vec();
        bytes.extend_from_slice(&one);
        for i in 1..=RING_FRAMES {
            offsets.push(once + offsets[i]);
        }
        Ring { bytes, offsets }
    }

    /// Where `n` frames from frame `at` lie in `bytes` (`at < RING_FRAMES`,
    /// `n <= RING_FRAMES`).
    pub fn range(&self, at: usize, n: usize) -> Range<usize> {
        self.offsets[at]..self.offsets[at + n]
    }
}

/// The requests of one op: a getData of the data znode, or the create then the delete of
/// the node `node` under the create + delete parent.
pub fn op_requests(kind: Kind, paths: &Paths, node: &str) -> Vec<Request> {
    match kind {
        Kind::Get => vec![Request::GetData(GetDataRequest {
            path: paths.data.clone(),
            watch: false,
        })],
        Kind::CreateDelete => {
            let path = format!("{}/{node}", paths.cd_base);
            vec![
                Request::Create(CreateRequest {
                    path: path.clone(),
                    data: Some(Bytes::from(vec![0u8; DATA_LEN])),
                    acl: Acl::open_unsafe(),
                    mode: CreateMode::Persistent,
                }),
                Request::Delete(DeleteRequest { path, version: -1 }),
            ]
        }
    }
}

/// The frames caller `i` of a multiplexed client sends for an op (xid `i + 1`, which no
/// reply is matched by: replies come in order), its create + delete node named `{tag}-{i}`.
pub fn caller_frames(kind: Kind, paths: &Paths, tag: &str, i: usize) -> Vec<Bytes> {
    let codec = FrameCodec::new();
    op_requests(kind, paths, &format!("{tag}-{i}"))
        .iter()
        .map(|r| {
            let mut b = BytesMut::new();
            codec
                .encode_with(&mut b, |b| r.encode(i as i32 + 1, b))
                .expect("small frame");
            b.freeze()
        })
        .collect()
}

/// The first complete reply frame in `buf`: its length with the length prefix, and whether
/// it failed (an error in its header, or too short to have a header). `None` until a whole
/// frame is in.
pub fn next_reply(buf: &[u8]) -> Option<(usize, bool)> {
    let len = u32::from_be_bytes(buf.get(..4)?.try_into().ok()?) as usize;
    let frame = buf.get(..len.checked_add(4)?)?;
    // Reply header: xid (4), zxid (8), err (4).
    let failed = frame.get(16..20).is_none_or(|err| err != [0; 4]);
    Some((frame.len(), failed))
}

/// Makes a session by hand: connects, sends a ConnectRequest and reads its response.
pub fn raw_handshake(addr: SocketAddr) -> io::Result<TcpStream> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    let req = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout: SESSION_TIMEOUT.as_millis() as i32,
        session_id: 0,
        passwd: Bytes::from_static(&[0; 16]),
        read_only: false,
    };
    let mut codec = FrameCodec::new();
    let mut out = BytesMut::new();
    codec
        .encode_with(&mut out, |b| req.encode(b))
        .expect("small frame");
    s.write_all(&out)?;
    let mut inbuf = BytesMut::new();
    let frame = loop {
        if let Some(f) = codec.decode(&mut inbuf).map_err(io::Error::other)? {
            break f;
        }
        let mut chunk = [0u8; 256];
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        inbuf.extend_from_slice(&chunk[..n]);
    };
    let resp = ConnectResponse::decode_exact(frame, "ConnectResponse").map_err(io::Error::other)?;
    if resp.is_expired() {
        return Err(io::Error::other("session refused"));
    }
    Ok(s)
}

/// The raw loop's bookkeeping, apart from its socket: `window` frames in flight, refilled
/// with as many frames as replies came in each read, repetitions timed by the reads' clock.
/// Shared by the blocking loop and the one on a tokio socket, so that the two differ only in
/// how they wait.
pub struct RawLoop {
    ring: Ring,
    schedule: Schedule,
    frames_per_op: u64,
    buf: Vec<u8>,
    filled: usize,
    cursor: usize,
    in_flight: usize,
    replies: u64,
    errors: u64,
    stopping: bool,
    rep: isize,
    phase_end: Instant,
    mark: (u64, u64, Instant, Duration),
    out: Vec<Throughput>,
}

/// What the loop does after a read.
pub enum Next {
    Read,
    /// Write these frames of the ring (`RawLoop::frames`), then read.
    Write(Range<usize>),
    /// Every repetition is done and every reply in: close the session.
    Close,
}

impl RawLoop {
    pub fn new(w: Workload, paths: &Paths, schedule: Schedule) -> RawLoop {
        RawLoop {
            ring: Ring::new(w.kind, paths),
            schedule,
            frames_per_op: w.frames_per_op() as u64,
            buf: vec![0u8; 4 << 20],
            filled: 0,
            cursor: w.window % RING_FRAMES,
            in_flight: w.window,
            replies: 0,
            errors: 0,
            stopping: false,
            rep: -1,
            phase_end: Instant::now() + schedule.warmup,
            mark: (0, 0, Instant::now(), process_cpu()),
            out: Vec::new(),
        }
    }

    /// The first `window` frames, written before the first read.
    pub fn first(&self) -> Range<usize> {
        self.ring.range(0, self.in_flight)
    }

    pub fn frames(&self, r: Range<usize>) -> &[u8] {
        &self.ring.bytes[r]
    }

    /// Where the next read goes.
    pub fn space(&mut self) -> &mut [u8] {
        &mut self.buf[self.filled..]
    }

    /// `n` more bytes were read (0: the server hung up).
    pub fn read(&mut self, n: usize) -> io::Result<Next> {
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.filled += n;
        let got = self.count_replies();
        let now = Instant::now();
        let mut next = Next::Read;
        if !self.stopping && now >= self.phase_end {
            next = self.phase_over(now);
        }
        if self.stopping {
            return Ok(if self.in_flight == 0 {
                Next::Close
            } else {
                next
            });
        }
        if got > 0 {
            next = Next::Write(self.take(got));
        }
        Ok(next)
    }

    /// The measured repetitions.
    pub fn into_results(self) -> Vec<Throughput> {
        self.out
    }

    /// Counts the complete reply frames in the buffer and drops them.
    fn count_replies(&mut self) -> usize {
        let filled = self.filled;
        let mut pos = 0;
        let mut got = 0;
        while let Some((len, failed)) = next_reply(&self.buf[pos..filled]) {
            self.errors += u64::from(failed);
            pos += len;
            got += 1;
        }
        self.buf.copy_within(pos..filled, 0);
        self.filled -= pos;
        self.replies += got as u64;
        self.in_flight -= got;
        got
    }

    /// A warm-up or a repetition ended: records it, and starts the next or stops.
    fn phase_over(&mut self, now: Instant) -> Next {
        if self.rep >= 0 {
            self.out.push(Throughput {
                ops: (self.replies - self.mark.0) / self.frames_per_op,
                elapsed: now - self.mark.2,
                cpu: process_cpu() - self.mark.3,
                errors: self.errors - self.mark.1,
            });
        }
        self.rep += 1;
        if self.rep as usize == self.schedule.reps {
            self.stopping = true;
            // End on a whole pair, so no node is left behind.
            if self.cursor % self.frames_per_op as usize != 0 {
                return Next::Write(self.take(1));
            }
        } else {
            self.mark = (self.replies, self.errors, now, process_cpu());
            self.phase_end = now + self.schedule.secs;
        }
        Next::Read
    }

    /// The next `n` frames of the ring, counted in flight.
    fn take(&mut self, n: usize) -> Range<usize> {
        let r = self.ring.range(self.cursor, n);
        self.cursor = (self.cursor + n) % RING_FRAMES;
        self.in_flight += n;
        r
    }
}

/// The closeSession frame the loops end with, rather than leave the session to expire.
pub fn close_frame() -> BytesMut {
    let mut close = BytesMut::new();
    FrameCodec::new()
        .encode_with(&mut close, |b| Request::CloseSession.encode(2_000_000, b))
        .expect("small frame");
    close
}

/// The raw loop on a blocking socket.
pub fn raw_run(
    addr: SocketAddr,
    w: Workload,
    paths: &Paths,
    schedule: Schedule,
) -> io::Result<Vec<Throughput>> {
    let mut s = raw_handshake(addr)?;
    let mut run = RawLoop::new(w, paths, schedule);
    s.write_all(run.frames(run.first()))?;
    loop {
        let n = s.read(run.space())?;
        match run.read(n)? {
            Next::Read => {}
            Next::Write(r) => s.write_all(run.frames(r))?,
            Next::Close => {
                let _ = s.write_all(&close_frame());
                break;
            }
        }
    }
    Ok(run.into_results())
}
