//! [`ProtocolViolation`]: a reply that does not fit the request it answers.

use zk_proto::OpCode;

/// How the server's reply failed to fit the request it answers: the payload of
/// [`Error::ProtocolViolation`](crate::Error::ProtocolViolation). The connection is dropped
/// and the session goes on over another one.
///
/// ```
/// use zk_session::{Error, ProtocolViolation};
///
/// let e = Error::ProtocolViolation(ProtocolViolation::ReplyOutOfOrder { expected: 7, got: 9 });
/// assert!(e.is_retryable());
/// assert_eq!(
///     e.to_string(),
///     "protocol violation: reply xid 9 while xid 7 was the oldest pending request"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolViolation {
    /// Replies come in the order of the requests: this one's xid is not the oldest pending
    /// request's.
    #[error("reply xid {got} while xid {expected} was the oldest pending request")]
    ReplyOutOfOrder {
        /// The xid of the oldest pending request.
        expected: i32,
        /// The xid of the reply.
        got: i32,
    },
    /// The reply's body is not the kind the request calls for (jute record names, e.g.
    /// `GetDataResponse`).
    #[error("expected a {expected}, got a {got}")]
    WrongReply {
        /// The kind of body the request calls for.
        expected: &'static str,
        /// The kind of body that came.
        got: &'static str,
    },
    /// A multi's result at `index` is not one its op can have.
    #[error("result {index} of a {request:?} does not fit its op")]
    WrongMultiResult {
        /// `Multi` or `MultiRead`.
        request: OpCode,
        /// The position of the result.
        index: usize,
    },
    /// A multi's reply holds another number of results than the request had ops.
    #[error("{got} results for {expected} ops")]
    ResultCount {
        /// How many ops the request had.
        expected: usize,
        /// How many results came.
        got: usize,
    },
}
