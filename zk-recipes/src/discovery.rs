//! Service discovery compatible with curator-x-discovery 5.4 (and so with Spring Cloud
//! Zookeeper): instances under `basePath/serviceName/instanceId`, in Curator's JSON.
//!
//! - [`ServiceDiscovery`] registers, updates and unregisters our instances (ephemeral by
//!   default, on a [`PersistentNode`](crate::PersistentNode): created again after a session
//!   expiry, left alone on a reconnect within the session, where Curator deletes and
//!   re-creates them) and queries any client's. It has the recipes' lifecycle: `builder`,
//!   `start().await` (registering the builder's
//!   [`this_instance`](ServiceDiscoveryBuilder::this_instance)s before it returns),
//!   [`status`](ServiceDiscovery::status) (a [`DiscoveryStatus`]) and `close().await`;
//!   dropping it unregisters in the background.
//! - [`ServiceCache`] follows one service's instances with the recipes'
//!   [`Cache`](crate::Cache) (one persistent watch, no polling); its
//!   [`instances`](ServiceCache::instances) are parsed once per change and shared.
//! - [`ServiceProvider`] picks one instance at a time from such a cache, with Curator's
//!   [`ProviderStrategy`]s and [`DownInstancePolicy`].
//!
//! The values both sides agree on — [`ServiceInstance`] and its JSON, [`UriSpec`] — come
//! with the feature `discovery`, which adds serde_json to read the JSON; writing is
//! Jackson's byte layout, done here because serde_json's escapes differ.

mod instance;
mod jackson;
mod service_cache;
mod service_discovery;
mod status;
mod strategy;
mod uri_spec;

pub use self::{
    instance::{ServiceInstance, ServiceInstanceBuilder, ServiceType},
    service_cache::{ServiceCache, ServiceCacheBuilder, ServiceProvider, ServiceProviderBuilder},
    service_discovery::{ServiceDiscovery, ServiceDiscoveryBuilder},
    status::DiscoveryStatus,
    strategy::{DownInstancePolicy, InstancePicker, ProviderStrategy},
    uri_spec::{UriPart, UriSpec},
};

/// A service instance's JSON could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstanceError {
    /// Not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A field of the wrong kind (a port that is not a number from 0 to 65535...).
    #[error("bad field in a service instance: {0}")]
    Field(&'static str),
    /// A service type that is not one of Curator's upper-case names.
    #[error("unknown service type {0:?} (Curator writes DYNAMIC, DYNAMIC_SEQUENTIAL, STATIC or PERMANENT)")]
    ServiceType(String),
    /// A URI template with an unbalanced brace.
    #[error("bad URI spec: {0}")]
    UriSpec(String),
}
