//! [`ServiceDiscovery`]: registering instances where curator-x-discovery 5.4 (and Spring
//! Cloud Zookeeper) looks for them, and looking them up.

use std::collections::HashMap;

use tokio::sync::Mutex;

use bytes::Bytes;
use zk_session::{Client, CreateOptions, Error, ErrorCode, Version};

use super::{ServiceCacheBuilder, ServiceInstance, ServiceProviderBuilder, ServiceType};
use crate::{
    counter::parent_of,
    plumbing::{
        liveness::client_over,
        protected::{child_path, create_parents},
        retry::{may_repeat_read, retry_while, retrying},
        runtime,
    },
    PersistentNode, RecipeError, Result,
};

/// Builds a [`ServiceDiscovery`]; see [`ServiceDiscovery::builder`].
#[derive(Debug)]
pub struct ServiceDiscoveryBuilder {
    client: Client,
    base_path: String,
}

impl ServiceDiscoveryBuilder {
    /// Starts the discovery: nothing is written until an instance is registered. Fails
    /// outside a tokio runtime ([`RecipeError::NoRuntime`]) or once the client has ended.
    pub async fn start(self) -> Result<ServiceDiscovery> {
        runtime::current()?;
        if let Some(why) = client_over(&self.client).filter(|_| self.client.has_ended()) {
            return Err(RecipeError::Lost(why));
        }
        Ok(ServiceDiscovery {
            client: self.client,
            base: self.base_path,
            registered: Mutex::new(HashMap::new()),
        })
    }
}

/// How one of our instances is kept registered.
#[derive(Debug)]
enum Registration {
    /// DYNAMIC and DYNAMIC_SEQUENTIAL: an ephemeral PersistentNode, created again after a
    /// session expiry — and only then: a reconnect within the session leaves it alone.
    Ephemeral(PersistentNode),
    /// STATIC and PERMANENT: a PERSISTENT znode at this path.
    Persistent(String, ServiceType),
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
}

impl ServiceDiscovery {
    /// Discovery under `base_path` (Curator's `basePath`, Spring's `/services` by default).
    pub fn builder(client: Client, base_path: impl Into<String>) -> ServiceDiscoveryBuilder {
        ServiceDiscoveryBuilder {
            client,
            base_path: base_path.into(),
        }
    }

    fn service_path(&self, name: &str) -> String {
        child_path(&self.base, name)
    }

    /// Registers `instance` (its znode's kind from its [`ServiceType`]); registering an id
    /// again replaces the earlier registration.
    pub async fn register(&self, instance: &ServiceInstance) -> Result<()> {
        let key = (instance.name().to_owned(), instance.id().to_owned());
        let path = child_path(&self.service_path(instance.name()), instance.id());
        let json = instance.to_json();
        let registration = match instance.service_type() {
            t @ (ServiceType::Dynamic | ServiceType::DynamicSequential) => {
                let options = if t == ServiceType::Dynamic {
                    CreateOptions::ephemeral()
                } else {
                    CreateOptions::ephemeral_sequential()
                };
                if t == ServiceType::Dynamic {
                    // A stale node of an earlier process (Curator does the same).
                    remove(&self.client, &path).await?;
                }
                let node = PersistentNode::builder(self.client.clone(), &path)
                    .data(json.as_bytes())
                    .options(options)
                    .start()
                    .await?;
                Registration::Ephemeral(node)
            }
            t => {
                write_persistent(&self.client, &path, json.as_bytes()).await?;
                Registration::Persistent(path, t)
            }
        };
        let old = self.registered.lock().await.insert(key, registration);
        if let Some(Registration::Ephemeral(old)) = old {
            let _ = old.close().await;
        }
        Ok(())
    }

    /// Writes `instance` over its registration (an instance of ours, by name and id).
    pub async fn update(&self, instance: &ServiceInstance) -> Result<()> {
        let json = instance.to_json();
        let key = (instance.name().to_owned(), instance.id().to_owned());
        let registered = self.registered.lock().await;
        match registered.get(&key) {
            Some(Registration::Ephemeral(node)) => node.set_data(json.as_bytes()).await,
            Some(Registration::Persistent(path, _)) => {
                retrying(&self.client, || {
                    self.client.set_data(path, json.as_bytes(), Version::Any)
                })
                .await?;
                Ok(())
            }
            None => Err(RecipeError::InvalidArgument(
                "update of an instance not registered here",
            )),
        }
    }

    /// Removes `instance`'s registration (an instance of ours), and its znode.
    pub async fn unregister(&self, instance: &ServiceInstance) -> Result<()> {
        let key = (instance.name().to_owned(), instance.id().to_owned());
        let registration = self.registered.lock().await.remove(&key);
        match registration {
            Some(Registration::Ephemeral(node)) => node.close().await,
            Some(Registration::Persistent(path, _)) => remove(&self.client, &path).await,
            None => Ok(()),
        }
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
    /// removal worked.
    pub async fn close(self) -> Result<()> {
        let registered: Vec<Registration> = self.registered.into_inner().into_values().collect();
        let mut first_error = None;
        for r in registered {
            let done = match r {
                Registration::Ephemeral(node) => node.close().await,
                Registration::Persistent(_, ServiceType::Permanent) => Ok(()),
                Registration::Persistent(path, _) => remove(&self.client, &path).await,
            };
            if let Err(e) = done {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
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
