//! [`ServiceCache`] and [`ServiceProvider`]: a service's instances kept current by the
//! recipes' [`Cache`] (one watch, no polling), and one instance at a time picked from them.

use std::{
    sync::{Arc, Mutex as StdMutex},
    time::Instant,
};

use tokio::sync::watch;
use zk_session::Client;

use super::{
    service_discovery::parse, DownInstancePolicy, InstancePicker, ProviderStrategy, ServiceInstance,
};
use crate::{Cache, CacheEvent, CacheMode, CacheStatus, Result, ValueWatch};

/// Builds a [`ServiceCache`]; see [`ServiceDiscovery::service_cache`](crate::ServiceDiscovery::service_cache).
#[derive(Debug)]
pub struct ServiceCacheBuilder {
    client: Client,
    path: String,
}

impl ServiceCacheBuilder {
    pub(crate) fn new(client: Client, path: String) -> Self {
        ServiceCacheBuilder { client, path }
    }

    /// Loads the service's instances and follows them; returns once loaded.
    pub async fn start(self) -> Result<ServiceCache> {
        let mut builder = Cache::builder(self.client, self.path).mode(CacheMode::Children);
        let mut events = builder.subscribe();
        let cache = builder.start().await?;
        // The load's own events are not changes: they end with `Initialized`, which may
        // reach the subscription only after `start` returned.
        let mut loaded = false;
        while let Some(Some(event)) = events.try_next() {
            if matches!(event, CacheEvent::Initialized) {
                loaded = true;
                break;
            }
        }
        // Every later event is a change: counted, so that the parsed instances are rebuilt
        // once per change rather than on every lookup.
        let (generation, changes) = watch::channel(0u64);
        let counter = tokio::spawn(async move {
            while let Some(event) = events.next().await {
                if !loaded {
                    loaded = matches!(event, CacheEvent::Initialized);
                    continue;
                }
                generation.send_modify(|g| *g += 1);
            }
        });
        Ok(ServiceCache {
            cache,
            changes: tokio::sync::Mutex::new(changes.clone()),
            generation: changes,
            parsed: StdMutex::new(None),
            _counter: AbortOnDrop(counter.abort_handle()),
        })
    }
}

/// The instances of one service, kept current by watches (Curator's `ServiceCache`).
///
/// ```no_run
/// # async fn f(discovery: zk_recipes::ServiceDiscovery) -> zk_recipes::Result<()> {
/// let cache = discovery.service_cache("api").start().await?;
/// loop {
///     for i in cache.instances().iter() {
///         println!("api at {:?}:{:?}", i.address(), i.port());
///     }
///     cache.changed().await?;
/// }
/// # }
/// ```
#[derive(Debug)]
pub struct ServiceCache {
    cache: Cache,
    /// For [`changed`](Self::changed): the count of changes, as last seen by a caller.
    changes: tokio::sync::Mutex<watch::Receiver<u64>>,
    /// The count of changes now.
    generation: watch::Receiver<u64>,
    /// The instances parsed at a count of changes.
    parsed: StdMutex<Option<(u64, Arc<[ServiceInstance]>)>>,
    _counter: AbortOnDrop,
}

impl ServiceCache {
    /// The instances now, by znode name; znodes whose data is not an instance are left out.
    ///
    /// Cheap: the list is parsed once per change of the service and shared, so a call is a
    /// reference count, not a copy.
    pub fn instances(&self) -> Arc<[ServiceInstance]> {
        let now = *self.generation.borrow();
        let mut parsed = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, instances)) = parsed.as_ref() {
            if *at == now {
                return instances.clone();
            }
        }
        let instances: Arc<[ServiceInstance]> = self.read_view().into();
        *parsed = Some((now, instances.clone()));
        instances
    }

    fn read_view(&self) -> Vec<ServiceInstance> {
        let root = self.cache.root().to_owned();
        let mut names = self.cache.children(&root).unwrap_or_default();
        names.sort();
        names
            .iter()
            .filter_map(|name| {
                let path = format!("{}/{name}", root.trim_end_matches('/'));
                let node = self.cache.get(&path)?;
                let data = bytes::Bytes::copy_from_slice(node.data()?);
                parse(&path, &data).ok()
            })
            .collect()
    }

    /// Waits until the instances change (an instance registered, updated or gone, or a
    /// resync after a reconnect). Fails once the cache has stopped.
    pub async fn changed(&self) -> Result<()> {
        let mut changes = self.changes.lock().await;
        match changes.changed().await {
            Ok(()) => Ok(()),
            // The cache stopped: its events ended.
            Err(_) => Err(match self.cache.status().get() {
                CacheStatus::Ended(reason) => crate::RecipeError::Lost(reason),
                _ => crate::RecipeError::Closed,
            }),
        }
    }

    /// The cache's state (the recipes' one status).
    pub fn status(&self) -> ValueWatch<CacheStatus> {
        self.cache.status()
    }

    /// Stops following the service.
    pub async fn close(self) -> Result<()> {
        // The counter stops with its guard; the cache says how its own close went.
        let ServiceCache { cache, .. } = self;
        cache.close().await
    }
}

/// Stops the task counting a cache's changes when the [`ServiceCache`] goes.
#[derive(Debug)]
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Builds a [`ServiceProvider`]; see [`ServiceDiscovery::provider`](crate::ServiceDiscovery::provider).
#[derive(Debug)]
pub struct ServiceProviderBuilder {
    cache: ServiceCacheBuilder,
    strategy: ProviderStrategy,
    policy: DownInstancePolicy,
}

impl ServiceProviderBuilder {
    pub(crate) fn new(cache: ServiceCacheBuilder) -> Self {
        ServiceProviderBuilder {
            cache,
            strategy: ProviderStrategy::default(),
            policy: DownInstancePolicy::default(),
        }
    }

    /// How an instance is picked (round robin unless set).
    pub fn strategy(mut self, strategy: ProviderStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// When an instance reported in error is skipped (Curator's default unless set).
    pub fn down_instance_policy(mut self, policy: DownInstancePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Loads the service's instances and returns the provider.
    pub async fn start(self) -> Result<ServiceProvider> {
        Ok(ServiceProvider {
            cache: self.cache.start().await?,
            picker: StdMutex::new(InstancePicker::new(self.strategy, self.policy)),
        })
    }
}

/// One instance of a service at a time, from a cache of its instances, with Curator's
/// strategies and down-instance policy (Curator's `ServiceProvider`).
///
/// ```no_run
/// # async fn f(discovery: zk_recipes::ServiceDiscovery) -> zk_recipes::Result<()> {
/// let billing = discovery.provider("billing").start().await?;
/// if let Some(i) = billing.get_instance() {
///     // ... call it; on failure:
///     billing.note_error(&i);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ServiceProvider {
    cache: ServiceCache,
    picker: StdMutex<InstancePicker>,
}

impl ServiceProvider {
    /// An instance to use, or `None` when none is registered and up.
    pub fn get_instance(&self) -> Option<ServiceInstance> {
        let instances = self.cache.instances();
        let mut picker = self.picker.lock().unwrap_or_else(|p| p.into_inner());
        picker.pick(&instances, Instant::now()).cloned()
    }

    /// Every registered instance (shared, not copied: see [`ServiceCache::instances`]).
    pub fn all_instances(&self) -> Arc<[ServiceInstance]> {
        self.cache.instances()
    }

    /// Reports that `instance` failed: after the policy's threshold it is skipped for the
    /// policy's timeout.
    pub fn note_error(&self, instance: &ServiceInstance) {
        let mut picker = self.picker.lock().unwrap_or_else(|p| p.into_inner());
        picker.note_error(instance, Instant::now());
    }

    /// The state of the cache the provider reads (the recipes' one status).
    pub fn status(&self) -> ValueWatch<CacheStatus> {
        self.cache.status()
    }

    /// The cache the provider reads.
    pub fn cache(&self) -> &ServiceCache {
        &self.cache
    }

    /// Stops following the service.
    pub async fn close(self) -> Result<()> {
        self.cache.close().await
    }
}
