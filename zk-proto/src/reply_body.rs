//! [`ReplyBody`]: the one place that says which [`Response`] variant holds which reply record,
//! so that a client narrows a decoded reply to the record its request expects without a
//! hand-written match (and its "unexpected reply" arm) per operation.
//!
//! A reply is decoded by the opcode of the request it answers ([`Response::decode`]), so a
//! well-behaved client never meets a reply of the wrong kind; narrowing can still fail when
//! the client pairs an opcode with the wrong record, and then says which record it expected.

use crate::{
    multi::MultiResponse,
    response::{
        Create2Response, CreateResponse, ErrorResponse, GetAclResponse,
        GetAllChildrenNumberResponse, GetChildren2Response, GetChildrenResponse, GetDataResponse,
        GetEphemeralsResponse, GetSaslResponse, Response, SyncResponse, WhoAmIResponse,
    },
    Stat,
};

/// A reply record that one variant of [`Response`] holds.
///
/// ```
/// use zk_proto::{GetDataResponse, ReplyBody, Response, Stat};
///
/// let reply = Response::Stat(Stat::default());
/// assert_eq!(Stat::from_response(reply), Ok(Stat::default()));
/// // The wrong record gives the reply back, for an error that names both.
/// let wrong = GetDataResponse::from_response(Response::Empty);
/// assert_eq!(wrong, Err(Response::Empty));
/// assert_eq!(GetDataResponse::RECORD, "GetDataResponse");
/// ```
pub trait ReplyBody: Sized {
    /// The record's name, as [`Response::record_name`] gives it.
    const RECORD: &'static str;

    /// The record, or the reply back when it holds another.
    fn from_response(response: Response) -> Result<Self, Response>;
}

/// `impl ReplyBody for $record` reading `Response::$variant`.
macro_rules! reply_body {
    ($($variant:ident => $record:ty, $name:literal;)*) => {$(
        impl ReplyBody for $record {
            const RECORD: &'static str = $name;

            fn from_response(response: Response) -> Result<Self, Response> {
                match response {
                    Response::$variant(body) => Ok(body),
                    other => Err(other),
                }
            }
        }
    )*};
}

reply_body! {
    Create => CreateResponse, "CreateResponse";
    Create2 => Create2Response, "Create2Response";
    Stat => Stat, "Stat";
    GetData => GetDataResponse, "GetDataResponse";
    GetAcl => GetAclResponse, "GetAclResponse";
    GetChildren => GetChildrenResponse, "GetChildrenResponse";
    GetChildren2 => GetChildren2Response, "GetChildren2Response";
    Sync => SyncResponse, "SyncResponse";
    Multi => MultiResponse, "MultiResponse";
    Sasl => GetSaslResponse, "GetSaslResponse";
    GetEphemerals => GetEphemeralsResponse, "GetEphemeralsResponse";
    GetAllChildrenNumber => GetAllChildrenNumberResponse, "GetAllChildrenNumberResponse";
    WhoAmI => WhoAmIResponse, "WhoAmIResponse";
    Error => ErrorResponse, "ErrorResponse";
}

/// An empty body (delete, setWatches, auth, …).
impl ReplyBody for () {
    const RECORD: &'static str = "Empty";

    fn from_response(response: Response) -> Result<Self, Response> {
        match response {
            Response::Empty => Ok(()),
            other => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each record's name is the one the reply itself gives, and it narrows its own variant.
    fn narrows<R: ReplyBody + PartialEq + std::fmt::Debug + Clone>(
        body: R,
        wrap: fn(R) -> Response,
    ) {
        let reply = wrap(body.clone());
        assert_eq!(reply.record_name(), R::RECORD);
        assert_eq!(R::from_response(reply), Ok(body));
        let other = if R::RECORD == "Empty" {
            Response::Stat(Stat::default())
        } else {
            Response::Empty
        };
        assert_eq!(R::from_response(other.clone()), Err(other));
    }

    #[test]
    fn every_record_narrows_its_own_variant_only() {
        narrows(CreateResponse::default(), Response::Create);
        narrows(Create2Response::default(), Response::Create2);
        narrows(Stat::default(), Response::Stat);
        narrows(GetDataResponse::default(), Response::GetData);
        narrows(GetAclResponse::default(), Response::GetAcl);
        narrows(GetChildrenResponse::default(), Response::GetChildren);
        narrows(GetChildren2Response::default(), Response::GetChildren2);
        narrows(SyncResponse::default(), Response::Sync);
        narrows(MultiResponse::default(), Response::Multi);
        narrows(GetSaslResponse::default(), Response::Sasl);
        narrows(GetEphemeralsResponse::default(), Response::GetEphemerals);
        narrows(
            GetAllChildrenNumberResponse::default(),
            Response::GetAllChildrenNumber,
        );
        narrows(WhoAmIResponse::default(), Response::WhoAmI);
        narrows(ErrorResponse::default(), Response::Error);
        narrows((), |()| Response::Empty);
    }
}
