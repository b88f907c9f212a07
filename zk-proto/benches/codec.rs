//! Codec throughput: encode and decode of typical frames, as a plain timing program.
//!
//! Run with `cargo bench -p zk-proto --bench codec` (optionally followed by `-- FILTER` to run
//! only the cases whose name contains FILTER). It asserts nothing about time: it prints a table.
//!
//! Each measurement warms up, calibrates a batch size of about `SAMPLE_TARGET`, then times
//! `SAMPLES` batches and reports the median time per operation. "Encode" writes a whole frame
//! (length prefix, header and record) into a reused `BytesMut`; "decode" decodes the frame body
//! (the `Bytes` after the length prefix, as `FrameCodec` yields it) into owned records. MB/s is
//! the frame size (with its prefix) over the time per operation, in 10^6 bytes per second.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use zk_proto::jute::Record;
use zk_proto::{
    decode_reply, Acl, CheckVersionRequest, CreateMode, CreateRequest, DeleteRequest, FrameCodec,
    GetChildrenResponse, GetDataResponse, MultiOp, MultiRequest, OpCode, ReplyHeader, Request,
    Response, SetDataRequest, Stat,
};

const WARMUP: Duration = Duration::from_millis(200);
const SAMPLE_TARGET: Duration = Duration::from_millis(40);
const SAMPLES: usize = 15;

/// Median nanoseconds per call of `f`.
fn measure(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut calls: u64 = 0;
    while start.elapsed() < WARMUP {
        f();
        calls += 1;
    }
    let per_call = WARMUP.as_secs_f64() / calls as f64;
    let batch = ((SAMPLE_TARGET.as_secs_f64() / per_call) as u64).max(1);
    let mut samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_nanos() as f64 / batch as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[SAMPLES / 2]
}

fn stat() -> Stat {
    Stat {
        czxid: 0x1_0000_0002,
        mzxid: 0x1_0000_0042,
        ctime: 1_700_000_000_000,
        mtime: 1_700_000_123_456,
        version: 3,
        cversion: 1_000,
        aversion: 0,
        ephemeral_owner: 0,
        data_length: 0,
        num_children: 1_000,
        pzxid: 0x1_0000_0040,
    }
}

/// One benchmark case: how to write its frame, and how to decode the frame body.
struct Case {
    name: String,
    encode: Box<dyn Fn(&mut BytesMut)>,
    decode: Box<dyn Fn(Bytes)>,
}

fn reply_case(name: String, op: OpCode, body: Response) -> Case {
    let header = ReplyHeader {
        xid: 42,
        zxid: 0x1_0000_0042,
        err: 0,
    };
    Case {
        name,
        encode: Box::new(move |buf| {
            header.encode(buf);
            body.encode(buf);
        }),
        decode: Box::new(move |frame| {
            let (h, body) = decode_reply(frame, op).expect("the benchmark's own frame decodes");
            black_box((h, body));
        }),
    }
}

fn get_data(len: usize) -> Case {
    let data = Bytes::from((0..len).map(|i| i as u8).collect::<Vec<u8>>());
    let label = if len >= 1024 {
        format!("{} KiB", len / 1024)
    } else {
        format!("{len} B")
    };
    let mut st = stat();
    st.data_length = len as i32;
    reply_case(
        format!("getData reply, {label}"),
        OpCode::GetData,
        Response::GetData(GetDataResponse {
            data: Some(data),
            stat: st,
        }),
    )
}

fn get_children() -> Case {
    let children = (0..1_000)
        .map(|i| format!("child-{:010}", 1_000 + i))
        .collect();
    reply_case(
        "getChildren reply, 1000".into(),
        OpCode::GetChildren,
        Response::GetChildren(GetChildrenResponse { children }),
    )
}

fn multi() -> Case {
    let data = Bytes::from(vec![b'x'; 64]);
    let mut ops = Vec::new();
    for i in 0..10 {
        let path = format!("/app/jobs/job-{i:04}");
        ops.push(match i % 4 {
            0 => MultiOp::Create(CreateRequest {
                path,
                data: Some(data.clone()),
                acl: Acl::open_unsafe(),
                mode: CreateMode::Persistent,
            }),
            1 => MultiOp::SetData(SetDataRequest {
                path,
                data: Some(data.clone()),
                version: i,
            }),
            2 => MultiOp::Delete(DeleteRequest { path, version: -1 }),
            _ => MultiOp::Check(CheckVersionRequest { path, version: i }),
        });
    }
    let request = Request::Multi(MultiRequest { ops });
    Case {
        name: "multi request, 10 ops".into(),
        encode: Box::new(move |buf| request.encode(42, buf)),
        decode: Box::new(|frame| {
            black_box(Request::decode(frame).expect("the benchmark's own frame decodes"));
        }),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; without it (`cargo test --all-targets` runs benches as
    // tests) each case is only encoded and decoded once. Other arguments filter cases by name.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let timed = args.iter().any(|a| a == "--bench");
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let cases = [
        get_data(100),
        get_data(1024),
        get_data(64 * 1024),
        get_children(),
        multi(),
    ];
    let codec = FrameCodec::new();

    println!("| case | frame bytes | encode ns/op | encode MB/s | decode ns/op | decode MB/s |");
    println!("|---|---:|---:|---:|---:|---:|");
    for case in cases
        .iter()
        .filter(|c| filter.is_empty() || filter.iter().any(|f| c.name.contains(f.as_str())))
    {
        let mut wire = BytesMut::new();
        codec
            .encode_with(&mut wire, &case.encode)
            .expect("benchmark frames fit the default limit");
        let frame_bytes = wire.len();
        let body = wire.freeze().slice(4..);

        // Decoded buffers must be slices of the frame, so that decode cost does not grow with
        // the data size. This checks the premise of the getData rows, not a timing.
        if case.name.starts_with("getData") {
            let (_, resp) = decode_reply(body.clone(), OpCode::GetData).unwrap();
            let Some(Response::GetData(r)) = resp else {
                panic!("getData frame decoded to {resp:?}")
            };
            let data = r.data.unwrap();
            let frame_range = body.as_ptr() as usize..body.as_ptr() as usize + body.len();
            assert!(
                frame_range.contains(&(data.as_ptr() as usize)),
                "GetDataResponse.data was copied"
            );
        }

        let mut buf = BytesMut::with_capacity(frame_bytes);
        if !timed {
            codec.encode_with(&mut buf, &case.encode).unwrap();
            assert_eq!(buf.len(), frame_bytes);
            (case.decode)(body);
            println!(
                "| {} | {} | (untimed: run with --bench) |",
                case.name, frame_bytes
            );
            continue;
        }
        let enc_ns = measure(|| {
            buf.clear();
            codec.encode_with(&mut buf, &case.encode).unwrap();
            black_box(&buf);
        });
        let dec_ns = measure(|| (case.decode)(black_box(body.clone())));
        let mbs = |ns: f64| frame_bytes as f64 / ns * 1e3;
        println!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} |",
            case.name,
            frame_bytes,
            enc_ns,
            mbs(enc_ns),
            dec_ns,
            mbs(dec_ns)
        );
    }
}
