//! Transactions: `multi` (every write or none) and `multiRead`.

use zk_proto::{
    CheckVersionRequest, CreateMode, CreateRequest, CreateTtlRequest, DeleteRequest, ErrorCode,
    GetChildrenRequest, GetDataRequest, MultiOp, MultiRequest, MultiResponse, MultiResult, OpCode,
    PathKind, Request, SetDataRequest,
};

use super::client::{narrow, Client};
use crate::{ArgumentError, Error, Op, OpResult, ProtocolViolation, ReadOp, ReadResult};

impl Client {
    /// Runs `ops` as one transaction: all succeed or none is applied; a failure is
    /// [`Error::Multi`] naming the op that failed. As [`crate::Client::multi`].
    pub fn multi(&self, ops: impl IntoIterator<Item = Op>) -> Result<Vec<OpResult>, Error> {
        let ops = ops
            .into_iter()
            .map(|op| self.wire_op(op))
            .collect::<Result<Vec<_>, _>>()?;
        if ops.is_empty() {
            return Ok(Vec::new());
        }
        let m: MultiResponse = narrow(self.call(Request::Multi(MultiRequest { ops }), None)?)?;
        if let Some(e) = failure(&m.results) {
            return Err(e);
        }
        let wrong = |index| {
            let request = OpCode::Multi;
            Error::ProtocolViolation(ProtocolViolation::WrongMultiResult { request, index })
        };
        let mut out = Vec::with_capacity(m.results.len());
        for (i, r) in m.results.into_iter().enumerate() {
            out.push(match r {
                MultiResult::Create(c) => OpResult::Create {
                    path: self.client_path(&c.path),
                    stat: None,
                },
                MultiResult::Create2(c) => OpResult::Create {
                    path: self.client_path(&c.path),
                    stat: Some(c.stat),
                },
                MultiResult::SetData(stat) => OpResult::SetData(stat),
                MultiResult::Delete => OpResult::Delete,
                MultiResult::Check => OpResult::Check,
                _ => return Err(wrong(i)),
            });
        }
        Ok(out)
    }

    /// One op of a transaction as the server takes it.
    fn wire_op(&self, op: Op) -> Result<MultiOp, Error> {
        let sequential =
            matches!(&op, Op::Create { options, .. } if options.mode().is_sequential());
        let kind = match sequential {
            true => PathKind::Sequential,
            false => PathKind::Plain,
        };
        let path = self.server_path(op.path(), kind)?;
        Ok(match op {
            Op::Create { data, options, .. } => {
                let (mode, acl) = (options.mode(), options.acl().to_vec());
                let data = Some(data);
                match (mode.is_ttl(), mode) {
                    (true, _) => {
                        let ttl = options.ttl_duration().ok_or(ArgumentError::TtlMissing)?;
                        let ttl = ttl.as_millis() as i64;
                        MultiOp::CreateTtl(CreateTtlRequest {
                            path,
                            data,
                            acl,
                            mode,
                            ttl,
                        })
                    }
                    (false, CreateMode::Container) => MultiOp::CreateContainer(CreateRequest {
                        path,
                        data,
                        acl,
                        mode,
                    }),
                    (false, _) => MultiOp::Create2(CreateRequest {
                        path,
                        data,
                        acl,
                        mode,
                    }),
                }
            }
            Op::Delete { version, .. } => {
                let version = version.as_i32();
                MultiOp::Delete(DeleteRequest { path, version })
            }
            Op::SetData { data, version, .. } => MultiOp::SetData(SetDataRequest {
                path,
                data: Some(data),
                version: version.as_i32(),
            }),
            Op::Check { version, .. } => {
                let version = version.as_i32();
                MultiOp::Check(CheckVersionRequest { path, version })
            }
        })
    }

    /// Reads several znodes at one point in the server's history; each read succeeds or
    /// fails on its own. As [`crate::Client::multi_read`].
    pub fn multi_read(
        &self,
        ops: impl IntoIterator<Item = ReadOp>,
    ) -> Result<Vec<ReadResult>, Error> {
        let mut wire = Vec::new();
        for op in ops {
            let (data, p) = match op {
                ReadOp::GetData(p) => (true, p),
                ReadOp::GetChildren(p) => (false, p),
            };
            let path = self.server_path(&p, PathKind::Plain)?;
            let watch = false;
            wire.push(match data {
                true => MultiOp::GetData(GetDataRequest { path, watch }),
                false => MultiOp::GetChildren(GetChildrenRequest { path, watch }),
            });
        }
        if wire.is_empty() {
            return Ok(Vec::new());
        }
        let kinds: Vec<bool> = wire
            .iter()
            .map(|op| matches!(op, MultiOp::GetData(_)))
            .collect();
        let req = Request::MultiRead(MultiRequest { ops: wire });
        let m: MultiResponse = narrow(self.call(req, None)?)?;
        if m.results.len() != kinds.len() {
            return Err(Error::ProtocolViolation(ProtocolViolation::ResultCount {
                expected: kinds.len(),
                got: m.results.len(),
            }));
        }
        let mut out = Vec::with_capacity(kinds.len());
        for (index, (r, is_data)) in m.results.into_iter().zip(kinds).enumerate() {
            out.push(match (r, is_data) {
                (MultiResult::GetData(d), _) => {
                    ReadResult::Data(Ok((d.data.unwrap_or_default(), d.stat)))
                }
                (MultiResult::GetChildren(c), _) => ReadResult::Children(Ok(c.children)),
                (MultiResult::Error(code), true) => ReadResult::Data(Err(code)),
                (MultiResult::Error(code), false) => ReadResult::Children(Err(code)),
                _ => {
                    let request = OpCode::MultiRead;
                    let v = ProtocolViolation::WrongMultiResult { request, index };
                    return Err(Error::ProtocolViolation(v));
                }
            });
        }
        Ok(out)
    }
}

/// A failed transaction's error: the first op that failed for a reason of its own (the
/// others report RuntimeInconsistency), with every op's code.
fn failure(results: &[MultiResult]) -> Option<Error> {
    let code = |r: &MultiResult| match r {
        MultiResult::Error(c) => *c,
        _ => ErrorCode::Ok,
    };
    let codes: Vec<ErrorCode> = results.iter().map(code).collect();
    let failed = |c: &ErrorCode| *c != ErrorCode::Ok;
    let first = codes.iter().position(failed)?;
    let index = codes
        .iter()
        .position(|c| failed(c) && *c != ErrorCode::RuntimeInconsistency)
        .unwrap_or(first);
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
    fn a_failed_transaction_names_the_op_that_failed() {
        let results = [
            MultiResult::Error(ErrorCode::RuntimeInconsistency),
            MultiResult::Error(ErrorCode::NoNode),
            MultiResult::Error(ErrorCode::RuntimeInconsistency),
        ];
        match failure(&results) {
            Some(Error::Multi { index, code, .. }) => {
                assert_eq!((index, code), (1, ErrorCode::NoNode))
            }
            other => panic!("{other:?}"),
        }
        assert!(failure(&[MultiResult::Delete, MultiResult::Check]).is_none());
    }
}
