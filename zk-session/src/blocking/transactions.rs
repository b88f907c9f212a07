//! Transactions: `multi` (every write or none) and `multiRead`.

use super::client::Client;
use crate::{ops, Error, Op, OpResult, ReadOp, ReadResult};

impl Client {
    /// Runs `ops` as one transaction: all succeed or none is applied; a failure is
    /// [`Error::Multi`] naming the op that failed. As [`crate::Client::multi`].
    pub fn multi(&self, ops: impl IntoIterator<Item = Op>) -> Result<Vec<OpResult>, Error> {
        match ops::multi(&self.handle.chroot, ops)? {
            Some(call) => self.run(call),
            None => Ok(Vec::new()),
        }
    }

    /// Reads several znodes at one point in the server's history; each read succeeds or
    /// fails on its own. As [`crate::Client::multi_read`].
    pub fn multi_read(
        &self,
        ops: impl IntoIterator<Item = ReadOp>,
    ) -> Result<Vec<ReadResult>, Error> {
        match ops::multi_read(&self.handle.chroot, ops)? {
            Some(call) => self.run(call),
            None => Ok(Vec::new()),
        }
    }
}
