//! Operations on a path or a subtree rather than one znode: create with missing parents
//! (Curator's `creatingParentsIfNeeded`, kazoo's `ensure_path`) and delete a subtree (zkCli's
//! `deleteall`). Both are built from single-znode requests, so other clients may change the
//! tree in between; each says what it does then.

use zk_proto::{CreateMode, ErrorCode};

use crate::{Client, CreateOptions, Error, Version};

/// How many times a step is tried again when a concurrent change undid it: a parent deleted
/// before the child could be created, or children created before their parent could be
/// deleted. Past that the operation gives up with the server's code (`NoNode`, `NotEmpty`).
const MAX_ATTEMPTS: u32 = 10;

impl Client {
    /// Creates `path` like [`create`](Client::create), first creating any missing parent.
    ///
    /// Parents are created as empty persistent znodes with the ACL of `options` (as kazoo's
    /// `makepath` does: an ACL without the CREATE permission then makes the next level fail
    /// with `NoAuth`), one request each from the top down, only once the create has failed with `NoNode` (an existing
    /// parent costs nothing). A parent that another client creates at the same moment is
    /// fine: `NodeExists` on a parent is not an error. If a parent is deleted again before the
    /// znode is created, the parents are created again, up to a bound, after which the
    /// `NoNode` is returned. `NodeExists` for `path` itself is an error as with `create`, and
    /// so is any other code, such as `NoAuth` on a parent or `NoChildrenForEphemerals`.
    /// Returns the path created (with the sequence suffix for sequential modes).
    ///
    /// Cancel safety: dropping the future leaves at most the parents (top down) and, for
    /// a create already sent, the znode itself, as a dropped [`create`](Client::create) may;
    /// calling it again completes the job.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::CreateOptions;
    ///
    /// // /app and /app/workers are created too if they are not there yet.
    /// let node = client
    ///     .create_with_parents("/app/workers/w-", b"host-1", CreateOptions::ephemeral_sequential())
    ///     .await?;
    /// assert!(node.starts_with("/app/workers/w-"));
    /// # Ok(()) }
    /// ```
    pub async fn create_with_parents(
        &self,
        path: &str,
        data: &[u8],
        options: CreateOptions,
    ) -> Result<String, Error> {
        let parent = CreateOptions::new(CreateMode::Persistent).with_acl(options.acl().to_vec());
        let mut attempt = 0;
        loop {
            match self.create(path, data, options.clone()).await {
                Err(Error::Code(ErrorCode::NoNode)) if attempt < MAX_ATTEMPTS => attempt += 1,
                done => return done,
            }
            for ancestor in ancestors(path) {
                match self.create(ancestor, b"", parent.clone()).await {
                    Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => {}
                    // An ancestor deleted meanwhile: start over from the top.
                    Err(Error::Code(ErrorCode::NoNode)) => break,
                    Err(e) => return Err(e),
                }
            }
        }
    }

    /// Deletes `path` and everything below it (zkCli's `deleteall`), children before parents.
    ///
    /// `path` must exist when the call starts: if it does not, the result is `NoNode`, as
    /// zkCli reports (kazoo's `delete(recursive=True)` ignores it; match on the code to do the
    /// same). Below that, a znode that someone else deletes meanwhile is taken as deleted, and
    /// `path` itself vanishing meanwhile is success. A znode that gains children while it is
    /// being deleted (`NotEmpty`) has its children listed and deleted again, up to a bound,
    /// after which `NotEmpty` is returned. Any other code (`NoAuth`, say) stops the deletion
    /// there, with what was deleted so far gone. The root `/` is refused with
    /// [`Error::InvalidArgument`]: the server's own `/zookeeper` cannot be deleted.
    ///
    /// Cancel safety: dropping the future leaves a smaller tree under `path` (children go
    /// before their parents), which calling it again deletes.
    ///
    /// ```no_run
    /// # async fn example(client: zk_session::Client) -> zk_session::Result<()> {
    /// use zk_session::{Error, ErrorCode};
    ///
    /// match client.delete_all("/app/jobs").await {
    ///     Ok(()) => println!("/app/jobs and its subtree are gone"),
    ///     Err(Error::Code(ErrorCode::NoNode)) => println!("there was no /app/jobs"),
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn delete_all(&self, path: &str) -> Result<(), Error> {
        if path == "/" {
            return Err(crate::ArgumentError::DeleteRoot.into());
        }
        // Depth first with an explicit stack: (path, children already queued, attempts).
        let mut stack = vec![(path.to_owned(), false, 0u32)];
        while let Some((node, listed, attempts)) = stack.pop() {
            if !listed {
                match self.get_children(&node).await {
                    Ok(children) => {
                        stack.push((node.clone(), true, attempts));
                        let base = node.trim_end_matches('/');
                        stack.extend(children.iter().map(|c| (format!("{base}/{c}"), false, 0)));
                    }
                    Err(Error::Code(ErrorCode::NoNode)) if node == path && attempts == 0 => {
                        return Err(Error::Code(ErrorCode::NoNode));
                    }
                    // Deleted by someone else meanwhile.
                    Err(Error::Code(ErrorCode::NoNode)) => {}
                    Err(e) => return Err(e),
                }
                continue;
            }
            match self.delete(&node, Version::Any).await {
                Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => {}
                Err(Error::Code(ErrorCode::NotEmpty)) if attempts + 1 < MAX_ATTEMPTS => {
                    stack.push((node, false, attempts + 1));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The proper ancestors of `path` below the root, top first: `/a/b/c` gives `/a`, `/a/b`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/')
        .map(|(i, _)| &path[..i])
        .filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::ancestors;

    #[test]
    fn ancestors_top_first_without_root_or_self() {
        let a: Vec<_> = ancestors("/a/b/c").collect();
        assert_eq!(a, ["/a", "/a/b"]);
        assert_eq!(ancestors("/a").count(), 0);
        assert_eq!(ancestors("/").count(), 0);
        let seq: Vec<_> = ancestors("/jobs/job-").collect();
        assert_eq!(seq, ["/jobs"]);
    }
}
