//! `Stat`: a znode's metadata.

use bytes::BytesMut;

use crate::{
    jute::{Reader, Record, WriteJute},
    DecodeError,
};

/// A znode's metadata, as returned by exists, getData, setData and others (68 bytes on the wire).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Stat {
    /// The zxid of the change that created the znode.
    pub czxid: i64,
    /// The zxid of the change that last modified the znode's data.
    pub mzxid: i64,
    /// Creation time, milliseconds since the epoch.
    pub ctime: i64,
    /// Last modification time, milliseconds since the epoch.
    pub mtime: i64,
    /// The number of changes to the data.
    pub version: i32,
    /// The number of changes to the children.
    pub cversion: i32,
    /// The number of changes to the ACL.
    pub aversion: i32,
    /// The session id of the owner if the znode is ephemeral, else 0.
    pub ephemeral_owner: i64,
    /// The length of the data.
    pub data_length: i32,
    /// The number of children.
    pub num_children: i32,
    /// The zxid of the last change to the children.
    pub pzxid: i64,
}

impl Stat {
    /// The encoded length of a `Stat`.
    pub const LEN: usize = 68;
}

impl Record for Stat {
    fn encode(&self, buf: &mut BytesMut) {
        buf.put_jute_long(self.czxid);
        buf.put_jute_long(self.mzxid);
        buf.put_jute_long(self.ctime);
        buf.put_jute_long(self.mtime);
        buf.put_jute_int(self.version);
        buf.put_jute_int(self.cversion);
        buf.put_jute_int(self.aversion);
        buf.put_jute_long(self.ephemeral_owner);
        buf.put_jute_int(self.data_length);
        buf.put_jute_int(self.num_children);
        buf.put_jute_long(self.pzxid);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        Ok(Stat {
            czxid: r.read_i64("Stat.czxid")?,
            mzxid: r.read_i64("Stat.mzxid")?,
            ctime: r.read_i64("Stat.ctime")?,
            mtime: r.read_i64("Stat.mtime")?,
            version: r.read_i32("Stat.version")?,
            cversion: r.read_i32("Stat.cversion")?,
            aversion: r.read_i32("Stat.aversion")?,
            ephemeral_owner: r.read_i64("Stat.ephemeralOwner")?,
            data_length: r.read_i32("Stat.dataLength")?,
            num_children: r.read_i32("Stat.numChildren")?,
            pzxid: r.read_i64("Stat.pzxid")?,
        })
    }
}
