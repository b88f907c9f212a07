//! Golden bytes from the real Java implementation (ZooKeeper 3.8.0's jute classes).
//!
//! `golden/Golden.java` builds each record with concrete values and prints its bytes;
//! `golden/gen.sh` writes them to `tests/golden/java.hex`, which is committed so this test
//! needs no Java. For every record we check both directions: our decoder reads the Java bytes
//! into the values below, and our encoder turns those values into the identical bytes.

mod golden_support;

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};
use golden_support::{expectations, Expect};
use zk_proto::{jute::Record, *};

const JAVA_HEX: &str = include_str!("golden/java.hex");

fn java_records() -> BTreeMap<&'static str, Bytes> {
    JAVA_HEX
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (name, hex) = l.split_once(' ').expect("`name hex` line");
            assert!(hex.len() % 2 == 0, "{name}: odd hex length");
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
                .collect::<Vec<u8>>();
            (name, Bytes::from(bytes))
        })
        .collect()
}

/// Decodes `java` per `expect`, compares with the expected values, and returns our encoding
/// of those values.
fn check(name: &str, java: &Bytes, expect: &Expect) -> BytesMut {
    let mut ours = BytesMut::new();
    match expect {
        Expect::Stat(v) => {
            assert_eq!(
                &Stat::decode_exact(java.clone(), "Stat").unwrap(),
                v,
                "{name}"
            );
            v.encode(&mut ours);
        }
        Expect::ConnectRequest(v) => {
            let got = ConnectRequest::decode_exact(java.clone(), "ConnectRequest").unwrap();
            assert_eq!(&got, v, "{name}");
            v.encode(&mut ours);
        }
        Expect::ConnectResponse(v, has_read_only) => {
            let got = ConnectResponse::decode_exact(java.clone(), "ConnectResponse").unwrap();
            assert_eq!(&got, v, "{name}");
            v.encode(&mut ours);
            if !has_read_only {
                // We always write the readOnly byte; old servers leave it out.
                assert_eq!(ours.split_off(java.len()), &[0][..], "{name}");
            }
        }
        Expect::Request(xid, v) => {
            let (header, got) = Request::decode(java.clone()).unwrap();
            assert_eq!(header.xid, *xid, "{name}");
            assert_eq!(header.op, v.op_code().code(), "{name}");
            assert_eq!(&got, v, "{name}");
            v.encode(*xid, &mut ours);
        }
        Expect::Reply(header, op, body) => {
            let got = decode_reply(java.clone(), *op).unwrap();
            assert_eq!(&got.0, header, "{name}");
            assert_eq!(&got.1, body, "{name}");
            header.encode(&mut ours);
            if let Some(b) = body {
                b.encode(&mut ours);
            }
        }
        Expect::Notification(ev) => {
            let (header, got) = decode_notification(java.clone()).unwrap();
            assert_eq!(
                header,
                ReplyHeader {
                    xid: -1,
                    zxid: -1,
                    err: 0
                },
                "{name}"
            );
            assert_eq!(&got, ev, "{name}");
            header.encode(&mut ours);
            ev.encode(&mut ours);
        }
    }
    ours
}

#[test]
fn java_bytes_decode_to_the_expected_values_and_we_encode_the_same_bytes() {
    let java = java_records();
    for (name, expect) in expectations() {
        let bytes = java
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing from java.hex; run golden/gen.sh"));
        let ours = check(name, bytes, &expect);
        assert_eq!(
            &ours[..],
            &bytes[..],
            "{name}: our encoding differs from Java's"
        );
    }
}

#[test]
fn every_java_record_is_checked() {
    let expected: Vec<&str> = expectations().iter().map(|(n, _)| *n).collect();
    let java: Vec<&str> = java_records().keys().copied().collect();
    let mut sorted = expected.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), expected.len(), "duplicate expectation names");
    assert_eq!(sorted, java);
    assert!(java.len() >= 12);
}

#[test]
fn java_data_buffers_are_slices_of_the_frame() {
    let frame = java_records()["get_data_response"].clone();
    let Some(Response::GetData(g)) = decode_reply(frame.clone(), OpCode::GetData).unwrap().1 else {
        panic!("not GetData");
    };
    // ReplyHeader (16) + length prefix (4).
    assert_eq!(g.data.unwrap().as_ptr(), frame[20..].as_ptr());
}
