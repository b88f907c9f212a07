//! Operations on one znode: create, read, write, delete, exists, sync, children, ACLs.

use bytes::Bytes;
use zk_proto::{
    Acl, CreateMode, CreateRequest, CreateTtlRequest, DeleteRequest, ErrorCode, ExistsRequest,
    GetAclRequest, GetAclResponse, GetChildren2Response, GetChildrenRequest, GetChildrenResponse,
    GetDataRequest, PathKind, Request, Response, SetAclRequest, SetDataRequest, Stat, SyncRequest,
};

use super::{
    client::{data_of, narrow, Client},
    watch::OneshotWatch,
};
use crate::{watch::WatchKind, ArgumentError, CreateOptions, Error, Version};

/// Which create opcode a mode takes: a container has its own; otherwise `with_stat`
/// chooses between create2 (path and Stat) and create (path only).
fn create_op(r: CreateRequest, with_stat: bool) -> Request {
    match r.mode {
        CreateMode::Container => Request::CreateContainer(r),
        _ if with_stat => Request::Create2(r),
        _ => Request::Create(r),
    }
}

impl Client {
    /// The create request for `path` (TTL modes get their own opcode).
    fn create_request(
        &self,
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
            path: self.server_path(path, kind)?,
            data: Some(Bytes::copy_from_slice(data)),
            acl: options.acl().to_vec(),
            mode,
        };
        match (mode.is_ttl(), options.ttl_duration()) {
            (false, None) => Ok(create_op(r, with_stat)),
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

    /// Creates a znode; returns its path (with the sequence number for sequential modes),
    /// relative to the chroot. As [`crate::Client::create`].
    pub fn create(&self, path: &str, data: &[u8], options: CreateOptions) -> Result<String, Error> {
        let req = self.create_request(path, data, &options, false)?;
        let created = match self.call(req, None)? {
            Response::Create2(r) => r.path,
            other => narrow::<zk_proto::CreateResponse>(other)?.path,
        };
        Ok(self.client_path(&created))
    }

    /// Creates a znode and returns its path and Stat. As [`crate::Client::create_with_stat`].
    pub fn create_with_stat(
        &self,
        path: &str,
        data: &[u8],
        options: CreateOptions,
    ) -> Result<(String, Stat), Error> {
        let req = self.create_request(path, data, &options, true)?;
        let r: zk_proto::Create2Response = narrow(self.call(req, None)?)?;
        Ok((self.client_path(&r.path), r.stat))
    }

    /// Deletes a znode (at `version`, or any).
    pub fn delete(&self, path: &str, version: Version) -> Result<(), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let version = version.as_i32();
        let req = Request::Delete(DeleteRequest { path, version });
        self.call(req, None).map(drop)
    }

    /// The znode's Stat, or `None` when it does not exist.
    pub fn exists(&self, path: &str) -> Result<Option<Stat>, Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        stat_if_any(self.call(Request::Exists(ExistsRequest { path, watch: false }), None))
    }

    /// Like [`exists`](Self::exists), with a watch: it fires when the znode is created,
    /// deleted or changed.
    pub fn exists_watch(&self, path: &str) -> Result<(Option<Stat>, OneshotWatch), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let (reg, watch) = self.oneshot_watch(&path, WatchKind::Data);
        let req = Request::Exists(ExistsRequest { path, watch: true });
        Ok((stat_if_any(self.call(req, Some(reg)))?, watch))
    }

    /// The znode's data and Stat.
    pub fn get_data(&self, path: &str) -> Result<(Bytes, Stat), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        data_of(self.call(
            Request::GetData(GetDataRequest { path, watch: false }),
            None,
        )?)
    }

    /// Like [`get_data`](Self::get_data), with a watch on the znode's data.
    pub fn get_data_watch(&self, path: &str) -> Result<(Bytes, Stat, OneshotWatch), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let (reg, watch) = self.oneshot_watch(&path, WatchKind::Data);
        let req = Request::GetData(GetDataRequest { path, watch: true });
        let (data, stat) = data_of(self.call(req, Some(reg))?)?;
        Ok((data, stat, watch))
    }

    /// Sets the znode's data (at `version`, or any); returns its new Stat.
    pub fn set_data(&self, path: &str, data: &[u8], version: Version) -> Result<Stat, Error> {
        let req = Request::SetData(SetDataRequest {
            path: self.server_path(path, PathKind::Plain)?,
            data: Some(Bytes::copy_from_slice(data)),
            version: version.as_i32(),
        });
        narrow(self.call(req, None)?)
    }

    /// Waits until the server this client is connected to has caught up with the leader
    /// for `path`.
    pub fn sync(&self, path: &str) -> Result<(), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        self.call(Request::Sync(SyncRequest { path }), None)
            .map(drop)
    }

    /// The names of the znode's children.
    pub fn get_children(&self, path: &str) -> Result<Vec<String>, Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::GetChildren(GetChildrenRequest { path, watch: false });
        let r: GetChildrenResponse = narrow(self.call(req, None)?)?;
        Ok(r.children)
    }

    /// The names of the znode's children and its Stat.
    pub fn get_children_with_stat(&self, path: &str) -> Result<(Vec<String>, Stat), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let req = Request::GetChildren2(GetChildrenRequest { path, watch: false });
        let r: GetChildren2Response = narrow(self.call(req, None)?)?;
        Ok((r.children, r.stat))
    }

    /// Like [`get_children_with_stat`](Self::get_children_with_stat), with a watch on the
    /// children (and the znode's deletion).
    pub fn get_children_watch(
        &self,
        path: &str,
    ) -> Result<(Vec<String>, Stat, OneshotWatch), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let (reg, watch) = self.oneshot_watch(&path, WatchKind::Child);
        let req = Request::GetChildren2(GetChildrenRequest { path, watch: true });
        let r: GetChildren2Response = narrow(self.call(req, Some(reg))?)?;
        Ok((r.children, r.stat, watch))
    }

    /// The znode's ACL and Stat.
    pub fn get_acl(&self, path: &str) -> Result<(Vec<Acl>, Stat), Error> {
        let path = self.server_path(path, PathKind::Plain)?;
        let r: GetAclResponse = narrow(self.call(Request::GetAcl(GetAclRequest { path }), None)?)?;
        Ok((r.acl, r.stat))
    }

    /// Sets the znode's ACL (at ACL `version`, or any); returns its new Stat.
    pub fn set_acl(&self, path: &str, acl: &[Acl], version: Version) -> Result<Stat, Error> {
        let req = Request::SetAcl(SetAclRequest {
            path: self.server_path(path, PathKind::Plain)?,
            acl: acl.to_vec(),
            version: version.as_i32(),
        });
        narrow(self.call(req, None)?)
    }
}

/// exists: NoNode is an answer, not an error.
fn stat_if_any(r: Result<Response, Error>) -> Result<Option<Stat>, Error> {
    match r {
        Err(Error::Code(ErrorCode::NoNode)) => Ok(None),
        r => narrow(r?).map(Some),
    }
}
