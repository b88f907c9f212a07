//! The server-bound limit: a session made by hand on one `TcpStream`, `window` pre-encoded
//! frames kept in flight, replies counted by their length prefix.

use std::{
    io::{self, Read, Write},
    net::{SocketAddr, TcpStream},
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

    /// `n` frames from frame `at` (`at < RING_FRAMES`, `n <= RING_FRAMES`).
    pub(crate) fn frames(&self, at: usize, n: usize) -> &[u8] {
        &self.bytes[self.offsets[at]..self.offsets[at + n]]
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

/// The raw loop: `window` frames in flight, refilled with as many frames as replies came in
/// each read.
pub(crate) fn raw_run(
    addr: SocketAddr,
    w: Workload,
    paths: &Paths,
    set: &Settings,
) -> io::Result<Vec<Throughput>> {
    let ring = Ring::new(w.kind, paths);
    let frames_per_op = match w.kind {
        Kind::Get => 1,
        Kind::CreateDelete => 2,
    };
    let mut s = raw_handshake(addr)?;
    let mut buf = vec![0u8; 4 << 20];
    let mut filled = 0;
    let mut cursor = 0;
    s.write_all(ring.frames(cursor, w.window))?;
    cursor = w.window % RING_FRAMES;
    let mut in_flight = w.window;
    let mut replies: u64 = 0;
    let mut errors: u64 = 0;
    let mut stopping = false;
    let mut rep: isize = -1;
    let mut phase_end = Instant::now() + Duration::from_secs_f64(set.timing.warmup);
    let mut mark = (0u64, 0u64, Instant::now(), process_cpu());
    let mut out = Vec::new();
    loop {
        let n = s.read(&mut buf[filled..])?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        filled += n;
        let mut pos = 0;
        let mut got = 0;
        while filled - pos >= 4 {
            let len = i32::from_be_bytes(buf[pos..pos + 4].try_into().unwrap()) as usize;
            if filled - pos < 4 + len {
                break;
            }
            // Reply header: xid (4), zxid (8), err (4).
            if len < 16 || buf[pos + 16..pos + 20] != [0; 4] {
                errors += 1;
            }
            pos += 4 + len;
            got += 1;
        }
        buf.copy_within(pos..filled, 0);
        filled -= pos;
        replies += got as u64;
        in_flight -= got;

        let now = Instant::now();
        if !stopping && now >= phase_end {
            if rep >= 0 {
                out.push(Throughput {
                    ops: (replies - mark.0) / frames_per_op,
                    elapsed: now - mark.2,
                    cpu: process_cpu() - mark.3,
                    errors: errors - mark.1,
                });
            }
            rep += 1;
            if rep as usize == set.reps {
                stopping = true;
                // End on a whole pair, so no node is left behind.
                if cursor % frames_per_op as usize != 0 {
                    s.write_all(ring.frames(cursor, 1))?;
                    cursor = (cursor + 1) % RING_FRAMES;
                    in_flight += 1;
                }
            } else {
                mark = (replies, errors, now, process_cpu());
                phase_end = now + Duration::from_secs_f64(set.timing.secs);
            }
        }
        if stopping {
            if in_flight == 0 {
                // Close the session rather than leave it to expire.
                let mut close = BytesMut::new();
                FrameCodec::new()
                    .encode_with(&mut close, |b| Request::CloseSession.encode(2_000_000, b))
                    .expect("small frame");
                let _ = s.write_all(&close);
                break;
            }
        } else if got > 0 {
            s.write_all(ring.frames(cursor, got))?;
            cursor = (cursor + got) % RING_FRAMES;
            in_flight += got;
        }
    }
    Ok(out)
}
