//! Curator's item envelope (`ItemSerializer`): how one queue znode carries one or more items.
//! Big-endian: the version `0x00010001`, then per item `0x01`, a 32-bit length and the bytes,
//! then `0x02`.

use bytes::{Buf, Bytes};

const VERSION: i32 = 0x0001_0001;
const ITEM: u8 = 0x01;
const END: u8 = 0x02;

/// Encodes `items` as one znode's data.
pub(crate) fn encode<I, B>(items: I) -> Vec<u8>
where
    I: IntoIterator<Item = B>,
    B: AsRef<[u8]>,
{
    let mut out = VERSION.to_be_bytes().to_vec();
    for item in items {
        let item = item.as_ref();
        out.push(ITEM);
        // A znode holds at most jute.maxbuffer (1 MB by default): an item never reaches 2 GiB.
        out.extend_from_slice(&(item.len() as i32).to_be_bytes());
        out.extend_from_slice(item);
    }
    out.push(END);
    out
}

/// Decodes one znode's data into its items (slices of `data`); `None` when it is not an
/// envelope (Curator logs such a node as corrupted and deletes it).
pub(crate) fn decode(data: &Bytes) -> Option<Vec<Bytes>> {
    let mut rest = data.clone();
    if rest.remaining() < 4 || rest.get_i32() != VERSION {
        return None;
    }
    let mut items = Vec::new();
    loop {
        if !rest.has_remaining() {
            return None;
        }
        match rest.get_u8() {
            ITEM => {
                if rest.remaining() < 4 {
                    return None;
                }
                let len = usize::try_from(rest.get_i32()).ok()?;
                if rest.remaining() < len {
                    return None;
                }
                items.push(rest.split_to(len));
            }
            END => return Some(items),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curators_bytes() {
        // catalogue.md, checked against Curator 5.4.0's jar.
        let three = encode([&b"ab"[..], b"", b"xyz"]);
        let hex: String = three.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "00010001010000000261620100000000010000000378797a02");
        assert_eq!(encode(Vec::<&[u8]>::new()), [0, 1, 0, 1, 2]);
        let items = decode(&Bytes::from(three)).unwrap();
        assert_eq!(items, [&b"ab"[..], b"", b"xyz"]);
    }

    #[test]
    fn anything_else_is_not_an_envelope() {
        for bad in [
            &b""[..],
            b"\x00\x01\x00\x01",
            b"\x00\x01\x00\x02\x02",
            b"\x00\x01\x00\x01\x01\x00\x00\x00\x05ab\x02",
            b"\x00\x01\x00\x01\x01\xff\xff\xff\xff\x02",
            b"\x00\x01\x00\x01\x07\x02",
            b"raw bytes",
        ] {
            assert_eq!(decode(&Bytes::copy_from_slice(bad)), None, "{bad:?}");
        }
    }
}
