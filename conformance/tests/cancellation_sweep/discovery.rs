//! The sweep over service discovery: ServiceDiscovery's start (with instances to register),
//! register, update, unregister and close, and the ServiceCache's and ServiceProvider's
//! start and close. Each is dropped at every k; after each drop the session owns no
//! instance znode nor watch it was not promised, the service's directory holds exactly the
//! instances still registered (a STATIC one is persistent: no ephemeralOwner to catch it),
//! and no registration is left half made (one the discovery knows without its znode, or
//! the other way round).

use conformance::sweep::{assert_swept, child_watches, poll_then_drop, settle, sweep};
use zk_recipes::{RecipeError, ServiceDiscovery, ServiceInstance, ServiceType};

use super::{Env, SETTLE};

/// The service's directory under the test's path.
fn dir(env: &Env) -> String {
    format!("{}/api", env.path)
}

fn dynamic(port: u16) -> ServiceInstance {
    ServiceInstance::builder("api")
        .id("dyn")
        .address("10.0.0.7")
        .port(port)
        .build()
}

fn fixed() -> ServiceInstance {
    ServiceInstance::builder("api")
        .id("static")
        .service_type(ServiceType::Static)
        .build()
}

/// The service's directory holds exactly `ids` (settling: removals run in the background),
/// and nothing else of the session's is left under the path but `ids`' znodes and the
/// watches on the ephemeral ones (`watched`), nor a child watch on the directory.
async fn only(env: &Env, ids: &[&str], watched: &[&str]) -> Result<(), String> {
    let dir = dir(env);
    let paths =
        |ids: &[&str]| -> Vec<String> { ids.iter().map(|i| format!("{dir}/{i}")).collect() };
    settle("the service's instances", SETTLE, || async {
        let mut found = match env.observer.get_children(&dir).await {
            Ok(found) => found,
            Err(e) if e.code() == Some(zk_session::ErrorCode::NoNode) => Vec::new(),
            Err(e) => return Err(format!("listing {dir}: {e}")),
        };
        found.sort();
        (found == ids)
            .then_some(())
            .ok_or(format!("{found:?}, not {ids:?}"))
    })
    .await?;
    env.clean(&paths(ids), &paths(watched)).await?;
    let left = child_watches(&env.c, std::slice::from_ref(&dir))
        .await
        .map_err(|e| format!("checkWatches: {e}"))?;
    left.is_empty()
        .then_some(())
        .ok_or(format!("child watches left on {left:?}"))
}

/// Whether `d` knows `instance` as registered (an update of one it does not know is
/// InvalidArgument).
async fn knows(d: &ServiceDiscovery, instance: &ServiceInstance) -> Result<bool, String> {
    match d.update(instance).await {
        Ok(()) => Ok(true),
        Err(RecipeError::InvalidArgument(_)) => Ok(false),
        Err(e) => Err(format!("update: {e}")),
    }
}

pub(super) async fn discovery_start_and_close(pause: conformance::sweep::Pause) {
    let env = Env::new("discovery-start", pause).await;
    let env = &env;
    let start = || {
        ServiceDiscovery::builder(env.c.clone(), &env.path)
            .this_instance(dynamic(1))
            .this_instance(fixed())
            .start()
    };
    let report = sweep(&env.plan, |k| async move {
        match poll_then_drop(start(), k, env.plan.pause).await {
            Some(d) => {
                let d = d.map_err(|e| e.to_string())?;
                only(env, &["dyn", "static"], &["dyn"]).await?;
                d.close().await.map_err(|e| e.to_string())?;
                only(env, &[], &[]).await?;
                Ok(true)
            }
            None => only(env, &[], &[]).await.map(|()| false),
        }
    })
    .await;
    assert_swept("ServiceDiscovery start", &report, true);
    let report = sweep(&env.plan, |k| async move {
        let d = start().await.map_err(|e| e.to_string())?;
        let done = poll_then_drop(d.close(), k, env.plan.pause).await;
        if let Some(r) = &done {
            r.as_ref().map_err(|e| e.to_string())?;
        }
        only(env, &[], &[]).await?;
        Ok(done.is_some())
    })
    .await;
    assert_swept("ServiceDiscovery close", &report, true);
}

pub(super) async fn discovery_register_update_unregister(pause: conformance::sweep::Pause) {
    let env = Env::new("discovery-register", pause).await;
    let env = &env;
    let d = &ServiceDiscovery::builder(env.c.clone(), &env.path)
        .start()
        .await
        .unwrap();
    for (instance, watched) in [(dynamic(1), &["dyn"][..]), (fixed(), &[][..])] {
        let instance = &instance;
        let id = instance.id();
        let report = sweep(&env.plan, |k| async move {
            let done = poll_then_drop(d.register(instance), k, env.plan.pause).await;
            if let Some(r) = &done {
                r.as_ref().map_err(|e| e.to_string())?;
                only(env, &[id], watched).await?;
            } else {
                only(env, &[], &[]).await?;
            }
            // Registered in full or not at all.
            if knows(d, instance).await? != done.is_some() {
                return Err(format!("the discovery's registration disagrees ({done:?})"));
            }
            d.unregister(instance).await.map_err(|e| e.to_string())?;
            only(env, &[], &[]).await?;
            Ok(done.is_some())
        })
        .await;
        assert_swept(&format!("register ({id})"), &report, true);
        d.register(instance).await.unwrap();
        let moved = ServiceInstance::builder("api")
            .id(id)
            .port(2)
            .service_type(instance.service_type())
            .build();
        let moved = &moved;
        let report = sweep(&env.plan, |k| async move {
            let done = poll_then_drop(d.update(moved), k, env.plan.pause).await;
            if let Some(r) = &done {
                r.as_ref().map_err(|e| e.to_string())?;
            }
            only(env, &[id], watched).await?;
            // The old data or the new one, and the next update works.
            d.update(instance).await.map_err(|e| e.to_string())?;
            Ok(done.is_some())
        })
        .await;
        assert_swept(&format!("update ({id})"), &report, true);
        let report = sweep(&env.plan, |k| async move {
            d.register(instance).await.map_err(|e| e.to_string())?;
            let done = poll_then_drop(d.unregister(instance), k, env.plan.pause).await;
            if let Some(r) = &done {
                r.as_ref().map_err(|e| e.to_string())?;
            }
            if k == 0 {
                // Never polled: never called.
                only(env, &[id], watched).await?;
                d.unregister(instance).await.map_err(|e| e.to_string())?;
            }
            // Once polled, the instance goes, and the discovery forgets it.
            only(env, &[], &[]).await?;
            if knows(d, instance).await? {
                return Err("still registered after unregister".into());
            }
            Ok(done.is_some())
        })
        .await;
        assert_swept(&format!("unregister ({id})"), &report, true);
    }
}

/// Sweeps the start and the close of a follower of service "api" (`$make` on the
/// discovery: a cache or a provider, whose `$list` gives its instances): after each drop,
/// nothing of the session's is left but the other client's instance.
macro_rules! sweep_follower {
    ($env:expr, $d:expr, $what:literal, $make:ident, $list:ident) => {
        let (env, d) = ($env, $d);
        let report = sweep(&env.plan, |k| async move {
            let start = async {
                let follower = d.$make("api").start().await?;
                Ok::<_, RecipeError>(follower.$list().len())
            };
            let done = poll_then_drop(start, k, env.plan.pause).await;
            loaded(&done)?;
            only(env, &["dyn"], &[]).await.map(|()| done.is_some())
        })
        .await;
        assert_swept(concat!($what, " start"), &report, true);
        let report = sweep(&env.plan, |k| async move {
            let follower = d.$make("api").start().await;
            let follower = follower.map_err(|e| e.to_string())?;
            let done = poll_then_drop(follower.close(), k, env.plan.pause).await;
            if let Some(r) = &done {
                r.as_ref().map_err(|e| e.to_string())?;
            }
            only(env, &["dyn"], &[]).await.map(|()| done.is_some())
        })
        .await;
        assert_swept(concat!($what, " close"), &report, true);
    };
}

/// The cache and the provider on a service with one instance (another client's).
pub(super) async fn service_cache_and_provider(pause: conformance::sweep::Pause) {
    let env = Env::new("discovery-cache", pause).await;
    let env = &env;
    let theirs = ServiceDiscovery::builder(env.observer.clone(), &env.path)
        .this_instance(dynamic(1))
        .start()
        .await
        .unwrap();
    let d = &ServiceDiscovery::builder(env.c.clone(), &env.path)
        .start()
        .await
        .unwrap();
    sweep_follower!(env, d, "ServiceCache", service_cache, instances);
    sweep_follower!(env, d, "ServiceProvider", provider, all_instances);
    theirs.close().await.unwrap();
}

/// A started cache or provider had loaded the one instance.
fn loaded(done: &Option<Result<usize, RecipeError>>) -> Result<(), String> {
    match done {
        None | Some(Ok(1)) => Ok(()),
        Some(other) => Err(format!("started with {other:?} instances")),
    }
}
