//! The server-bound limit: a session made by hand on one `TcpStream`, `window` pre-encoded
//! frames kept in flight, replies counted by their length prefix.

use std::{
    io::{self, Read, Write},
    net::{SocketAddr, TcpStream},
    ops::Range,
    time::{Duration, Instant},
};

use bytes::{Bytes, BytesMut};
use conformance::bench::Throughput;
use tokio_util::codec::Decoder;
use zk_proto::{
    jute::Record, Acl, ConnectRequest, ConnectResponse, CreateMode, CreateRequest, DeleteRequest,
    FrameCodec, GetDataRequest, Request,
};

use crate::{
    cpu::process_cpu,
    settings::{Paths, Settings},
    workloads::{Kind, Workload},
    DATA_LEN, RING_FRAMES, SESSION_TIMEOUT,
};

/// Pre-encoded request frames, laid out twice in a row so that any run of up to
/// `RING_FRAMES` frames from any position is one contiguous slice.
pub(crate) struct Ring {
    pub(crate) bytes: Vec<u8>,
    /// Start of each frame in `bytes`, plus the end: `2 * RING_FRAMES + 1` entries.
    pub(crate) offsets: Vec<usize>,
}

impl Ring {
    pub(crate) fn new(kind: Kind, paths: &Paths) -> Ring {
        let codec = FrameCodec::new();
        let mut one = BytesMut::new();
        let mut offsets = vec![0];
        for i in 0..RING_FRAMES {
            let xid = i as i32 + 1;
            let req = match kind {
                Kind::Get => Request::GetData(GetDataRequest {
                    path: paths.data.clone(),
                    watch: false,
                }),
                // Pairs in order on one session: the delete always follows its create.
                Kind::CreateDelete => {
                    let path = format!("{}/raw-{}", paths.cd_base, i / 2);
                    if i % 2 == 0 {
                        Request::Create(CreateRequest {
                            path,
                            data: Some(Bytes::from(vec![0u8; DATA_LEN])),
                            acl: Acl::open_unsafe(),
                            mode: CreateMode::Persistent,
                        })
                    } else {
                        Request::Delete(DeleteRequest { path, version: -1 })
                    }
                }
            };
            codec
                .encode_with(&mut one, |b| req.encode(xid, b))
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
    pub(crate) fn range(&self, at: usize, n: usize) -> Range<usize> {
        self.offsets[at]..self.offsets[at + n]
    }
}

pub(crate) fn raw_handshake(addr: SocketAddr) -> io::Result<TcpStream> {
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
pub(crate) struct RawLoop<'a> {
    ring: Ring,
    set: &'a Settings,
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
pub(crate) enum Next {
    Read,
    /// Write these frames of the ring (`RawLoop::frames`), then read.
    Write(Range<usize>),
    /// Every repetition is done and every reply in: close the session.
    Close,
}

impl<'a> RawLoop<'a> {
    pub(crate) fn new(w: Workload, paths: &Paths, set: &'a Settings) -> RawLoop<'a> {
        RawLoop {
            ring: Ring::new(w.kind, paths),
            set,
            frames_per_op: match w.kind {
                Kind::Get => 1,
                Kind::CreateDelete => 2,
            },
            buf: vec![0u8; 4 << 20],
            filled: 0,
            cursor: w.window % RING_FRAMES,
            in_flight: w.window,
            replies: 0,
            errors: 0,
            stopping: false,
            rep: -1,
            phase_end: Instant::now() + Duration::from_secs_f64(set.timing.warmup),
            mark: (0, 0, Instant::now(), process_cpu()),
            out: Vec::new(),
        }
    }

    /// The first `window` frames, written before the first read.
    pub(crate) fn first(&self) -> Range<usize> {
        self.ring.range(0, self.in_flight)
    }

    pub(crate) fn frames(&self, r: Range<usize>) -> &[u8] {
        &self.ring.bytes[r]
    }

    /// Where the next read goes.
    pub(crate) fn space(&mut self) -> &mut [u8] {
        &mut self.buf[self.filled..]
    }

    /// `n` more bytes were read (0: the server hung up).
    pub(crate) fn read(&mut self, n: usize) -> io::Result<Next> {
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
    pub(crate) fn into_results(self) -> Vec<Throughput> {
        self.out
    }

    /// Counts the complete reply frames in the buffer and drops them.
    fn count_replies(&mut self) -> usize {
        let (buf, filled) = (&self.buf, self.filled);
        let mut pos = 0;
        let mut got = 0;
        while filled - pos >= 4 {
            let len = i32::from_be_bytes(buf[pos..pos + 4].try_into().unwrap()) as usize;
            if filled - pos < 4 + len {
                break;
            }
            // Reply header: xid (4), zxid (8), err (4).
            if len < 16 || buf[pos + 16..pos + 20] != [0; 4] {
                self.errors += 1;
            }
            pos += 4 + len;
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
        if self.rep as usize == self.set.reps {
            self.stopping = true;
            // End on a whole pair, so no node is left behind.
            if self.cursor % self.frames_per_op as usize != 0 {
                return Next::Write(self.take(1));
            }
        } else {
            self.mark = (self.replies, self.errors, now, process_cpu());
            self.phase_end = now + Duration::from_secs_f64(self.set.timing.secs);
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
pub(crate) fn close_frame() -> BytesMut {
    let mut close = BytesMut::new();
    FrameCodec::new()
        .encode_with(&mut close, |b| Request::CloseSession.encode(2_000_000, b))
        .expect("small frame");
    close
}

/// The raw loop on a blocking socket.
pub(crate) fn raw_run(
    addr: SocketAddr,
    w: Workload,
    paths: &Paths,
    set: &Settings,
) -> io::Result<Vec<Throughput>> {
    let mut s = raw_handshake(addr)?;
    let mut run = RawLoop::new(w, paths, set);
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
