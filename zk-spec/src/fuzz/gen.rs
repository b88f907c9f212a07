//! Requests for the fuzzer: valid ones built from zk-proto's records with odd field values,
//! and mutations of their frames. Plain values, no I/O.

use bytes::BytesMut;
use zk_proto::{
    Acl, CheckVersionRequest, CreateMode, CreateTtlRequest, DeleteRequest, GetChildrenRequest,
    GetDataRequest, Id, MultiOp, MultiRequest, OpCode, Perms, Request,
};

use super::rng::Rng;
use crate::req;

/// One frame to send, with what the fuzzer expects of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The xid in the frame's header (what a reply must carry).
    pub xid: i32,
    /// The request's opcode when the frame is a well-formed request of it.
    pub op: Option<OpCode>,
    /// How the frame was mutated; `None` for a well-formed request.
    pub mutation: Option<Mutation>,
    /// The bytes, length prefix included.
    pub bytes: Vec<u8>,
}

/// A frame-level mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Random bytes of the body overwritten (the length prefix still right).
    Flip,
    /// The body cut short (the length prefix still right).
    Truncate,
    /// Random bytes appended to the body (the length prefix still right).
    Append,
    /// A random opcode in the header.
    Opcode,
    /// A negative or over-limit length prefix: the server must close.
    BadLength,
}

impl Mutation {
    /// Every mutation.
    pub const ALL: &'static [Mutation] = &[
        Mutation::Flip,
        Mutation::Truncate,
        Mutation::Append,
        Mutation::Opcode,
        Mutation::BadLength,
    ];

    /// Its name in case files.
    pub fn name(self) -> &'static str {
        match self {
            Mutation::Flip => "flip",
            Mutation::Truncate => "truncate",
            Mutation::Append => "append",
            Mutation::Opcode => "opcode",
            Mutation::BadLength => "bad-length",
        }
    }

    /// The mutation called `name`.
    pub fn from_name(name: &str) -> Option<Mutation> {
        Mutation::ALL.iter().copied().find(|m| m.name() == name)
    }
}

/// A path under `root`: usually one of a few names (so requests meet each other's znodes),
/// sometimes an invalid one.
fn path(rng: &mut Rng, root: &str) -> String {
    match rng.below(20) {
        0 => format!("{root}/a//b"),
        1 => format!("{root}/./x"),
        2 => format!("{root}/"),
        3 => "relative".into(),
        _ => {
            let depth = 1 + rng.below(3);
            let mut p = root.to_string();
            for _ in 0..depth {
                p.push('/');
                const NAMES: [&str; 4] = ["a", "b", "c", "q-"];
                p.push_str(NAMES[rng.below(NAMES.len())]);
            }
            p
        }
    }
}

fn acl(rng: &mut Rng) -> Vec<Acl> {
    match rng.below(10) {
        0 => vec![],
        1 => vec![Acl::new(
            Perms(rng.below(64) as i32),
            Id::new("ip", "127.0.0.1"),
        )],
        2 => vec![Acl::new(Perms::ALL, Id::new("no-such-scheme", "x"))],
        3 => Acl::read_unsafe(),
        _ => Acl::open_unsafe(),
    }
}

fn version(rng: &mut Rng) -> i32 {
    *rng.pick(&[-1, -1, 0, 1, 2, i32::MAX, i32::MIN])
}

fn data(rng: &mut Rng) -> Option<bytes::Bytes> {
    match rng.below(8) {
        0 => None,
        1 => {
            let n = 4096 + rng.below(60_000);
            Some(rng.bytes(n).into())
        }
        _ => {
            let n = rng.below(64);
            Some(rng.bytes(n).into())
        }
    }
}

fn create_record(rng: &mut Rng, root: &str) -> zk_proto::CreateRequest {
    let mode = *rng.pick(&[
        CreateMode::Persistent,
        CreateMode::Persistent,
        CreateMode::Ephemeral,
        CreateMode::PersistentSequential,
        CreateMode::EphemeralSequential,
    ]);
    req::create_record(&path(rng, root), data(rng), acl(rng), mode)
}

/// A well-formed request with field values chosen at random.
pub fn request(rng: &mut Rng, root: &str) -> Request {
    let p = path(rng, root);
    match rng.below(16) {
        0..=2 => Request::Create(create_record(rng, root)),
        3 => Request::Create2(create_record(rng, root)),
        4 => Request::CreateContainer(req::create_record(
            &p,
            data(rng),
            acl(rng),
            CreateMode::Container,
        )),
        5 => Request::CreateTtl(CreateTtlRequest {
            path: p,
            data: data(rng),
            acl: acl(rng),
            mode: CreateMode::PersistentWithTtl,
            ttl: *rng.pick(&[0, 1, 1000, i64::MAX]),
        }),
        6 => req::delete(&p, version(rng)),
        7 => req::exists(&p, rng.chance(50)),
        8 => req::get_data(&p, rng.chance(50)),
        9 => req::set_data(&p, &data(rng).unwrap_or_default(), version(rng)),
        10 => req::get_children2(&p, rng.chance(50)),
        11 => req::sync(&p),
        12 => req::get_acl(&p),
        13 => req::set_acl(&p, acl(rng), version(rng)),
        14 => Request::Multi(MultiRequest {
            ops: (0..1 + rng.below(5))
                .map(|_| match rng.below(4) {
                    0 => MultiOp::Create(create_record(rng, root)),
                    1 => MultiOp::Delete(DeleteRequest {
                        path: path(rng, root),
                        version: version(rng),
                    }),
                    2 => MultiOp::Check(CheckVersionRequest {
                        path: path(rng, root),
                        version: version(rng),
                    }),
                    _ => MultiOp::SetData(zk_proto::SetDataRequest {
                        path: path(rng, root),
                        data: data(rng),
                        version: version(rng),
                    }),
                })
                .collect(),
        }),
        _ => Request::MultiRead(MultiRequest {
            ops: (0..1 + rng.below(5))
                .map(|_| {
                    let (path, watch) = (path(rng, root), false);
                    if rng.chance(50) {
                        MultiOp::GetData(GetDataRequest { path, watch })
                    } else {
                        MultiOp::GetChildren(GetChildrenRequest { path, watch })
                    }
                })
                .collect(),
        }),
    }
}

/// The frame of `request` with `xid`.
pub fn frame(xid: i32, request: &Request) -> Vec<u8> {
    let mut body = BytesMut::new();
    request.encode(xid, &mut body);
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

/// A step: a well-formed request, or with probability `mutate_percent` a mutated one.
pub fn step(rng: &mut Rng, root: &str, xid: i32, mutate_percent: usize) -> Step {
    let request = request(rng, root);
    let bytes = frame(xid, &request);
    if !rng.chance(mutate_percent) {
        return Step {
            xid,
            op: Some(request.op_code()),
            mutation: None,
            bytes,
        };
    }
    let m = *rng.pick(Mutation::ALL);
    Step {
        xid,
        op: None,
        mutation: Some(m),
        bytes: mutate(rng, bytes, m),
    }
}

/// Applies `m` to a frame (prefix included). The header's xid stays.
pub fn mutate(rng: &mut Rng, mut frame: Vec<u8>, m: Mutation) -> Vec<u8> {
    let mut body = frame.split_off(4.min(frame.len()));
    match m {
        Mutation::Flip => {
            // Past the xid, so that an answer still says which request it is for.
            for _ in 0..1 + rng.below(4) {
                if body.len() > 4 {
                    let i = 4 + rng.below(body.len() - 4);
                    body[i] = rng.next_u64() as u8;
                }
            }
        }
        Mutation::Truncate => {
            let keep = 4 + rng.below(body.len().saturating_sub(4).max(1));
            body.truncate(keep.min(body.len()));
        }
        Mutation::Append => {
            let n = 1 + rng.below(32);
            let extra = rng.bytes(n);
            body.extend_from_slice(&extra);
        }
        Mutation::Opcode => {
            if body.len() >= 8 {
                let random = rng.next_u64() as i32;
                let op = *rng.pick(&[-11, 0, 10, 20, 23, 99, 108, 9999, i32::MIN, random]);
                body[4..8].copy_from_slice(&op.to_be_bytes());
            }
        }
        Mutation::BadLength => {
            let len: i32 = *rng.pick(&[-1, -2, i32::MIN, 0x10_0000, i32::MAX]);
            let mut out = len.to_be_bytes().to_vec();
            out.extend_from_slice(&body);
            return out;
        }
    }
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_steps_decode_and_mutations_keep_framing_unless_asked() {
        let mut rng = Rng::new(42);
        for i in 0..2000 {
            let s = step(&mut rng, "/fuzz", i + 1, 30);
            let len = i32::from_be_bytes([s.bytes[0], s.bytes[1], s.bytes[2], s.bytes[3]]);
            match s.mutation {
                None => {
                    let body = bytes::Bytes::copy_from_slice(&s.bytes[4..]);
                    let (h, r) = Request::decode(body).expect("a well-formed request");
                    assert_eq!((h.xid, Some(r.op_code())), (s.xid, s.op));
                }
                Some(Mutation::BadLength) => assert!(!(0..=0xfffff).contains(&len), "{len}"),
                Some(_) => {
                    assert_eq!(len as usize, s.bytes.len() - 4);
                    assert_eq!(&s.bytes[4..8], &s.xid.to_be_bytes());
                }
            }
        }
    }

    #[test]
    fn mutation_names_round_trip() {
        for m in Mutation::ALL {
            assert_eq!(Mutation::from_name(m.name()), Some(*m));
        }
    }
}
