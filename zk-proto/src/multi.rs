//! Multi requests and responses: a list of operations or results, each behind a
//! [`MultiHeader`], ended by [`MultiHeader::END`].

use bytes::BytesMut;

use crate::{
    header::MultiHeader,
    jute::{Reader, Record},
    request::{
        CheckVersionRequest, CreateRequest, CreateTtlRequest, DeleteRequest, GetChildrenRequest,
        GetDataRequest, SetDataRequest,
    },
    response::{
        Create2Response, CreateResponse, ErrorResponse, GetChildrenResponse, GetDataResponse,
    },
    DecodeError, ErrorCode, OpCode, Stat,
};

/// One operation of a multi request.
///
/// Writes (everything but `GetChildren` and `GetData`) go in a multi transaction, reads in a
/// multiRead; the server refuses a mix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiOp {
    /// create (1).
    Create(CreateRequest),
    /// create2 (15).
    Create2(CreateRequest),
    /// createContainer (19).
    CreateContainer(CreateRequest),
    /// createTTL (21).
    CreateTtl(CreateTtlRequest),
    /// delete (2).
    Delete(DeleteRequest),
    /// setData (5).
    SetData(SetDataRequest),
    /// check (13).
    Check(CheckVersionRequest),
    /// getChildren (8), read-only.
    GetChildren(GetChildrenRequest),
    /// getData (4), read-only.
    GetData(GetDataRequest),
}

impl MultiOp {
    /// The opcode written in the operation's header.
    pub fn op_code(&self) -> OpCode {
        match self {
            MultiOp::Create(_) => OpCode::Create,
            MultiOp::Create2(_) => OpCode::Create2,
            MultiOp::CreateContainer(_) => OpCode::CreateContainer,
            MultiOp::CreateTtl(_) => OpCode::CreateTtl,
            MultiOp::Delete(_) => OpCode::Delete,
            MultiOp::SetData(_) => OpCode::SetData,
            MultiOp::Check(_) => OpCode::Check,
            MultiOp::GetChildren(_) => OpCode::GetChildren,
            MultiOp::GetData(_) => OpCode::GetData,
        }
    }

    /// True for the operations that belong in a multiRead.
    pub fn is_read(&self) -> bool {
        matches!(self, MultiOp::GetChildren(_) | MultiOp::GetData(_))
    }

    /// The path the operation works on.
    pub fn path(&self) -> &str {
        match self {
            MultiOp::Create(r) | MultiOp::Create2(r) | MultiOp::CreateContainer(r) => &r.path,
            MultiOp::CreateTtl(r) => &r.path,
            MultiOp::Delete(r) => &r.path,
            MultiOp::SetData(r) => &r.path,
            MultiOp::Check(r) => &r.path,
            MultiOp::GetChildren(r) => &r.path,
            MultiOp::GetData(r) => &r.path,
        }
    }

    fn encode_body(&self, buf: &mut BytesMut) {
        match self {
            MultiOp::Create(r) | MultiOp::Create2(r) | MultiOp::CreateContainer(r) => r.encode(buf),
            MultiOp::CreateTtl(r) => r.encode(buf),
            MultiOp::Delete(r) => r.encode(buf),
            MultiOp::SetData(r) => r.encode(buf),
            MultiOp::Check(r) => r.encode(buf),
            MultiOp::GetChildren(r) => r.encode(buf),
            MultiOp::GetData(r) => r.encode(buf),
        }
    }
}

/// The body of a multi (14) or multiRead (22) request.
///
/// ```
/// use bytes::BytesMut;
/// use zk_proto::{jute::Record, CheckVersionRequest, DeleteRequest, MultiOp, MultiRequest};
///
/// let multi = MultiRequest {
///     ops: vec![
///         MultiOp::Check(CheckVersionRequest { path: "/a".into(), version: 3 }),
///         MultiOp::Delete(DeleteRequest { path: "/a/b".into(), version: -1 }),
///     ],
/// };
/// let mut buf = BytesMut::new();
/// multi.encode(&mut buf);
/// // Ends with the marker {type -1, done true, err -1}.
/// assert_eq!(&buf[buf.len() - 9..], &[0xff, 0xff, 0xff, 0xff, 1, 0xff, 0xff, 0xff, 0xff]);
/// assert_eq!(MultiRequest::decode_exact(buf.freeze(), "MultiRequest").unwrap(), multi);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MultiRequest {
    /// The operations, in order.
    pub ops: Vec<MultiOp>,
}

impl MultiRequest {
    /// True when every operation is a read (an empty multi counts as a write transaction).
    pub fn is_read_only(&self) -> bool {
        !self.ops.is_empty() && self.ops.iter().all(MultiOp::is_read)
    }
}

impl Record for MultiRequest {
    fn encode(&self, buf: &mut BytesMut) {
        for op in &self.ops {
            MultiHeader {
                op: op.op_code().code(),
                done: false,
                err: -1,
            }
            .encode(buf);
            op.encode_body(buf);
        }
        MultiHeader::END.encode(buf);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        let mut ops: Vec<MultiOp> = Vec::new();
        // Every iteration consumes at least a header, so the loop is bounded by the frame.
        while let Some((offset, h)) = next_header(r, "MultiRequest")? {
            let op = match OpCode::from_code(h.op) {
                Some(OpCode::Create) => MultiOp::Create(CreateRequest::decode(r)?),
                Some(OpCode::Create2) => MultiOp::Create2(CreateRequest::decode(r)?),
                Some(OpCode::CreateContainer) => {
                    MultiOp::CreateContainer(CreateRequest::decode(r)?)
                }
                Some(OpCode::CreateTtl) => MultiOp::CreateTtl(CreateTtlRequest::decode(r)?),
                Some(OpCode::Delete) => MultiOp::Delete(DeleteRequest::decode(r)?),
                Some(OpCode::SetData) => MultiOp::SetData(SetDataRequest::decode(r)?),
                Some(OpCode::Check) => MultiOp::Check(CheckVersionRequest::decode(r)?),
                Some(OpCode::GetChildren) => MultiOp::GetChildren(GetChildrenRequest::decode(r)?),
                Some(OpCode::GetData) => MultiOp::GetData(GetDataRequest::decode(r)?),
                _ => return Err(invalid_type(offset, h.op)),
            };
            // Like the Java server, refuse to mix reads and writes in one request.
            if ops
                .first()
                .is_some_and(|first| first.is_read() != op.is_read())
            {
                return Err(DecodeError::MalformedMulti {
                    field: "MultiRequest",
                    offset,
                    reason: "mixes read and write operations",
                });
            }
            ops.push(op);
        }
        Ok(MultiRequest { ops })
    }
}

/// The result of one operation in a multi response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiResult {
    /// create succeeded.
    Create(CreateResponse),
    /// create2, createContainer or createTTL succeeded.
    Create2(Create2Response),
    /// delete succeeded.
    Delete,
    /// setData succeeded.
    SetData(Stat),
    /// check succeeded.
    Check,
    /// getData succeeded.
    GetData(GetDataResponse),
    /// getChildren succeeded.
    GetChildren(GetChildrenResponse),
    /// The operation failed or, in a failed transaction, was not applied: `Ok` for operations
    /// before the failing one, `RuntimeInconsistency` for those after it.
    Error(ErrorCode),
}

/// The body of the reply to a multi or multiRead request: one result per operation.
///
/// A failed transaction still has reply header err 0; every result is then an
/// [`MultiResult::Error`].
///
/// ```
/// use bytes::BytesMut;
/// use zk_proto::{jute::Record, ErrorCode, MultiResponse, MultiResult};
///
/// let failed = MultiResponse {
///     results: vec![
///         MultiResult::Error(ErrorCode::Ok),
///         MultiResult::Error(ErrorCode::NoNode),
///         MultiResult::Error(ErrorCode::RuntimeInconsistency),
///     ],
/// };
/// let mut buf = BytesMut::new();
/// failed.encode(&mut buf);
/// assert_eq!(MultiResponse::decode_exact(buf.freeze(), "MultiResponse").unwrap(), failed);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MultiResponse {
    /// The results, in the order of the operations.
    pub results: Vec<MultiResult>,
}

impl MultiResponse {
    /// The index and code of the first result that is an error other than `Ok`
    /// (the operation that made a transaction fail).
    pub fn first_error(&self) -> Option<(usize, ErrorCode)> {
        self.results.iter().enumerate().find_map(|(i, r)| match r {
            MultiResult::Error(c) if *c != ErrorCode::Ok => Some((i, *c)),
            _ => None,
        })
    }
}

impl Record for MultiResponse {
    fn encode(&self, buf: &mut BytesMut) {
        for res in &self.results {
            let (op, err) = match res {
                MultiResult::Create(_) => (OpCode::Create, 0),
                MultiResult::Create2(_) => (OpCode::Create2, 0),
                MultiResult::Delete => (OpCode::Delete, 0),
                MultiResult::SetData(_) => (OpCode::SetData, 0),
                MultiResult::Check => (OpCode::Check, 0),
                MultiResult::GetData(_) => (OpCode::GetData, 0),
                MultiResult::GetChildren(_) => (OpCode::GetChildren, 0),
                MultiResult::Error(c) => (OpCode::Error, c.code()),
            };
            MultiHeader {
                op: op.code(),
                done: false,
                err,
            }
            .encode(buf);
            match res {
                MultiResult::Create(v) => v.encode(buf),
                MultiResult::Create2(v) => v.encode(buf),
                MultiResult::SetData(v) => v.encode(buf),
                MultiResult::GetData(v) => v.encode(buf),
                MultiResult::GetChildren(v) => v.encode(buf),
                MultiResult::Error(c) => ErrorResponse { err: c.code() }.encode(buf),
                MultiResult::Delete | MultiResult::Check => {}
            }
        }
        MultiHeader::END.encode(buf);
    }

    fn decode(r: &mut Reader) -> Result<Self, DecodeError> {
        let mut results = Vec::new();
        while let Some((offset, h)) = next_header(r, "MultiResponse")? {
            let res = match OpCode::from_code(h.op) {
                Some(OpCode::Create) => MultiResult::Create(CreateResponse::decode(r)?),
                // Servers answer createContainer and createTTL with a create2 result; other
                // result types are refused, as by the Java client's MultiResponse.
                Some(OpCode::Create2) => MultiResult::Create2(Create2Response::decode(r)?),
                Some(OpCode::Delete) => MultiResult::Delete,
                Some(OpCode::Check) => MultiResult::Check,
                Some(OpCode::SetData) => MultiResult::SetData(Stat::decode(r)?),
                Some(OpCode::GetData) => MultiResult::GetData(GetDataResponse::decode(r)?),
                Some(OpCode::GetChildren) => {
                    MultiResult::GetChildren(GetChildrenResponse::decode(r)?)
                }
                // The body's code is authoritative, as in the Java client.
                Some(OpCode::Error) => {
                    MultiResult::Error(ErrorCode::from_code(ErrorResponse::decode(r)?.err))
                }
                _ => return Err(invalid_type(offset, h.op)),
            };
            results.push(res);
        }
        Ok(MultiResponse { results })
    }
}

/// Reads the next header: `Some((offset, header))` for an operation, `None` at the end
/// marker, an error when the marker is missing or malformed.
fn next_header(
    r: &mut Reader,
    field: &'static str,
) -> Result<Option<(usize, MultiHeader)>, DecodeError> {
    let offset = r.position();
    if r.remaining() == 0 {
        return Err(DecodeError::MalformedMulti {
            field,
            offset,
            reason: "missing end marker",
        });
    }
    let h = MultiHeader::decode(r)?;
    if !h.done {
        return Ok(Some((offset, h)));
    }
    if h != MultiHeader::END {
        return Err(DecodeError::MalformedMulti {
            field,
            offset,
            reason: "end marker is not {-1, true, -1}",
        });
    }
    Ok(None)
}

fn invalid_type(offset: usize, op: i32) -> DecodeError {
    DecodeError::InvalidValue {
        field: "MultiHeader.type",
        offset,
        value: op.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, Bytes};

    fn header(op: i32, done: bool, err: i32) -> BytesMut {
        let mut b = BytesMut::new();
        MultiHeader { op, done, err }.encode(&mut b);
        b
    }

    #[test]
    fn empty_multi_is_just_the_end_marker() {
        let mut b = BytesMut::new();
        MultiRequest::default().encode(&mut b);
        assert_eq!(b, header(-1, true, -1));
        assert_eq!(
            MultiResponse::decode_exact(b.freeze(), "MultiResponse"),
            Ok(MultiResponse::default())
        );
    }

    /// A server answers createContainer and createTTL inside a multi with a create2 result;
    /// a result typed createContainer (19) or createTTL (21) is refused, as by the Java client.
    #[test]
    fn create_results_only_of_the_types_servers_send() {
        for op in [15, 19, 21] {
            let mut b = header(op, false, 0);
            Create2Response {
                path: "/c".into(),
                stat: Stat::default(),
            }
            .encode(&mut b);
            b.extend_from_slice(&header(-1, true, -1));
            let m = MultiResponse::decode_exact(b.freeze(), "MultiResponse");
            if op == 15 {
                let m = m.unwrap();
                assert!(matches!(&m.results[..], [MultiResult::Create2(c)] if c.path == "/c"));
            } else {
                assert!(
                    matches!(m, Err(DecodeError::InvalidValue { value, .. }) if value == op as i64),
                    "{op}: {m:?}"
                );
            }
        }
    }

    #[test]
    fn missing_end_marker_is_an_error() {
        let mut b = header(2, false, 0);
        assert!(matches!(
            MultiResponse::decode_exact(b.clone().freeze(), "MultiResponse"),
            Err(DecodeError::MalformedMulti {
                offset: 9,
                reason: "missing end marker",
                ..
            })
        ));
        b.put_slice(&[0xff, 0xff]);
        assert!(matches!(
            MultiResponse::decode_exact(b.freeze(), "MultiResponse"),
            Err(DecodeError::Truncated { .. })
        ));
    }

    #[test]
    fn bad_end_marker_and_unknown_types_are_rejected() {
        assert!(matches!(
            MultiResponse::decode_exact(header(-1, true, 0).freeze(), "MultiResponse"),
            Err(DecodeError::MalformedMulti { offset: 0, .. })
        ));
        // A nested multi is not a valid operation.
        assert_eq!(
            MultiRequest::decode_exact(header(14, false, -1).freeze(), "MultiRequest"),
            Err(DecodeError::InvalidValue {
                field: "MultiHeader.type",
                offset: 0,
                value: 14
            })
        );
    }

    #[test]
    fn error_results_use_the_body_code() {
        let mut b = header(-1, false, -101);
        b.put_i32(-110);
        b.extend_from_slice(&header(-1, true, -1));
        let m = MultiResponse::decode_exact(b.freeze(), "MultiResponse").unwrap();
        assert_eq!(m.results, vec![MultiResult::Error(ErrorCode::NodeExists)]);
        assert_eq!(m.first_error(), Some((0, ErrorCode::NodeExists)));
    }

    #[test]
    fn mixed_reads_and_writes_are_rejected() {
        let m = MultiRequest {
            ops: vec![
                MultiOp::Delete(DeleteRequest {
                    path: "/a".into(),
                    version: 0,
                }),
                MultiOp::GetData(GetDataRequest {
                    path: "/a".into(),
                    watch: false,
                }),
            ],
        };
        assert!(!m.is_read_only());
        assert!(!MultiRequest::default().is_read_only());
        assert!(MultiRequest {
            ops: m.ops[1..].to_vec()
        }
        .is_read_only());
        let mut b = BytesMut::new();
        m.encode(&mut b);
        assert!(matches!(
            MultiRequest::decode_exact(b.freeze(), "MultiRequest"),
            Err(DecodeError::MalformedMulti {
                offset: 19,
                reason: "mixes read and write operations",
                ..
            })
        ));
    }

    #[test]
    fn huge_op_sequences_fail_without_panicking() {
        // Thousands of delete headers and no end marker.
        let mut b = BytesMut::new();
        for _ in 0..5000 {
            b.extend_from_slice(&header(13, false, -1));
            b.put_i32(0);
            b.put_i32(0);
        }
        let e = MultiRequest::decode_exact(Bytes::from(b), "MultiRequest");
        assert!(matches!(e, Err(DecodeError::MalformedMulti { .. })));
    }
}
