//! Transactions: `multi` (every write or none) and `multiRead`.

use zk_proto::{
    CheckVersionRequest, CreateMode, CreateRequest, CreateTtlRequest, DeleteRequest, ErrorCode,
    GetChildrenRequest, GetDataRequest, MultiOp, MultiRequest, MultiResponse, MultiResult, OpCode,
    PathKind, Request,
};

use super::{narrow, node::plain, Call, Decode};
use crate::{
    chroot::Chroot, ArgumentError, Error, Op, OpResult, ProtocolViolation, ReadOp, ReadResult,
};

/// multi: the ops' results, or [`Error::Multi`] naming the op that failed. `None` when
/// there is no op: the server would accept an empty multi, but there is nothing to send.
pub(crate) fn multi<'a>(
    chroot: &'a Chroot,
    ops: impl IntoIterator<Item = Op>,
) -> Result<Option<Call<impl Decode<Vec<OpResult>> + 'a>>, Error> {
    let ops = ops
        .into_iter()
        .map(|op| wire_op(chroot, op))
        .collect::<Result<Vec<_>, _>>()?;
    if ops.is_empty() {
        return Ok(None);
    }
    let request = Request::Multi(MultiRequest { ops });
    Ok(Some(plain(request, move |r| {
        let m: MultiResponse = narrow(r?)?;
        if let Some(e) = failure(&m.results) {
            return Err(e);
        }
        let results = m.results.into_iter().enumerate();
        results.map(|(i, r)| op_result(chroot, i, r)).collect()
    })))
}

/// One op's result in a transaction that succeeded.
fn op_result(chroot: &Chroot, index: usize, r: MultiResult) -> Result<OpResult, Error> {
    Ok(match r {
        MultiResult::Create(c) => OpResult::Create {
            path: chroot.to_client(&c.path),
            stat: None,
        },
        MultiResult::Create2(c) => OpResult::Create {
            path: chroot.to_client(&c.path),
            stat: Some(c.stat),
        },
        MultiResult::SetData(stat) => OpResult::SetData(stat),
        MultiResult::Delete => OpResult::Delete,
        MultiResult::Check => OpResult::Check,
        _ => return Err(wrong_result(OpCode::Multi, index)),
    })
}

fn wrong_result(request: OpCode, index: usize) -> Error {
    Error::ProtocolViolation(ProtocolViolation::WrongMultiResult { request, index })
}

/// One op of a transaction as the server takes it (a TTL's range is the server's to check
/// here, as the Java client leaves it).
fn wire_op(chroot: &Chroot, op: Op) -> Result<MultiOp, Error> {
    let kind = match &op {
        Op::Create { options, .. } if options.mode().is_sequential() => PathKind::Sequential,
        _ => PathKind::Plain,
    };
    let path = chroot.server_path(op.path(), kind)?;
    Ok(match op {
        Op::Create { data, options, .. } => {
            let (mode, acl, data) = (options.mode(), options.acl().to_vec(), Some(data));
            if mode.is_ttl() {
                let ttl = options.ttl_duration().ok_or(ArgumentError::TtlMissing)?;
                let ttl = ttl.as_millis() as i64;
                let r = CreateTtlRequest {
                    path,
                    data,
                    acl,
                    mode,
                    ttl,
                };
                return Ok(MultiOp::CreateTtl(r));
            }
            let r = CreateRequest {
                path,
                data,
                acl,
                mode,
            };
            match mode {
                CreateMode::Container => MultiOp::CreateContainer(r),
                _ => MultiOp::Create2(r),
            }
        }
        Op::Delete { version, .. } => {
            let version = version.as_i32();
            MultiOp::Delete(DeleteRequest { path, version })
        }
        Op::SetData { data, version, .. } => MultiOp::SetData(zk_proto::SetDataRequest {
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

/// A rolled-back transaction comes back as all-error results: the op that failed carries
/// its code, the ops before it 0 and the ops after it RuntimeInconsistency. The error names
/// the first op that failed for a reason of its own, with every op's code.
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

/// multiRead: each read's result, in order (each succeeds or fails on its own). `None` when
/// there is no read.
pub(crate) fn multi_read(
    chroot: &Chroot,
    ops: impl IntoIterator<Item = ReadOp>,
) -> Result<Option<Call<impl Decode<Vec<ReadResult>>>>, Error> {
    let mut wire = Vec::new();
    let mut is_data = Vec::new();
    for op in ops {
        let (data, p) = match op {
            ReadOp::GetData(p) => (true, p),
            ReadOp::GetChildren(p) => (false, p),
        };
        let (path, watch) = (chroot.server_path(&p, PathKind::Plain)?, false);
        wire.push(match data {
            true => MultiOp::GetData(GetDataRequest { path, watch }),
            false => MultiOp::GetChildren(GetChildrenRequest { path, watch }),
        });
        is_data.push(data);
    }
    if wire.is_empty() {
        return Ok(None);
    }
    let request = Request::MultiRead(MultiRequest { ops: wire });
    Ok(Some(plain(request, move |r| {
        let m: MultiResponse = narrow(r?)?;
        if m.results.len() != is_data.len() {
            return Err(Error::ProtocolViolation(ProtocolViolation::ResultCount {
                expected: is_data.len(),
                got: m.results.len(),
            }));
        }
        let results = m.results.into_iter().zip(is_data).enumerate();
        results.map(|(i, (r, d))| read_result(i, r, d)).collect()
    })))
}

/// One read's result; `is_data` says whether it was a getData.
fn read_result(index: usize, r: MultiResult, is_data: bool) -> Result<ReadResult, Error> {
    Ok(match (r, is_data) {
        (MultiResult::GetData(d), _) => ReadResult::Data(Ok((d.data.unwrap_or_default(), d.stat))),
        (MultiResult::GetChildren(c), _) => ReadResult::Children(Ok(c.children)),
        (MultiResult::Error(code), true) => ReadResult::Data(Err(code)),
        (MultiResult::Error(code), false) => ReadResult::Children(Err(code)),
        _ => return Err(wrong_result(OpCode::MultiRead, index)),
    })
}

#[cfg(test)]
mod tests {
    use zk_proto::Response;

    use super::*;

    #[test]
    fn a_failed_transaction_names_the_op_that_failed() {
        let results = [
            MultiResult::Error(ErrorCode::Ok),
            MultiResult::Error(ErrorCode::BadVersion),
            MultiResult::Error(ErrorCode::RuntimeInconsistency),
        ];
        match failure(&results) {
            Some(Error::Multi {
                index,
                code,
                results,
            }) => {
                assert_eq!((index, code, results.len()), (1, ErrorCode::BadVersion, 3))
            }
            other => panic!("{other:?}"),
        }
        let only_inconsistent = [MultiResult::Error(ErrorCode::RuntimeInconsistency)];
        assert!(matches!(
            failure(&only_inconsistent),
            Some(Error::Multi { index: 0, .. })
        ));
        assert!(failure(&[MultiResult::Delete, MultiResult::Check]).is_none());
    }

    #[test]
    fn nothing_to_send_is_no_call_and_a_short_reply_a_violation() {
        let c = Chroot::none();
        assert!(multi(&c, []).unwrap().is_none());
        assert!(multi_read(&c, []).unwrap().is_none());
        let call = multi_read(&c, [ReadOp::GetData("/a".into())])
            .unwrap()
            .unwrap();
        let reply = Ok(Response::Multi(MultiResponse { results: vec![] }));
        assert!(matches!(
            (call.decode)(reply),
            Err(Error::ProtocolViolation(
                ProtocolViolation::ResultCount { .. }
            ))
        ));
    }
}
