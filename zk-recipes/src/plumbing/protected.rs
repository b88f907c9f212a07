//! [`ProtectedCreate`]: Curator's protected mode (its documentation is on the type).

use bytes::Bytes;
use tokio::runtime::Handle;
use zk_session::{Client, CreateOptions, Error, ErrorCode, Stat, Version};

use crate::plumbing::liveness::raw_session_id;
use crate::{
    plumbing::{
        cleanup::{spawn_removal, Claim},
        liveness::session_gone,
        retry::retrying,
    },
    RecipeError,
};

/// How many times a create may find its parent missing (reaped as an empty container right
/// after we made it) before giving up.
const PARENT_ATTEMPTS: u32 = 10;

/// A fresh uuid v4 in the 36-character hyphenated lowercase form, from `rand`.
///
/// ```
/// let id = zk_recipes::new_protected_id();
/// assert_eq!(id.len(), 36);
/// assert_eq!(id.as_bytes()[14], b'4'); // version 4
/// assert_ne!(id, zk_recipes::new_protected_id());
/// ```
pub fn new_protected_id() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// `_c_<id>-`: what every node created with protected id `id` starts with.
///
/// ```
/// let p = zk_recipes::protected_prefix("0f8e6a3c-1d2b-4c5d-8e9f-a0b1c2d3e4f5");
/// assert_eq!(p, "_c_0f8e6a3c-1d2b-4c5d-8e9f-a0b1c2d3e4f5-");
/// assert_eq!(p.len(), 40);
/// ```
pub fn protected_prefix(id: &str) -> String {
    format!("_c_{id}-")
}

/// `parent/name`, for the root too.
pub(crate) fn child_path(parent: &str, name: &str) -> String {
    if parent == "/" {
        format!("/{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// A node made by a protected create.
///
/// ```no_run
/// # async fn example(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::ProtectedCreate;
///
/// let node = ProtectedCreate::new("/locks/job", "lock-").create(&client).await?;
/// assert_eq!(node.path, format!("/locks/job/{}", node.name));
/// assert!(node.name.starts_with(&format!("_c_{}-lock-", node.id)));
/// println!("created by zxid {:#x}", node.stat.czxid);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedNode {
    /// The full path.
    pub path: String,
    /// The last path component (`_c_<id>-<name><seq>`).
    pub name: String,
    /// The protected id (uuid) in the name.
    pub id: String,
    /// The node's Stat at creation (or when adopted).
    pub stat: Stat,
}

impl ProtectedNode {
    /// The node created at `path` with protected id `id`.
    pub(crate) fn at(path: String, id: String, stat: Stat) -> ProtectedNode {
        let name = path.rsplit('/').next().unwrap_or_default().to_owned();
        ProtectedNode {
            path,
            name,
            id,
            stat,
        }
    }
}

/// What [`ProtectedCreate::recover`] found under the parent.
///
/// See the example on [`ProtectedCreate::recover`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recovery {
    /// A node with the id, owned by our session: it is ours.
    Adopted(ProtectedNode),
    /// Nodes with the id owned by another session, now deleted (their names).
    Removed(Vec<String>),
    /// No node with the id.
    NotFound,
}

/// Protected-mode creates, in the manner of Curator's `withProtection()`.
///
/// A create can succeed on the server while its reply is lost with the connection. The session
/// lives on, and so does the ephemeral node; a client that cannot recognise it would queue
/// behind its own orphan until the session ends. So the node's name starts with
/// `_c_<uuid>-` (Curator's format: a 36-character hyphenated lowercase uuid v4, fresh for each
/// create), and after a ConnectionLoss the parent is listed to look for it:
///
/// - found, and its `ephemeralOwner` is our session: adopted, no second node;
/// - found under another session (an earlier, dying session of ours: CURATOR-498, or a node
///   taken for ours after a reconnect: CURATOR-604/696): deleted, never adopted, and the next
///   create uses a fresh uuid;
/// - not found: created again.
///
/// A create that is given up (an error, or the future dropped) leaves a background task that
/// deletes whatever carries its uuid, until it is gone or the session is.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::ProtectedCreate;
///
/// let node = ProtectedCreate::new("/locks/job", "lock-").create(&client).await?;
/// assert!(node.name.starts_with("_c_"));
/// assert_eq!(zk_session::SessionId::new(node.stat.ephemeral_owner), client.session_id());
/// # Ok(()) }
/// ```
///
/// A protected create: where, what name, what data and mode (ephemeral-sequential by default).
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::ProtectedCreate;
/// use zk_session::CreateOptions;
///
/// let (node, children) = ProtectedCreate::new("/election", "latch-")
///     .data(b"participant-7")
///     .options(CreateOptions::ephemeral_sequential())
///     .create_and_list(&client)
///     .await?;
/// assert!(children.contains(&node.name));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedCreate {
    parent: String,
    name: String,
    data: Bytes,
    options: CreateOptions,
}

impl ProtectedCreate {
    /// Creates `parent/_c_<uuid>-<name>` (parents made as containers when missing).
    ///
    /// See the example on [`ProtectedCreate`].
    pub fn new(parent: impl Into<String>, name: impl Into<String>) -> Self {
        ProtectedCreate {
            parent: parent.into(),
            name: name.into(),
            data: Bytes::new(),
            options: CreateOptions::ephemeral_sequential(),
        }
    }

    /// The node's data (default empty).
    ///
    /// See the example on [`ProtectedCreate`].
    pub fn data(mut self, data: &[u8]) -> Self {
        self.data = Bytes::copy_from_slice(data);
        self
    }

    /// The create mode and ACL (default ephemeral-sequential, open ACL).
    ///
    /// See the example on [`ProtectedCreate`].
    pub fn options(mut self, options: CreateOptions) -> Self {
        self.options = options;
        self
    }

    /// The parent path.
    ///
    /// See the example on [`ProtectedCreate`].
    pub fn parent(&self) -> &str {
        &self.parent
    }

    /// Creates the node, recovering from lost replies as [`ProtectedCreate`] describes.
    ///
    /// See the example on [`ProtectedCreate`].
    pub async fn create(&self, client: &Client) -> Result<ProtectedNode, RecipeError> {
        Ok(self.run(client, false, None).await?.0)
    }

    /// Creates the node and lists the parent's children after it, in one round trip when
    /// nothing goes wrong: the listing is sent right behind the create on the same
    /// connection, so the server answers it after the create and the node is in it.
    ///
    /// See the example on [`ProtectedCreate`].
    pub async fn create_and_list(
        &self,
        client: &Client,
    ) -> Result<(ProtectedNode, Vec<String>), RecipeError> {
        Ok(self.listed(client, None).await?)
    }

    /// [`create_and_list`](Self::create_and_list) with the session's error as it is, for
    /// recipes that decide on its code. With a `claim`, the cleanup is left to the caller
    /// through it: it covers the node from the moment the create is sent, also after
    /// success, until the caller takes it; without one, a create given up removes its node.
    pub(crate) async fn listed(
        &self,
        client: &Client,
        claim: Option<&Claim>,
    ) -> Result<(ProtectedNode, Vec<String>), Error> {
        let (node, children) = self.run(client, true, claim.cloned()).await?;
        Ok((node, children.unwrap_or_default()))
    }

    async fn run(
        &self,
        client: &Client,
        list: bool,
        claim: Option<Claim>,
    ) -> Result<(ProtectedNode, Option<Vec<String>>), Error> {
        // The session this create belongs to; a node of any other session is not ours.
        let session = raw_session_id(client);
        let guard = RemoveOnDrop {
            client: client.clone(),
            parent: self.parent.clone(),
            owned: claim.is_none(),
            claim: claim.unwrap_or_default(),
            handle: Handle::try_current().ok(),
        };
        let claim = &guard.claim;
        let mut id = new_protected_id();
        let mut parent_attempts = 0;
        loop {
            let name = format!("{}{}", protected_prefix(&id), self.name);
            let path = child_path(&self.parent, &name);
            // From the moment the create is sent, a node with this id may exist; the claim
            // covers it until the node is handed to the caller, whatever happens in between
            // (the listing failing, or this future dropped while the listing is retried).
            let ephemeral = self.options.mode().is_ephemeral();
            claim.sending(&id, ephemeral.then_some(session));
            let (created, listed) = self.send_create(client, &path, list).await;
            match created {
                Ok((path, stat)) => {
                    claim.created(&path, stat.ephemeral_owner);
                    let children = match listed {
                        Some(Ok(c)) => Some(c),
                        Some(Err(_)) => Some(list_retrying(client, &self.parent).await?),
                        None => None,
                    };
                    return Ok((guard.hand_over(ProtectedNode::at(path, id, stat)), children));
                }
                Err(Error::Code(ErrorCode::NoNode)) if parent_attempts < PARENT_ATTEMPTS => {
                    parent_attempts += 1;
                    make_parents(client, &self.parent).await?;
                }
                Err(e) if e.is_retryable() => {
                    // A create belongs to one session: once it is over, so is the create
                    // (the node, if made, went with it), even if the client has a new one.
                    if session != 0 && session_gone(client, session) {
                        return Err(Error::Code(ErrorCode::SessionExpired));
                    }
                    // The create may or may not have happened: look for the node.
                    match self.recover_retrying(client, &id, session).await? {
                        (Recovery::Adopted(node), children) => {
                            claim.created(&node.path, node.stat.ephemeral_owner);
                            return Ok((guard.hand_over(node), list.then_some(children)));
                        }
                        (Recovery::NotFound, _) => {}
                        (Recovery::Removed(_), _) => id = new_protected_id(),
                    }
                }
                // A definite failure. This attempt created nothing, but an earlier uncertain
                // one may have: the claim still covers the id.
                Err(e) => return Err(e),
            }
        }
    }

    /// Looks for a node carrying protected id `id` under the parent, on behalf of the
    /// client's current session: adopts it if that session owns it (or, for a
    /// non-ephemeral mode, if it exists), deletes it otherwise.
    ///
    /// ```no_run
    /// # async fn f(client: zk_session::Client, id: &str) -> zk_recipes::Result<()> {
    /// use zk_recipes::{ProtectedCreate, Recovery};
    ///
    /// match ProtectedCreate::new("/locks/job", "lock-").recover(&client, id).await? {
    ///     Recovery::Adopted(node) => println!("ours: {}", node.path),
    ///     Recovery::Removed(names) => println!("deleted stale {names:?}"),
    ///     _ => println!("not there"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn recover(&self, client: &Client, id: &str) -> Result<Recovery, RecipeError> {
        Ok(self.recover_as(client, id, raw_session_id(client)).await?.0)
    }

    /// Sends the create and, when `list`, the parent's listing right behind it.
    async fn send_create(
        &self,
        client: &Client,
        path: &str,
        list: bool,
    ) -> (
        Result<(String, Stat), Error>,
        Option<Result<Vec<String>, Error>>,
    ) {
        let create = client.create_with_stat(path, &self.data, self.options.clone());
        if list {
            let (c, l) = tokio::join!(create, client.get_children(&self.parent));
            (c, Some(l))
        } else {
            (create.await, None)
        }
    }

    /// [`recover_as`](Self::recover_as), retried while the connection is lost.
    async fn recover_retrying(
        &self,
        client: &Client,
        id: &str,
        recorded_session: i64,
    ) -> Result<(Recovery, Vec<String>), Error> {
        retrying(client, || self.recover_as(client, id, recorded_session)).await
    }

    /// [`recover`](Self::recover) for the session recorded at the first attempt, also
    /// returning the listing (taken after the create, so good for finding our place).
    async fn recover_as(
        &self,
        client: &Client,
        id: &str,
        recorded_session: i64,
    ) -> Result<(Recovery, Vec<String>), Error> {
        // The create may have reached the leader through a server we are no longer connected
        // to: sync first, so this server has applied whatever the leader committed.
        match client.sync(&self.parent).await {
            Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => {}
            Err(e) => return Err(e),
        }
        let children = match client.get_children(&self.parent).await {
            Ok(c) => c,
            Err(Error::Code(ErrorCode::NoNode)) => return Ok((Recovery::NotFound, Vec::new())),
            Err(e) => return Err(e),
        };
        let session = raw_session_id(client);
        let ephemeral = self.options.mode().is_ephemeral();
        let prefix = protected_prefix(id);
        let mut adopted = None;
        let mut removed = Vec::new();
        for name in children.iter().filter(|c| c.starts_with(&prefix)) {
            let path = child_path(&self.parent, name);
            let Some(stat) = client.exists(&path).await? else {
                continue;
            };
            let ours = !ephemeral
                || (session != 0
                    && stat.ephemeral_owner == session
                    && (recorded_session == 0 || recorded_session == session));
            if ours && adopted.is_none() {
                adopted = Some(ProtectedNode {
                    path,
                    name: name.clone(),
                    id: id.to_owned(),
                    stat,
                });
            } else {
                match client.delete(&path, Version::Any).await {
                    Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => removed.push(name.clone()),
                    Err(e) => return Err(e),
                }
            }
        }
        let found = match adopted {
            Some(node) => Recovery::Adopted(node),
            None if !removed.is_empty() => Recovery::Removed(removed),
            None => Recovery::NotFound,
        };
        Ok((found, children))
    }
}

/// Lists `parent`, retrying while the connection is lost.
async fn list_retrying(client: &Client, parent: &str) -> Result<Vec<String>, Error> {
    retrying(client, || client.get_children(parent)).await
}

/// Creates `path` and its missing ancestors as containers, as Curator's
/// `creatingParentContainersIfNeeded` does: the server removes them once they have had
/// children and have none left, so lock paths do not pile up.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// zk_recipes::create_parents(&client, "/app/locks/job").await?;
/// # Ok(()) }
/// ```
pub async fn create_parents(client: &Client, path: &str) -> Result<(), RecipeError> {
    Ok(make_parents(client, path).await?)
}

/// [`create_parents`] with the session's error as it is.
async fn make_parents(client: &Client, path: &str) -> Result<(), Error> {
    let mut at = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        at.push('/');
        at.push_str(part);
        match client.create(&at, b"", CreateOptions::container()).await {
            Ok(_) | Err(Error::Code(ErrorCode::NodeExists)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Deletes every child of `parent` that carries protected id `id`; returns how many went.
///
/// ```no_run
/// # async fn f(client: zk_session::Client, id: &str) -> zk_recipes::Result<()> {
/// let n = zk_recipes::remove_protected(&client, "/locks/job", id).await?;
/// println!("removed {n}");
/// # Ok(()) }
/// ```
pub async fn remove_protected(
    client: &Client,
    parent: &str,
    id: &str,
) -> Result<usize, RecipeError> {
    Ok(remove_protected_of(client, parent, id, None).await?)
}

/// [`remove_protected`], of the nodes session `owner` owns only when given: a node with the
/// id under another session (a create of ours that went out on the client's next session)
/// is not the one to delete.
pub(crate) async fn remove_protected_of(
    client: &Client,
    parent: &str,
    id: &str,
    owner: Option<i64>,
) -> Result<usize, Error> {
    // Sync for the same reason as in recovery: the create may have gone through another
    // server.
    match client.sync(parent).await {
        Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => {}
        Err(e) => return Err(e),
    }
    let children = match client.get_children(parent).await {
        Ok(c) => c,
        Err(Error::Code(ErrorCode::NoNode)) => return Ok(0),
        Err(e) => return Err(e),
    };
    let prefix = protected_prefix(id);
    let mut n = 0;
    for name in children.iter().filter(|c| c.starts_with(&prefix)) {
        let path = child_path(parent, name);
        if let Some(owner) = owner {
            match client.exists(&path).await? {
                Some(stat) if stat.ephemeral_owner == owner => {}
                _ => continue,
            }
        }
        match client.delete(&path, Version::Any).await {
            Ok(()) => n += 1,
            Err(Error::Code(ErrorCode::NoNode)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Removes the nodes of a create that did not hand its node over (an error, or the future
/// dropped), unless the caller took the cleanup over through its own [`Claim`].
struct RemoveOnDrop {
    client: Client,
    parent: String,
    claim: Claim,
    /// False when the caller cleans up.
    owned: bool,
    handle: Option<Handle>,
}

impl RemoveOnDrop {
    /// The create succeeded: the node is the caller's now. A caller that passed its own
    /// claim takes it from there when it takes the node.
    fn hand_over(&self, node: ProtectedNode) -> ProtectedNode {
        if self.owned {
            self.claim.take();
        }
        node
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if self.owned {
            let _ = spawn_removal(
                self.handle.as_ref(),
                self.client.clone(),
                std::mem::take(&mut self.parent),
                self.claim.take(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contender::protected_id_of;

    #[test]
    fn ids_are_uuid_v4_and_fresh() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let id = new_protected_id();
            assert_eq!(id.len(), 36);
            assert!(id
                .bytes()
                .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            assert_eq!(id.as_bytes()[14], b'4');
            assert!(matches!(id.as_bytes()[19], b'8' | b'9' | b'a' | b'b'));
            let name = format!("{}lock-0000000001", protected_prefix(&id));
            assert_eq!(protected_id_of(&name), Some(id.as_str()));
            assert!(seen.insert(id));
        }
    }

    #[test]
    fn child_paths() {
        assert_eq!(child_path("/", "a"), "/a");
        assert_eq!(child_path("/x/y", "a"), "/x/y/a");
    }
}
