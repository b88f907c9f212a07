//! SASL frames as captured between ZooKeeper 3.8's Java client and server
//! (`shared/notes/security.md` §3): opcode 102 with an ordinary xid, a `buffer` token.

use bytes::{Bytes, BytesMut};
use zk_proto::{decode_reply, GetSaslRequest, GetSaslResponse, OpCode, Request, Response};

fn hex(s: &str) -> Bytes {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect::<Vec<u8>>()
        .into()
}

#[test]
fn the_empty_initial_token_is_the_captured_12_bytes() {
    let wire = hex("00000001 00000066 00000000");
    let sasl = Request::Sasl(GetSaslRequest {
        token: Some(Bytes::new()),
    });
    let mut out = BytesMut::new();
    sasl.encode(1, &mut out);
    assert_eq!(out.freeze(), wire);
    let (header, decoded) = Request::decode(wire).unwrap();
    assert_eq!((header.xid, header.op), (1, 102));
    assert_eq!(decoded, sasl);
}

#[test]
fn replies_carry_zxid_0_and_a_token_or_a_refusal() {
    // rspauth=… after a good password (token shortened here).
    let ok = hex("00000002 0000000000000000 00000000 00000003 616263");
    let (header, body) = decode_reply(ok, OpCode::Sasl).unwrap();
    assert_eq!((header.xid, header.zxid, header.err), (2, 0, 0));
    assert_eq!(
        body,
        Some(Response::Sasl(GetSaslResponse {
            token: Some(Bytes::from_static(b"abc")),
        }))
    );
    // A wrong password: -115 and a null token, then the server hangs up.
    let refused = hex("00000002 0000000000000000 ffffff8d ffffffff");
    let (header, body) = decode_reply(refused, OpCode::Sasl).unwrap();
    assert_eq!(header.err, -115);
    assert_eq!(body, None);
    // A server without a JAAS section: err 0 and a null token.
    let no_jaas = hex("00000001 0000000000000000 00000000 ffffffff");
    let (_, body) = decode_reply(no_jaas, OpCode::Sasl).unwrap();
    assert_eq!(body, Some(Response::Sasl(GetSaslResponse { token: None })));
}
