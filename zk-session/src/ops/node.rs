//! Creating, reading, writing, deleting and syncing one znode.

use bytes::Bytes;
use zk_proto::{
    Create2Response, CreateMode, CreateRequest, CreateResponse, CreateTtlRequest, DeleteRequest,
    ErrorCode, ExistsRequest, GetDataRequest, GetDataResponse, PathKind, Request, Response,
    SetDataRequest, Stat, SyncRequest,
};

use super::{done, narrow, Call, Decode, WatchChoice};
use crate::{
    chroot::Chroot, watched_event::WatchKind, ArgumentError, CreateOptions, Error, Version,
};

/// create: the path (with the sequence suffix for sequential modes) under the chroot.
pub(crate) fn create<'a>(
    chroot: &'a Chroot,
    path: &str,
    data: &[u8],
    options: &CreateOptions,
) -> Result<Call<impl Decode<String> + 'a>, Error> {
    let request = create_request(chroot, path, data, options, false)?;
    // createContainer answers with the Stat, which create leaves out.
    let decode = move |r: Result<Response, Error>| {
        let created = match r? {
            Response::Create2(r) => r.path,
            other => narrow::<CreateResponse>(other)?.path,
        };
        Ok(chroot.to_client(&created))
    };
    Ok(plain(request, decode))
}

/// create2: the path under the chroot and the new znode's Stat.
pub(crate) fn create_with_stat<'a>(
    chroot: &'a Chroot,
    path: &str,
    data: &[u8],
    options: &CreateOptions,
) -> Result<Call<impl Decode<(String, Stat)> + 'a>, Error> {
    let request = create_request(chroot, path, data, options, true)?;
    let decode = move |r: Result<Response, Error>| {
        let r: Create2Response = narrow(r?)?;
        Ok((chroot.to_client(&r.path), r.stat))
    };
    Ok(plain(request, decode))
}

/// The create request for `path`: TTL modes and containers have opcodes of their own;
/// otherwise `with_stat` chooses create2 (path and Stat) or create (path only).
fn create_request(
    chroot: &Chroot,
    path: &str,
    data: &[u8],
    options: &CreateOptions,
    with_stat: bool,
) -> Result<Request, Error> {
    let mode = options.mode();
    let kind = match mode.is_sequential() {
        true => PathKind::Sequential,
        false => PathKind::Plain,
    };
    let r = CreateRequest {
        path: chroot.server_path(path, kind)?,
        data: Some(Bytes::copy_from_slice(data)),
        acl: options.acl().to_vec(),
        mode,
    };
    match (mode.is_ttl(), options.ttl_duration()) {
        (false, None) => Ok(match r.mode {
            CreateMode::Container => Request::CreateContainer(r),
            _ if with_stat => Request::Create2(r),
            _ => Request::Create(r),
        }),
        (false, Some(_)) => Err(ArgumentError::TtlNotAllowed { mode }.into()),
        (true, None) => Err(ArgumentError::TtlMissing.into()),
        (true, Some(ttl)) if ttl.as_millis() == 0 || ttl.as_millis() > (1u128 << 40) => {
            Err(ArgumentError::TtlOutOfRange { ttl }.into())
        }
        (true, Some(ttl)) => Ok(Request::CreateTtl(CreateTtlRequest {
            path: r.path,
            data: r.data,
            acl: r.acl,
            mode,
            ttl: ttl.as_millis() as i64,
        })),
    }
}

/// delete, if the version matches.
pub(crate) fn delete(
    chroot: &Chroot,
    path: &str,
    version: Version,
) -> Result<Call<impl Decode<()>>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    let version = version.as_i32();
    Ok(plain(
        Request::Delete(DeleteRequest { path, version }),
        done,
    ))
}

/// exists: the Stat, or `None` (NoNode is an answer, not an error); `W` says whether it
/// leaves a data watch.
pub(crate) fn exists<W: WatchChoice>(
    chroot: &Chroot,
    path: &str,
) -> Result<Call<impl Decode<Option<Stat>>, W>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    let watch = W::on(&path, WatchKind::Data);
    let request = Request::Exists(ExistsRequest {
        path,
        watch: watch.flag(),
    });
    Ok(Call {
        request,
        watch,
        decode: stat_if_any,
    })
}

fn stat_if_any(r: Result<Response, Error>) -> Result<Option<Stat>, Error> {
    match r {
        Err(Error::Code(ErrorCode::NoNode)) => Ok(None),
        r => narrow(r?).map(Some),
    }
}

/// getData: the data (empty for null data) and Stat; `W` says whether it leaves a data watch.
pub(crate) fn get_data<W: WatchChoice>(
    chroot: &Chroot,
    path: &str,
) -> Result<Call<impl Decode<(Bytes, Stat)>, W>, Error> {
    Ok(get_data_at(chroot.server_path(path, PathKind::Plain)?))
}

/// getData of a server path (the config znode is outside any chroot).
pub(super) fn get_data_at<W: WatchChoice>(path: String) -> Call<impl Decode<(Bytes, Stat)>, W> {
    let watch = W::on(&path, WatchKind::Data);
    let request = Request::GetData(GetDataRequest {
        path,
        watch: watch.flag(),
    });
    Call {
        request,
        watch,
        decode: data_of,
    }
}

/// getData's reply, and reconfig's.
pub(super) fn data_of(r: Result<Response, Error>) -> Result<(Bytes, Stat), Error> {
    narrow::<GetDataResponse>(r?).map(|d| (d.data.unwrap_or_default(), d.stat))
}

/// setData, if the version matches: the new Stat.
pub(crate) fn set_data(
    chroot: &Chroot,
    path: &str,
    data: &[u8],
    version: Version,
) -> Result<Call<impl Decode<Stat>>, Error> {
    let request = Request::SetData(SetDataRequest {
        path: chroot.server_path(path, PathKind::Plain)?,
        data: Some(Bytes::copy_from_slice(data)),
        version: version.as_i32(),
    });
    Ok(plain(request, |r| narrow(r?)))
}

/// sync: the server catches up with the leader.
pub(crate) fn sync(chroot: &Chroot, path: &str) -> Result<Call<impl Decode<()>>, Error> {
    let path = chroot.server_path(path, PathKind::Plain)?;
    Ok(plain(Request::Sync(SyncRequest { path }), done))
}

/// A call that registers no watch.
pub(super) fn plain<T, D: Decode<T>>(request: Request, decode: D) -> Call<D> {
    Call {
        request,
        watch: (),
        decode,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ops::Oneshot;

    #[test]
    fn exists_takes_no_node_for_an_answer() {
        assert_eq!(
            stat_if_any(Err(Error::Code(ErrorCode::NoNode))).unwrap(),
            None
        );
        let stat = Stat {
            version: 3,
            ..Stat::default()
        };
        assert_eq!(stat_if_any(Ok(Response::Stat(stat))).unwrap(), Some(stat));
        assert!(matches!(
            stat_if_any(Err(Error::Code(ErrorCode::NoAuth))),
            Err(Error::Code(ErrorCode::NoAuth))
        ));
    }

    #[test]
    fn create_picks_the_opcode_and_checks_the_ttl() {
        let c = Chroot::new("/app").unwrap();
        let plain = create(&c, "/a", b"", &CreateOptions::persistent()).unwrap();
        assert!(matches!(&plain.request, Request::Create(r) if r.path == "/app/a"));
        let stat = create_with_stat(&c, "/a", b"", &CreateOptions::persistent()).unwrap();
        assert!(matches!(stat.request, Request::Create2(_)));
        let container = create(&c, "/a", b"", &CreateOptions::container()).unwrap();
        assert!(matches!(container.request, Request::CreateContainer(_)));
        let ttl = CreateOptions::ttl(Duration::from_secs(1));
        let ttl = create(&c, "/a", b"", &ttl).unwrap();
        assert!(matches!(ttl.request, Request::CreateTtl(r) if r.ttl == 1000));
        let zero = CreateOptions::ttl(Duration::ZERO);
        assert!(matches!(
            create(&c, "/a", b"", &zero),
            Err(Error::InvalidArgument(ArgumentError::TtlOutOfRange { .. }))
        ));
        let created = (create(&c, "/a", b"", &CreateOptions::persistent())
            .unwrap()
            .decode)(Ok(Response::Create(CreateResponse {
            path: "/app/a".into(),
        })));
        assert_eq!(created.unwrap(), "/a");
    }

    #[test]
    fn a_watched_read_sets_the_flag_and_names_the_server_path() {
        let c = Chroot::new("/app").unwrap();
        let call = get_data::<Oneshot>(&c, "/a").unwrap();
        assert!(matches!(&call.request, Request::GetData(r) if r.watch));
        assert_eq!(call.watch, Oneshot::on("/app/a", WatchKind::Data));
        let call = exists::<()>(&c, "/a").unwrap();
        assert!(matches!(&call.request, Request::Exists(r) if !r.watch));
    }
}
