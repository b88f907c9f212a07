//! Transactions: `multi` (all writes or none) and `multiRead`.

use super::*;
use crate::{OpCode, ProtocolViolation};

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
        let mut wire = Vec::new();
        for op in ops {
            wire.push(self.multi_op(op)?);
        }
        // The server would accept an empty multi, but there is nothing to send.
        if wire.is_empty() {
            return Ok(Vec::new());
        }
        let resp = self
            .call(Request::Multi(MultiRequest { ops: wire }), None)
            .await?;
        let m: MultiResponse = narrow(resp)?;
        if let Some(err) = multi_failure(&m.results) {
            return Err(err);
        }
        m.results
            .into_iter()
            .enumerate()
            .map(|(index, r)| match r {
                MultiResult::Create(c) => Ok(OpResult::Create {
                    path: self.client_path(&c.path),
                    stat: None,
                }),
                MultiResult::Create2(c) => Ok(OpResult::Create {
                    path: self.client_path(&c.path),
                    stat: Some(c.stat),
                }),
                MultiResult::Delete => Ok(OpResult::Delete),
                MultiResult::SetData(s) => Ok(OpResult::SetData(s)),
                MultiResult::Check => Ok(OpResult::Check),
                _ => Err(Error::ProtocolViolation(
                    ProtocolViolation::WrongMultiResult {
                        request: OpCode::Multi,
                        index,
                    },
                )),
            })
            .collect()
    }

    fn multi_op(&self, op: Op) -> Result<MultiOp, Error> {
        let kind = match &op {
            Op::Create { options, .. } if options.mode().is_sequential() => PathKind::Sequential,
            _ => PathKind::Plain,
        };
        let path = self.server_path(op.path(), kind)?;
        Ok(match op {
            Op::Create { data, options, .. } => {
                let mode = options.mode();
                let acl = options.acl().to_vec();
                if mode.is_ttl() {
                    let ttl = options
                        .ttl_duration()
                        .ok_or(Error::InvalidArgument(crate::ArgumentError::TtlMissing))?;
                    MultiOp::CreateTtl(CreateTtlRequest {
                        path,
                        data: Some(data),
                        acl,
                        mode,
                        ttl: ttl.as_millis() as i64,
                    })
                } else {
                    let r = CreateRequest {
                        path,
                        data: Some(data),
                        acl,
                        mode,
                    };
                    if mode == CreateMode::Container {
                        MultiOp::CreateContainer(r)
                    } else {
                        MultiOp::Create2(r)
                    }
                }
            }
            Op::Delete { version, .. } => MultiOp::Delete(DeleteRequest {
                path,
                version: version.as_i32(),
            }),
            Op::SetData { data, version, .. } => MultiOp::SetData(SetDataRequest {
                path,
                data: Some(data),
                version: version.as_i32(),
            }),
            Op::Check { version, .. } => MultiOp::Check(CheckVersionRequest {
                path,
                version: version.as_i32(),
            }),
        })
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
        let mut wire = Vec::new();
        for op in ops {
            wire.push(match op {
                ReadOp::GetData(p) => MultiOp::GetData(GetDataRequest {
                    path: self.server_path(&p, PathKind::Plain)?,
                    watch: false,
                }),
                ReadOp::GetChildren(p) => MultiOp::GetChildren(GetChildrenRequest {
                    path: self.server_path(&p, PathKind::Plain)?,
                    watch: false,
                }),
            });
        }
        if wire.is_empty() {
            return Ok(Vec::new());
        }
        let resp = self
            .call(Request::MultiRead(MultiRequest { ops: wire.clone() }), None)
            .await?;
        let m: MultiResponse = narrow(resp)?;
        if m.results.len() != wire.len() {
            return Err(Error::ProtocolViolation(ProtocolViolation::ResultCount {
                expected: wire.len(),
                got: m.results.len(),
            }));
        }
        m.results
            .into_iter()
            .zip(wire)
            .enumerate()
            .map(|(index, (r, op))| match (r, op) {
                (MultiResult::GetData(d), _) => {
                    Ok(ReadResult::Data(Ok((d.data.unwrap_or_default(), d.stat))))
                }
                (MultiResult::GetChildren(c), _) => Ok(ReadResult::Children(Ok(c.children))),
                (MultiResult::Error(code), MultiOp::GetData(_)) => Ok(ReadResult::Data(Err(code))),
                (MultiResult::Error(code), _) => Ok(ReadResult::Children(Err(code))),
                (_, _) => Err(Error::ProtocolViolation(
                    ProtocolViolation::WrongMultiResult {
                        request: OpCode::MultiRead,
                        index,
                    },
                )),
            })
            .collect()
    }
}

/// A rolled-back transaction comes back as all-error results: the op that failed carries its
/// code, the ops before it 0 and the ops after it -2 (RuntimeInconsistency).
fn multi_failure(results: &[MultiResult]) -> Option<Error> {
    let codes: Vec<ErrorCode> = results
        .iter()
        .map(|r| match r {
            MultiResult::Error(c) => *c,
            _ => ErrorCode::Ok,
        })
        .collect();
    if !results
        .iter()
        .any(|r| matches!(r, MultiResult::Error(c) if *c != ErrorCode::Ok))
    {
        return None;
    }
    let index = codes
        .iter()
        .position(|c| !matches!(c, ErrorCode::Ok | ErrorCode::RuntimeInconsistency))
        .or_else(|| codes.iter().position(|c| *c != ErrorCode::Ok))
        .unwrap_or(0);
    Some(Error::Multi {
        index,
        code: codes[index],
        results: codes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_multi_names_the_failing_op() {
        let r = [
            MultiResult::Error(ErrorCode::Ok),
            MultiResult::Error(ErrorCode::BadVersion),
            MultiResult::Error(ErrorCode::RuntimeInconsistency),
        ];
        match multi_failure(&r) {
            Some(Error::Multi {
                index,
                code,
                results,
            }) => {
                assert_eq!(index, 1);
                assert_eq!(code, ErrorCode::BadVersion);
                assert_eq!(results.len(), 3);
            }
            other => panic!("{other:?}"),
        }
        assert!(multi_failure(&[MultiResult::Delete, MultiResult::Check]).is_none());
    }
}
