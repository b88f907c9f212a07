//! [`ServiceDiscovery`]: registering instances where curator-x-discovery 5.4 (and Spring
//! Cloud Zookeeper) looks for them, and looking them up.

use std::{collections::HashMap, sync::Arc};

use tokio::{
    runtime::Handle,
    sync::{watch, Mutex},
    task::AbortHandle,
};

use bytes::Bytes;
use zk_session::{Client, CreateOptions, Error, ErrorCode, Version};

use super::{
    status::{end, ended, follow_end},
    DiscoveryStatus, ServiceCacheBuilder, ServiceInstance, ServiceProviderBuilder, ServiceType,
};
use crate::{
    counter::parent_of,
    plumbing::{
        cleanup::{spawn_removal, Removal, Target},
        liveness::client_over,
        pending::CLEANUP_GRACE,
        protected::{child_path, create_parents},
        retry::{may_repeat_read, retry_while, retrying},
        runtime,
    },
    PersistentNode, RecipeError, Result, ValueWatch,
};

/// Builds a [`ServiceDiscovery`]; see [`ServiceDiscovery::builder`].
#[derive(Debug)]
pub struct ServiceDiscoveryBuilder {
    client: Client,
    base_path: String,
    instances: Vec<ServiceInstance>,
}

impl ServiceDiscoveryBuilder {
    /// An instance [`start`](Self::start) registers (Curator's `thisInstance`); call it
    /// again for more than one.
    ///
    /// ```no_run
    /// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
    /// use zk_recipes::{ServiceDiscovery, ServiceInstance};
    ///
    /// let me = ServiceInstance::builder("api").port(8080).build();
    /// // Returns once `me` is registered.
    /// let discovery = ServiceDiscovery::builder(client, "/services")
    ///     .this_instance(me)
    ///     .start()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn this_instance(mut self, instance: ServiceInstance) -> Self {
        self.instances.push(instance);
        self
    }

    /// Starts the discovery and registers the builder's instances; returns once they are
    /// registered (at once when there are none). Fails outside a tokio runtime
    /// ([`RecipeError::NoRuntime`]), once the client has ended, or with a registration's
    /// failure. Cancel-safe: a dropped or failed start unregisters what it registered, in
    /// the background.
    pub async fn start(self) -> Result<ServiceDiscovery> {
        let handle = runtime::current()?;
        if let Some(why) = client_over(&self.client).filter(|_| self.client.has_ended()) {
            return Err(RecipeError::Lost(why));
        }
        let status = Arc::new(watch::channel(DiscoveryStatus::Ready).0);
        let follower = handle.spawn(follow_end(self.client.clone(), status.clone()));
        // Made before the registrations: dropping the start drops it, and it cleans up.
        let discovery = ServiceDiscovery {
            client: self.client,
            base: self.base_path,
            registered: Mutex::new(HashMap::new()),
            status,
            follower: follower.abort_handle(),
            handle,
        };
        for instance in &self.instances {
            discovery.register(instance).await?;
        }
        Ok(discovery)
    }
}

/// How one of our instances is kept registered.
#[derive(Debug)]
enum Registration {
    /// DYNAMIC and DYNAMIC_SEQUENTIAL: an ephemeral PersistentNode, created again after a
    /// session expiry — and only then: a reconnect within the session leaves it alone.
    Ephemeral(PersistentNode, ServiceType),
    /// STATIC and PERMANENT: a PERSISTENT znode at this path.
    Persistent(String, ServiceType),
}

impl Registration {
    fn service_type(&self) -> ServiceType {
        match self {
            Registration::Ephemeral(_, t) | Registration::Persistent(_, t) => *t,
        }
    }
}

/// Service discovery on the znodes curator-x-discovery 5.4 uses:
/// `basePath/serviceName/instanceId`, holding the instance in Curator's JSON.
///
/// Registered instances are ephemeral by default and re-registered after a session expiry.
/// Where Curator deletes and re-creates every instance on each reconnect (its watchers see
/// the service leave and come back; a DYNAMIC_SEQUENTIAL instance is duplicated), ours is
/// left alone while its session lives. A DYNAMIC_SEQUENTIAL instance is updated and
/// unregistered at the path it was created at (Curator uses the id without the suffix and
/// misses it), and a PERMANENT one outlives [`close`](Self::close) (Curator deletes it).
///
/// The recipes' lifecycle: [`builder`](Self::builder), [`start`](ServiceDiscoveryBuilder::start)
/// (which registers the builder's instances), [`status`](Self::status) and
/// [`close`](Self::close). Dropping it unregisters its instances too, in the background.
///
/// ```no_run
/// # async fn f(client: zk_session::Client) -> zk_recipes::Result<()> {
/// use zk_recipes::{ServiceDiscovery, ServiceInstance, UriSpec};
///
/// let discovery = ServiceDiscovery::builder(client, "/services").start().await?;
/// let me = ServiceInstance::builder("api")
///     .address("10.0.0.7")
///     .port(8080)
///     .uri_spec(UriSpec::parse("{scheme}://{address}:{port}").unwrap())
///     .build();
/// discovery.register(&me).await?;
/// for other in discovery.query_for_instances("billing").await? {
///     println!("billing at {:?}:{:?}", other.address(), other.port());
/// }
/// discovery.close().await?; // unregisters `me`
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ServiceDiscovery {
    client: Client,
    base: String,
    registered: Mutex<HashMap<(String, String), Registration>>,
    status: Arc<watch::Sender<DiscoveryStatus>>,
    follower: AbortHandle,
    handle: Handle,
}

impl ServiceDiscovery {
    /// Discovery under `base_path` (Curator's `basePath`, Spring's `/services` by default).
    pub fn builder(client: Client, base_path: impl Into<String>) -> ServiceDiscoveryBuilder {
        ServiceDiscoveryBuilder {
            client,
            base_path: base_path.into(),
            instances: Vec::new(),
        }
    }

    fn service_path(&self, name: &str) -> String {
        child_path(&self.base, name)
    }

    /// Where the discovery stands, as it changes; its last state says why it ended.
    ///
    /// See the example on [`DiscoveryStatus`].
    pub fn status(&self) -> ValueWatch<DiscoveryStatus> {
        ValueWatch::new(self.status.subscribe())
    }

    /// Registers `instance` (its znode's kind from its [`ServiceType`]). Registering an id
    /// again with the same type writes the instance over its registration (no delete and
    /// create: watchers see one data change); with another type it replaces it.
    ///
    /// Cancel-safe: a dropped register leaves the earlier registration of the id (if any)
    /// or none, never a znode no registration owns.
    pub async fn register(&self, instance: &ServiceInstance) -> Result<()> {
        if let Some(why) = ended(&self.client, &self.status) {
            return Err(RecipeError::Lost(why));
        }
        let key = (instance.name().to_owned(), instance.id().to_owned());
        let path = child_path(&self.service_path(instance.name()), instance.id());
        let json = instance.to_json();
        let kind = instance.service_type();
        let mut registered = self.registered.lock().await;
        match registered.get(&key) {
            Some(r) if r.service_type() == kind => return self.write(r, json.as_bytes()).await,
            Some(_) => {
                if let Some(old) = registered.remove(&key) {
                    self.unregister_one(old).await?;
                }
            }
            None => {}
        }
        let registration = match kind {
            ServiceType::Dynamic | ServiceType::DynamicSequential => {
                let options = if kind == ServiceType::Dynamic {
                    // A stale node of an earlier process (Curator does the same).
                    remove(&self.client, &path).await?;
                    CreateOptions::ephemeral()
                } else {
                    CreateOptions::ephemeral_sequential()
                };
                // Cancel-safe: a dropped start (or node) deletes what it made.
                let node = PersistentNode::builder(self.client.clone(), &path)
                    .data(json.as_bytes())
                    .options(options)
                    .start()
                    .await?;
                Registration::Ephemeral(node, kind)
            }
            _ => {
                // Until registered, a dropped write's node is deleted in the background.
                let unowned = Unowned(Some(self.removal_of(&path)));
                write_persistent(&self.client, &path, json.as_bytes()).await?;
                unowned.disarm();
                Registration::Persistent(path, kind)
            }
        };
        registered.insert(key, registration);
        Ok(())
    }

    /// Writes `instance` over its registration (an instance of ours, by name and id).
    pub async fn update(&self, instance: &ServiceInstance) -> Result<()> {
        let key = (instance.name().to_owned(), instance.id().to_owned());
        let registered = self.registered.lock().await;
        match registered.get(&key) {
            Some(r) => self.write(r, instance.to_json().as_bytes()).await,
            None => Err(RecipeError::InvalidArgument(
                "update of an instance not registered here",
            )),
        }
    }

    async fn write(&self, registration: &Registration, json: &[u8]) -> Result<()> {
        match registration {
            Registration::Ephemeral(node, _) => node.set_data(json).await,
            Registration::Persistent(path, _) => {
                retrying(&self.client, || {
                    self.client.set_data(path, json, Version::Any)
                })
                .await?;
                Ok(())
            }
        }
    }

    /// Removes `instance`'s registration (an instance of ours), and its znode. Cancel-safe:
    /// once called, the znode goes even if the future is dropped.
    pub async fn unregister(&self, instance: &ServiceInstance) -> Result<()> {
        let key = (instance.name().to_owned(), instance.id().to_owned());
        let registration = self.registered.lock().await.remove(&key);
        match registration {
            Some(r) => self.unregister_one(r).await,
            None => Ok(()),
        }
    }

    /// Deletes a registration's znode; the deletion is handed to a background task before
    /// the first await, so a dropped call deletes it all the same.
    async fn unregister_one(&self, registration: Registration) -> Result<()> {
        match registration {
            Registration::Ephemeral(node, _) => node.close().await,
            Registration::Persistent(path, _) => {
                let removal = self.removal_of(&path).start();
                Ok(removal.wait(self.grace()).await?)
            }
        }
    }

    /// Deletes the persistent znode at `path` in the background, retrying across
    /// reconnects.
    fn removal_of(&self, path: &str) -> PathRemoval {
        PathRemoval {
            client: self.client.clone(),
            handle: self.handle.clone(),
            path: path.to_owned(),
        }
    }

    fn grace(&self) -> std::time::Duration {
        CLEANUP_GRACE.max(self.client.negotiated_timeout())
    }

    /// The names of the services registered under the base path (none when it is missing).
    pub async fn query_for_names(&self) -> Result<Vec<String>> {
        let mut names = match self.read(|| self.client.get_children(&self.base)).await {
            Ok(names) => names,
            Err(RecipeError::Session(Error::Code(ErrorCode::NoNode))) => Vec::new(),
            Err(e) => return Err(e),
        };
        names.sort();
        Ok(names)
    }

    /// Every instance of service `name`, as written by any client (ours, Curator's,
    /// Spring's); an instance whose JSON cannot be read is a [`RecipeError::BadData`].
    pub async fn query_for_instances(&self, name: &str) -> Result<Vec<ServiceInstance>> {
        let dir = self.service_path(name);
        let mut ids = match self.read(|| self.client.get_children(&dir)).await {
            Ok(ids) => ids,
            Err(RecipeError::Session(Error::Code(ErrorCode::NoNode))) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        ids.sort();
        let mut instances = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(i) = self.read_instance(&child_path(&dir, &id)).await? {
                instances.push(i);
            }
        }
        Ok(instances)
    }

    /// The instance of service `name` with `id`, if it is registered.
    pub async fn query_for_instance(
        &self,
        name: &str,
        id: &str,
    ) -> Result<Option<ServiceInstance>> {
        self.read_instance(&child_path(&self.service_path(name), id))
            .await
    }

    async fn read_instance(&self, path: &str) -> Result<Option<ServiceInstance>> {
        match self.read(|| self.client.get_data(path)).await {
            Ok((data, _)) => parse(path, &data).map(Some),
            Err(RecipeError::Session(Error::Code(ErrorCode::NoNode))) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn read<T, F, Fut>(&self, op: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = std::result::Result<T, Error>>,
    {
        Ok(retry_while(op, |e| may_repeat_read(&self.client, e)).await?)
    }

    /// A cache of service `name`'s instances, kept current by watches.
    pub fn service_cache(&self, name: &str) -> ServiceCacheBuilder {
        ServiceCacheBuilder::new(self.client.clone(), self.service_path(name))
    }

    /// A provider of one instance of service `name` at a time, on a cache of its instances.
    pub fn provider(&self, name: &str) -> ServiceProviderBuilder {
        ServiceProviderBuilder::new(self.service_cache(name))
    }

    /// Unregisters every instance registered here but PERMANENT ones, and says whether every
    /// removal worked. Cancel-safe: a dropped close unregisters them all the same, in the
    /// background.
    pub async fn close(mut self) -> Result<()> {
        end(&self.status, DiscoveryStatus::Closed);
        let registered = std::mem::take(self.registered.get_mut());
        // Every persistent removal handed over before the first await; a node still to be
        // closed when this is dropped deletes itself.
        let mut removals = Vec::new();
        let mut nodes = Vec::new();
        for r in registered.into_values() {
            match r {
                Registration::Ephemeral(node, _) => nodes.push(node),
                Registration::Persistent(_, ServiceType::Permanent) => {}
                Registration::Persistent(path, _) => removals.push(self.removal_of(&path).start()),
            }
        }
        let mut first_error = None;
        for node in nodes {
            if let Err(e) = node.close().await {
                first_error.get_or_insert(e);
            }
        }
        for removal in removals {
            if let Err(e) = removal.wait(self.grace()).await {
                first_error.get_or_insert(e.into());
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for ServiceDiscovery {
    /// Unregisters what is still registered, in the background: ephemeral nodes delete
    /// themselves as they are dropped; STATIC ones are deleted here.
    fn drop(&mut self) {
        self.follower.abort();
        end(&self.status, DiscoveryStatus::Closed);
        for r in std::mem::take(self.registered.get_mut()).into_values() {
            if let Registration::Persistent(path, t) = r {
                if t != ServiceType::Permanent {
                    let _ = self.removal_of(&path).start();
                }
            }
        }
    }
}

/// The deletion of a persistent instance znode, not yet started.
#[derive(Debug)]
struct PathRemoval {
    client: Client,
    handle: Handle,
    path: String,
}

impl PathRemoval {
    /// Hands the deletion to a background task.
    fn start(self) -> Removal {
        let target = Target {
            id: None,
            path: Some(self.path.clone()),
            session: None,
        };
        let parent = parent_of(&self.path).to_owned();
        spawn_removal(Some(&self.handle), self.client, parent, target)
    }
}

/// A persistent znode being written and not yet registered: deleted if the write is
/// dropped.
struct Unowned(Option<PathRemoval>);

impl Unowned {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Unowned {
    fn drop(&mut self) {
        if let Some(removal) = self.0.take() {
            let _ = removal.start();
        }
    }
}

pub(crate) fn parse(path: &str, data: &Bytes) -> Result<ServiceInstance> {
    ServiceInstance::from_json(data).map_err(|_| RecipeError::BadData {
        path: path.to_owned(),
        len: data.len(),
    })
}

/// Creates or overwrites a PERSISTENT instance node (parents as containers).
async fn write_persistent(client: &Client, path: &str, data: &[u8]) -> Result<()> {
    retrying(client, || async {
        match client.create(path, data, CreateOptions::persistent()).await {
            Ok(_) => Ok(()),
            Err(Error::Code(ErrorCode::NodeExists)) => {
                client.set_data(path, data, Version::Any).await.map(drop)
            }
            Err(Error::Code(ErrorCode::NoNode)) => {
                create_parents(client, parent_of(path))
                    .await
                    .map_err(|e| match e {
                        RecipeError::Session(e) => e,
                        _ => Error::Code(ErrorCode::SystemError),
                    })?;
                client
                    .create(path, data, CreateOptions::persistent())
                    .await
                    .map(drop)
            }
            Err(e) => Err(e),
        }
    })
    .await?;
    Ok(())
}

/// Deletes `path`; a missing node is fine.
async fn remove(client: &Client, path: &str) -> Result<()> {
    match retrying(client, || client.delete(path, Version::Any)).await {
        Ok(()) | Err(Error::Code(ErrorCode::NoNode)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
