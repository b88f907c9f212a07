//! Transactions: `multi` (all writes or none) and `multiRead`.

use super::*;

impl Client {
    /// Runs the writes as one transaction: all succeed or none does. A failed transaction is
    /// [`Error::Multi`], which names the op that failed.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{CreateOptions, Error, Op, Version};
    ///
    /// let ops = [
    ///     Op::set_data("/app/config", b"v5", Version::Exact(4)),
    ///     Op::create("/app/history/rev-", b"v5", CreateOptions::persistent_sequential()),
    /// ];
    /// match client.multi(ops).await {
    ///     Ok(results) => assert_eq!(results.len(), 2), // one OpResult per op
    ///     Err(Error::Multi { index, code, .. }) => println!("op {index} failed: {code}"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn multi(&self, ops: impl IntoIterator<Item = Op>) -> Result<Vec<OpResult>, Error> {
        match ops::multi(&self.inner.chroot, ops)? {
            Some(call) => self.run(call).await,
            None => Ok(Vec::new()),
        }
    }

    /// Runs the reads in one round trip; each succeeds or fails on its own.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::ReadOp;
    ///
    /// // The data of every child, in one round trip.
    /// let names = client.get_children("/app/workers").await?;
    /// let reads = names.iter().map(|n| ReadOp::GetData(format!("/app/workers/{n}")));
    /// let results = client.multi_read(reads).await?;
    /// assert_eq!(results.len(), names.len()); // in the order of the reads
    /// # Ok(()) }
    /// ```
    pub async fn multi_read(
        &self,
        ops: impl IntoIterator<Item = ReadOp>,
    ) -> Result<Vec<ReadResult>, Error> {
        match ops::multi_read(&self.inner.chroot, ops)? {
            Some(call) => self.run(call).await,
            None => Ok(Vec::new()),
        }
    }
}
