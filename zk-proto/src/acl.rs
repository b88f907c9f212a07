//! Access control: permissions, identities and ACL entries.

use std::ops::{BitAnd, BitOr, BitOrAssign};

use bytes::BytesMut;

use crate::{
    jute::{Reader, Record, WriteJute},
    DecodeError,
};

/// A set of permission bits (`ZooDefs.Perms`).
///
/// Any `i32` is kept as is: the server, not the client, decides what unknown bits mean.
///
/// ```
/// use zk_proto::Perms;
/// let rw = Perms::READ | Perms::WRITE;
/// assert_eq!(rw, Perms(3));
/// assert!(Perms::ALL.contains(rw));
/// assert!(!rw.contains(Perms::ADMIN));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Perms(pub i32);

impl Perms {
    /// Read the data and list the children.
    pub const READ: Perms = Perms(1);
    /// Set the data.
    pub const WRITE: Perms = Perms(2);
    /// Create children.
    pub const CREATE: Perms = Perms(4);
    /// Delete children.
    pub const DELETE: Perms = Perms(8);
    /// Set the ACL.
    pub const ADMIN: Perms = Perms(16);
    /// All of the above.
    pub const ALL: Perms = Perms(31);

    /// True when every bit of `other` is set in `self`.
    pub fn contains(self, other: Perms) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Perms {
    type Output = Perms;
    fn bitor(self, rhs: Perms) -> Perms {
        Perms(self.0 | rhs.0)
    }
}

impl BitOrAssign for Perms {
    fn bitor_assign(&mut self, rhs: Perms) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for Perms {
    type Output = Perms;
    fn bitand(self, rhs: Perms) -> Perms {
        Perms(self.0 & rhs.0)
    }
}

/// An identity: an auth scheme and an id within it (`world:anyone`, `digest:user:hash`…).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Id {
    /// The auth scheme, e.g. `world`, `auth`, `digest`, `ip`, `sasl`.
    pub scheme: String,
    /// The id within the scheme.
    pub id: String,
}

impl Id {
    /// Creates an identity.
    pub fn new(scheme: impl Into<String>, id: impl Into<String>) -> Self {
        Id {
            scheme: scheme.into(),
            id: id.into(),
        }
    }

    /// `world:anyone`: everybody.
    pub fn anyone() -> Self {
        Id::new("world", "anyone")
    }

    /// `auth:`: whoever the creating session authenticated as.
    pub fn auth() -> Self {
        Id::new("auth", "")
    }
}

impl Record for Id {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_jute_string(Some(&self.scheme));
        buf.put_jute_string(Some(&self.id));
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Id {
            scheme: r.read_string("Id.scheme")?,
            id: r.read_string("Id.id")?,
        })
    }
}

/// One ACL entry: the permissions granted to an identity.
///
/// ```
/// use zk_proto::{Acl, Id, Perms};
/// let acl = Acl::open_unsafe();
/// assert_eq!(acl, vec![Acl { perms: Perms::ALL, id: Id::anyone() }]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Acl {
    /// The permissions granted.
    pub perms: Perms,
    /// The identity they are granted to.
    pub id: Id,
}

impl Acl {
    /// The smallest encoding of an entry: perms and two empty strings.
    pub(crate) const MIN_LEN: usize = 12;

    /// Creates an entry.
    pub fn new(perms: Perms, id: Id) -> Self {
        Acl { perms, id }
    }

    /// `OPEN_ACL_UNSAFE`: everyone may do everything.
    pub fn open_unsafe() -> Vec<Acl> {
        vec![Acl::new(Perms::ALL, Id::anyone())]
    }

    /// `CREATOR_ALL_ACL`: only the creator's authenticated identities may do anything.
    pub fn creator_all() -> Vec<Acl> {
        vec![Acl::new(Perms::ALL, Id::auth())]
    }

    /// `READ_ACL_UNSAFE`: everyone may read.
    pub fn read_unsafe() -> Vec<Acl> {
        vec![Acl::new(Perms::READ, Id::anyone())]
    }
}

impl Record for Acl {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_jute_int(self.perms.0);
        self.id.encode(buf);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Acl {
            perms: Perms(r.read_i32("Acl.perms")?),
            id: Id::decode(r)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, Bytes};

    #[test]
    fn acl_layout() {
        let mut b = BytesMut::new();
        Acl::read_unsafe()[0].encode(&mut b);
        let mut want = vec![0, 0, 0, 1, 0, 0, 0, 5];
        want.extend_from_slice(b"world");
        want.extend_from_slice(&[0, 0, 0, 6]);
        want.extend_from_slice(b"anyone");
        assert_eq!(&b[..], &want[..]);
        assert_eq!(
            Acl::decode_exact(b.freeze(), "Acl"),
            Ok(Acl::read_unsafe()[0].clone())
        );
    }

    #[test]
    fn creator_all_uses_the_auth_scheme() {
        assert_eq!(Acl::creator_all()[0].id, Id::new("auth", ""));
        assert_eq!(Acl::creator_all()[0].perms, Perms::ALL);
    }

    #[test]
    fn perms_combine() {
        let mut p = Perms::READ | Perms::WRITE | Perms::CREATE | Perms::DELETE;
        p |= Perms::ADMIN;
        assert_eq!(p, Perms::ALL);
        assert_eq!(p & Perms::WRITE, Perms::WRITE);
    }

    #[test]
    fn null_scheme_is_rejected() {
        let e = Id::decode_exact(
            Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]),
            "Id",
        );
        assert_eq!(
            e,
            Err(DecodeError::UnexpectedNull {
                field: "Id.scheme",
                offset: 0
            })
        );
    }

    #[test]
    fn acl_vector_count_is_bounded_by_the_frame() {
        // 2 entries need at least 24 bytes; only 12 are there.
        let mut b = BytesMut::new();
        b.put_i32(2);
        b.put_slice(&[0; 12]);
        let e = Reader::new(b.freeze()).read_vec("X.acl", Acl::MIN_LEN, Acl::decode);
        assert!(matches!(e, Err(DecodeError::InvalidCount { count: 2, .. })));
    }
}
