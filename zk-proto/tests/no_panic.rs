//! Property tests: no input makes a decoder panic. Errors are fine; panics, overflows and
//! huge allocations are not.
//!
//! Purely random bytes rarely get past the first length, so the inputs are biased towards the
//! values that steer a jute decoder (0, -1, small lengths, valid opcodes) and include mutated
//! copies of the real Java frames from `tests/golden/java.hex`.

use bytes::{BufMut, Bytes, BytesMut};
use proptest::{collection::vec, prelude::*, sample::select};
use zk_proto::{jute::Record, *};

const JAVA_HEX: &str = include_str!("golden/java.hex");

fn java_frames() -> Vec<Bytes> {
    JAVA_HEX
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(_, hex)| {
            (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect::<Vec<u8>>()
                .into()
        })
        .collect()
}

/// Bytes where 0x00 and 0xff are common, so lengths of 0 and -1 and small ints show up.
fn soup(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(
        prop_oneof![3 => Just(0u8), 2 => Just(0xffu8), 1 => 1u8..8, 2 => any::<u8>()],
        0..max,
    )
}

/// A jute-looking stream: a mix of small ints, -1, opcodes, booleans and short strings.
fn jute_soup() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        (-2i32..20).prop_map(|v| v.to_be_bytes().to_vec()),
        select(OpCode::ALL).prop_map(|o| o.code().to_be_bytes().to_vec()),
        any::<i32>().prop_map(|v| v.to_be_bytes().to_vec()),
        any::<i64>().prop_map(|v| v.to_be_bytes().to_vec()),
        any::<bool>().prop_map(|b| vec![b as u8]),
        "[a-z/]{0,6}".prop_map(|s| {
            let mut v = (s.len() as i32).to_be_bytes().to_vec();
            v.extend_from_slice(s.as_bytes());
            v
        }),
        Just(vec![0xff, 0xff, 0xff, 0xff, 1, 0xff, 0xff, 0xff, 0xff]), // multi end marker
    ];
    vec(token, 0..40).prop_map(|ts| ts.concat())
}

/// A mutation of a real Java frame: flip, overwrite, insert or delete some bytes, or cut it.
fn mutated_java_frame() -> impl Strategy<Value = Vec<u8>> {
    let frames = java_frames();
    (
        0..frames.len(),
        vec((any::<usize>(), 0u8..4, any::<u8>()), 1..6),
        any::<usize>(),
        any::<bool>(),
    )
        .prop_map(move |(i, edits, cut, do_cut)| {
            let mut f = frames[i].to_vec();
            for (pos, kind, byte) in edits {
                let at = if f.is_empty() { 0 } else { pos % f.len() };
                match kind {
                    0 if !f.is_empty() => f[at] ^= byte | 1,
                    1 if !f.is_empty() => f[at] = byte,
                    2 => f.insert(at, byte),
                    _ if !f.is_empty() => {
                        f.remove(at);
                    }
                    _ => {}
                }
            }
            if do_cut && !f.is_empty() {
                f.truncate(cut % f.len());
            }
            f
        })
}

fn any_input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        vec(any::<u8>(), 0..128),
        soup(256),
        jute_soup(),
        mutated_java_frame()
    ]
}

fn with_prefix(prefix: &[u8], body: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(prefix.len() + body.len());
    b.put_slice(prefix);
    b.put_slice(body);
    b.freeze()
}

/// Runs every decoder over `bytes`, ignoring the results.
fn decode_everything(bytes: &[u8]) {
    let b = Bytes::copy_from_slice(bytes);
    let _ = Request::decode(b.clone());
    let _ = decode_notification(b.clone());
    for &op in OpCode::ALL {
        let _ = decode_reply(b.clone(), op);
        let _ = Response::decode(op, &mut jute::Reader::new(b.clone()));
        let _ = Request::decode_body(op, &mut jute::Reader::new(b.clone()));
    }
    let _ = ConnectRequest::decode_exact(b.clone(), "ConnectRequest");
    let _ = ConnectResponse::decode_exact(b.clone(), "ConnectResponse");
    let _ = MultiRequest::decode_exact(b.clone(), "MultiRequest");
    let _ = MultiResponse::decode_exact(b.clone(), "MultiResponse");
    let _ = WatcherEvent::decode_exact(b, "WatcherEvent");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn request_decode_never_panics(bytes in any_input(), xid in any::<i32>(), op in select(OpCode::ALL)) {
        let _ = Request::decode(Bytes::from(bytes.clone()));
        // With a valid header, so the body decoders are reached.
        let mut header = xid.to_be_bytes().to_vec();
        header.extend_from_slice(&op.code().to_be_bytes());
        let _ = Request::decode(with_prefix(&header, &bytes));
    }

    #[test]
    fn decode_reply_never_panics(bytes in any_input(), op in select(OpCode::ALL), err in prop_oneof![Just(0), any::<i32>()]) {
        let _ = decode_reply(Bytes::from(bytes.clone()), op);
        let mut header = BytesMut::new();
        ReplyHeader { xid: 1, zxid: 2, err }.encode(&mut header);
        let _ = decode_reply(with_prefix(&header, &bytes), op);
    }

    #[test]
    fn decode_notification_never_panics(bytes in any_input()) {
        let _ = decode_notification(Bytes::from(bytes.clone()));
        let mut header = BytesMut::new();
        ReplyHeader { xid: -1, zxid: -1, err: 0 }.encode(&mut header);
        let _ = decode_notification(with_prefix(&header, &bytes));
    }

    #[test]
    fn connect_decode_never_panics(bytes in any_input()) {
        let b = Bytes::from(bytes);
        let _ = ConnectRequest::decode_exact(b.clone(), "ConnectRequest");
        let _ = ConnectResponse::decode_exact(b, "ConnectResponse");
    }

    #[test]
    fn multi_decode_never_panics(bytes in prop_oneof![any_input(), jute_soup()]) {
        let b = Bytes::from(bytes);
        let _ = MultiResponse::decode_exact(b.clone(), "MultiResponse");
        let _ = MultiRequest::decode_exact(b, "MultiRequest");
    }

    #[test]
    fn every_decoder_survives_mutated_java_frames(bytes in mutated_java_frame()) {
        decode_everything(&bytes);
    }

    #[test]
    fn frame_codec_never_panics(
        bytes in prop_oneof![vec(any::<u8>(), 0..512), soup(512)],
        chunks in vec(1usize..64, 1..32),
        max in prop_oneof![Just(DEFAULT_MAX_FRAME_LEN), 0usize..64],
    ) {
        let codec = FrameCodec::with_max_frame_len(max);
        let mut src = BytesMut::new();
        let mut rest = &bytes[..];
        let mut chunk = chunks.iter().cycle();
        'feed: while !rest.is_empty() {
            let n = (*chunk.next().unwrap()).min(rest.len());
            src.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            loop {
                match codec.decode_frame(&mut src) {
                    Ok(Some(frame)) => {
                        prop_assert!(frame.len() <= max);
                        decode_everything(&frame);
                    }
                    Ok(None) => break,
                    Err(_) => break 'feed,
                }
            }
            // Never reserves beyond one maximal frame.
            prop_assert!(src.capacity() <= (max + 4).max(src.len()) + 4096);
        }
        // The tokio-util trait's end-of-stream path on whatever is left.
        #[cfg(feature = "codec")]
        {
            use tokio_util::codec::Decoder;
            let mut codec = codec;
            let _ = codec.decode_eof(&mut src);
        }
    }
}

#[test]
fn unmutated_java_frames_decode_somewhere() {
    // Sanity check for the mutation source: each frame is valid for at least one decoder.
    for f in java_frames() {
        let ok = Request::decode(f.clone()).is_ok()
            || decode_notification(f.clone()).is_ok()
            || OpCode::ALL
                .iter()
                .any(|&op| matches!(decode_reply(f.clone(), op), Ok((_, Some(_)))))
            || ConnectRequest::decode_exact(f.clone(), "ConnectRequest").is_ok()
            || ConnectResponse::decode_exact(f.clone(), "ConnectResponse").is_ok()
            || Stat::decode_exact(f.clone(), "Stat").is_ok()
            || ReplyHeader::decode_exact(f.clone(), "ReplyHeader").is_ok();
        assert!(ok, "{f:?}");
    }
}
