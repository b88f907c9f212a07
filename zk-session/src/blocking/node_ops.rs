//! Operations on one znode: create, read, write, delete, exists, sync, children, ACLs.

use bytes::Bytes;
use zk_proto::{Acl, Stat};

use super::{client::Client, watch::OneshotWatch};
use crate::{ops, CreateOptions, Error, Version};

impl Client {
    /// Creates a znode; returns its path (with the sequence number for sequential modes),
    /// relative to the chroot. As [`crate::Client::create`].
    pub fn create(&self, path: &str, data: &[u8], options: CreateOptions) -> Result<String, Error> {
        self.run(ops::create(&self.handle.chroot, path, data, &options)?)
    }

    /// Creates a znode and returns its path and Stat. As [`crate::Client::create_with_stat`].
    pub fn create_with_stat(
        &self,
        path: &str,
        data: &[u8],
        options: CreateOptions,
    ) -> Result<(String, Stat), Error> {
        let call = ops::create_with_stat(&self.handle.chroot, path, data, &options)?;
        self.run(call)
    }

    /// Deletes a znode (at `version`, or any).
    pub fn delete(&self, path: &str, version: Version) -> Result<(), Error> {
        self.run(ops::delete(&self.handle.chroot, path, version)?)
    }

    /// The znode's Stat, or `None` when it does not exist.
    pub fn exists(&self, path: &str) -> Result<Option<Stat>, Error> {
        self.run(ops::exists(&self.handle.chroot, path)?)
    }

    /// Like [`exists`](Self::exists), with a watch: it fires when the znode is created,
    /// deleted or changed.
    pub fn exists_watch(&self, path: &str) -> Result<(Option<Stat>, OneshotWatch), Error> {
        self.run_watched(ops::exists(&self.handle.chroot, path)?)
    }

    /// The znode's data and Stat.
    pub fn get_data(&self, path: &str) -> Result<(Bytes, Stat), Error> {
        self.run(ops::get_data(&self.handle.chroot, path)?)
    }

    /// Like [`get_data`](Self::get_data), with a watch on the znode's data.
    pub fn get_data_watch(&self, path: &str) -> Result<(Bytes, Stat, OneshotWatch), Error> {
        let ((data, stat), watch) = self.run_watched(ops::get_data(&self.handle.chroot, path)?)?;
        Ok((data, stat, watch))
    }

    /// Sets the znode's data (at `version`, or any); returns its new Stat.
    pub fn set_data(&self, path: &str, data: &[u8], version: Version) -> Result<Stat, Error> {
        self.run(ops::set_data(&self.handle.chroot, path, data, version)?)
    }

    /// Waits until the server this client is connected to has caught up with the leader
    /// for `path`.
    pub fn sync(&self, path: &str) -> Result<(), Error> {
        self.run(ops::sync(&self.handle.chroot, path)?)
    }

    /// The names of the znode's children.
    pub fn get_children(&self, path: &str) -> Result<Vec<String>, Error> {
        self.run(ops::get_children(&self.handle.chroot, path)?)
    }

    /// The names of the znode's children and its Stat.
    pub fn get_children_with_stat(&self, path: &str) -> Result<(Vec<String>, Stat), Error> {
        self.run(ops::get_children_with_stat(&self.handle.chroot, path)?)
    }

    /// Like [`get_children_with_stat`](Self::get_children_with_stat), with a watch on the
    /// children (and the znode's deletion).
    pub fn get_children_watch(
        &self,
        path: &str,
    ) -> Result<(Vec<String>, Stat, OneshotWatch), Error> {
        let call = ops::get_children_with_stat(&self.handle.chroot, path)?;
        let ((children, stat), watch) = self.run_watched(call)?;
        Ok((children, stat, watch))
    }

    /// The znode's ACL and Stat.
    pub fn get_acl(&self, path: &str) -> Result<(Vec<Acl>, Stat), Error> {
        self.run(ops::get_acl(&self.handle.chroot, path)?)
    }

    /// Sets the znode's ACL (at ACL `version`, or any); returns its new Stat.
    pub fn set_acl(&self, path: &str, acl: &[Acl], version: Version) -> Result<Stat, Error> {
        self.run(ops::set_acl(&self.handle.chroot, path, acl, version)?)
    }
}
