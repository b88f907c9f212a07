//! `zk services` and `zk register`: service discovery as curator-x-discovery (and Spring
//! Cloud Zookeeper) sees it, `BASE/NAME/ID` holding each instance's JSON.

use std::{collections::HashMap, ffi::OsString};

use serde_json::{json, Value};
use zk_recipes::{ServiceDiscovery, ServiceInstance, ServiceType, UriSpec};

use crate::{dispatch::Ctx, exit, output, run, Failure};

/// Where Spring Cloud Zookeeper (and most Curator users) register services.
pub const DEFAULT_BASE: &str = "/services";

/// The instance `zk register` keeps registered.
pub struct Registration<'a> {
    pub name: &'a str,
    pub id: &'a str,
    pub address: &'a str,
    pub port: u16,
    pub uri_spec: Option<&'a str>,
}

/// `zk services [BASE]`: every service under BASE and its instances.
pub async fn services(ctx: &Ctx, base: &str) -> Result<i32, Failure> {
    let what = format!("services {base}");
    let discovery = ServiceDiscovery::builder(ctx.client.clone(), base)
        .start()
        .await
        .map_err(|e| run::recipe_failure(&what, e))?;
    let names = discovery
        .query_for_names()
        .await
        .map_err(|e| run::recipe_failure(&what, e))?;
    let mut listed = Vec::with_capacity(names.len());
    for name in names {
        let instances = discovery
            .query_for_instances(&name)
            .await
            .map_err(|e| run::recipe_failure(&format!("services {base}/{name}"), e))?;
        listed.push((name, instances));
    }
    if ctx.json {
        let services: Vec<Value> = listed
            .iter()
            .map(|(name, instances)| {
                json!({"name": name, "instances": instances.iter().map(instance_json).collect::<Vec<_>>()})
            })
            .collect();
        output::json(&json!({"base": base, "services": services}))?;
    } else {
        let mut text = String::new();
        for (name, instances) in &listed {
            text.push_str(name);
            text.push('\n');
            for i in instances {
                text.push_str(&instance_line(i));
                text.push('\n');
            }
        }
        output::raw(text.as_bytes())?;
    }
    Ok(exit::OK)
}

/// The instance's URI from its own spec (none without one).
fn uri(instance: &ServiceInstance) -> Option<String> {
    instance
        .uri_spec()
        .map(|spec| spec.render(instance, &HashMap::new()))
}

/// `  ID ADDRESS:PORT [ssl SSLPORT] [URI]`, for people.
fn instance_line(i: &ServiceInstance) -> String {
    let port = i
        .port()
        .map(|p| p.to_string())
        .unwrap_or_else(|| "-".into());
    let mut line = format!("  {} {}:{}", i.id(), i.address().unwrap_or("-"), port);
    if let Some(ssl) = i.ssl_port() {
        line.push_str(&format!(" ssl {ssl}"));
    }
    if let Some(u) = uri(i) {
        line.push(' ');
        line.push_str(&u);
    }
    line
}

fn instance_json(i: &ServiceInstance) -> Value {
    json!({
        "id": i.id(),
        "address": i.address(),
        "port": i.port(),
        "sslPort": i.ssl_port(),
        "serviceType": i.service_type().as_str(),
        "registrationTimeUtc": i.registration_time_utc(),
        "uri": uri(i),
    })
}

/// `zk register NAME --id ID --address A --port P -- CMD...`: a DYNAMIC (ephemeral) instance
/// registered while CMD runs, unregistered when it exits. CMD's exit status.
pub async fn register(
    ctx: &Ctx,
    base: &str,
    r: Registration<'_>,
    cmd: &[OsString],
) -> Result<i32, Failure> {
    let what = format!("register {base}/{}/{}", r.name, r.id);
    let mut builder = ServiceInstance::builder(r.name)
        .id(r.id)
        .address(r.address)
        .port(r.port)
        .service_type(ServiceType::Dynamic);
    if let Some(spec) = r.uri_spec {
        let spec = UriSpec::parse(spec)
            .map_err(|e| Failure::usage(format!("--uri-spec {spec:?}: {e}")))?;
        builder = builder.uri_spec(spec);
    }
    let instance = builder.build();
    let discovery = ServiceDiscovery::builder(ctx.client.clone(), base)
        .start()
        .await
        .map_err(|e| run::recipe_failure(&what, e))?;
    // Dropping the registration on a signal leaves at most an ephemeral, gone with the session.
    tokio::select! {
        r = discovery.register(&instance) => r.map_err(|e| run::recipe_failure(&what, e))?,
        sig = crate::interrupted() => {
            return Err(Failure::new(128 + sig, "interrupted while registering".into()))
        }
    }
    let env = [
        ("ZK_SERVICE_NAME", r.name.to_owned()),
        ("ZK_SERVICE_ID", r.id.to_owned()),
    ];
    // The registration outlives a session expiry (it is registered again), so nothing is
    // "lost" while CMD runs: only CMD's exit ends it.
    let outcome = run::supervise(cmd, &env, std::future::pending()).await;
    let _ = discovery.close().await;
    outcome
}
