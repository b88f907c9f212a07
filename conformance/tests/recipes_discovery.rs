//! ServiceDiscovery against a real ZooKeeper 3.8 server, and beside Curator 5.4's
//! curator-x-discovery (Java 17, Debian's libcurator-discovery-java) on the same base path:
//! register, update, unregister and query each kind of instance; a reconnect within the
//! session leaves our instance alone (Curator's deletes and re-creates it), an expiry
//! re-registers it; the cache and provider follow changes; Curator finds ours and we find
//! Curator's, URIs rendered alike. Side by side with a Curator process, a reconnect of both
//! within their sessions makes a watcher see Curator's instance deleted and created again,
//! and nothing of ours. The recipe's lifecycle: start registers, status, close and drop.

mod recipes_support;

use std::{sync::OnceLock, time::Duration};

use conformance::peers::{self, JavaProgram};
use recipes_support::{
    children, client, cut_and_reconnect, eventually, expire_and_renew, peer::Peer, proxied,
    proxied_for, shared, soon, unique, OpCode, Proxy,
};
use zk_recipes::{
    CacheStatus, DiscoveryStatus, LostReason, ProviderStrategy, RecipeError, ServiceDiscovery,
    ServiceInstance, ServiceType, UriSpec,
};

fn instance(name: &str, id: &str, port: u16) -> ServiceInstance {
    ServiceInstance::builder(name)
        .id(id)
        .address("10.0.0.7")
        .port(port)
        .uri_spec(UriSpec::parse("{scheme}://{address}:{port}").unwrap())
        .build()
}

fn ids(instances: &[ServiceInstance]) -> Vec<String> {
    instances.iter().map(|i| i.id().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_kind_registers_updates_unregisters_and_closes_as_it_should() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let base = unique("discovery-kinds");
    let d = ServiceDiscovery::builder(c.clone(), &base)
        .start()
        .await
        .unwrap();
    let dynamic = instance("api", "dyn", 1);
    let stat = ServiceInstance::builder("api")
        .id("static")
        .service_type(ServiceType::Static)
        .build();
    let perm = ServiceInstance::builder("api")
        .id("perm")
        .service_type(ServiceType::Permanent)
        .build();
    let seq = ServiceInstance::builder("api")
        .id("seq")
        .service_type(ServiceType::DynamicSequential)
        .build();
    for i in [&dynamic, &stat, &perm, &seq] {
        d.register(i).await.unwrap();
    }
    let names = children(&admin, &format!("{base}/api")).await;
    assert_eq!(names.len(), 4, "{names:?}");
    let seq_name = names.iter().find(|n| n.starts_with("seq")).unwrap().clone();
    assert_eq!(seq_name.len(), 3 + 10, "the id and ten digits: {seq_name}");
    let (_, s) = admin
        .exists(&format!("{base}/api/dyn"))
        .await
        .unwrap()
        .map(|s| ((), s))
        .unwrap();
    assert_ne!(s.ephemeral_owner, 0, "DYNAMIC is ephemeral");
    let (_, s) = admin
        .exists(&format!("{base}/api/static"))
        .await
        .unwrap()
        .map(|s| ((), s))
        .unwrap();
    assert_eq!(s.ephemeral_owner, 0, "STATIC is persistent");
    let (data, _) = admin.get_data(&format!("{base}/api/dyn")).await.unwrap();
    assert_eq!(data, dynamic.to_json().as_bytes());

    assert_eq!(d.query_for_names().await.unwrap(), ["api"]);
    let mut found = ids(&d.query_for_instances("api").await.unwrap());
    found.sort();
    assert_eq!(found, ["dyn", "perm", "seq", "static"]);
    assert_eq!(
        d.query_for_instance("api", "dyn").await.unwrap(),
        Some(dynamic.clone())
    );
    assert_eq!(d.query_for_instance("api", "nope").await.unwrap(), None);
    assert!(d.query_for_instances("none").await.unwrap().is_empty());

    // Updates reach the node, the sequential one too (Curator's misses it: CURATOR-304).
    let moved = instance("api", "dyn", 2);
    d.update(&moved).await.unwrap();
    assert_eq!(
        d.query_for_instance("api", "dyn").await.unwrap(),
        Some(moved)
    );
    let seq2 = ServiceInstance::builder("api")
        .id("seq")
        .port(9)
        .service_type(ServiceType::DynamicSequential)
        .build();
    d.update(&seq2).await.unwrap();
    let (data, _) = admin
        .get_data(&format!("{base}/api/{seq_name}"))
        .await
        .unwrap();
    assert_eq!(ServiceInstance::from_json(&data).unwrap().port(), Some(9));
    assert!(matches!(
        d.update(&instance("api", "stranger", 1)).await,
        Err(RecipeError::InvalidArgument(_))
    ));
    d.unregister(&seq2).await.unwrap();
    assert!(!children(&admin, &format!("{base}/api"))
        .await
        .contains(&seq_name));

    // Close removes all but the PERMANENT one (Curator removes it too: CURATOR-94).
    d.close().await.unwrap();
    assert_eq!(children(&admin, &format!("{base}/api")).await, ["perm"]);
}

/// The recipes' lifecycle: start returns once the builder's instance is registered, status
/// says Ready then how it ended (closed, or the client's end), close and drop unregister.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_discovery_starts_registered_reports_its_status_and_ends() {
    let (c, admin) = (client(&shared()).await, client(&shared()).await);
    let base = unique("discovery-lifecycle");
    let stat = ServiceInstance::builder("api")
        .id("static")
        .service_type(ServiceType::Static)
        .build();
    let d = ServiceDiscovery::builder(c.clone(), &base)
        .this_instance(instance("api", "me", 80))
        .this_instance(stat.clone())
        .start()
        .await
        .unwrap();
    // Registered by the time start returns.
    assert_eq!(
        children(&admin, &format!("{base}/api")).await,
        ["me", "static"]
    );
    let mut status = d.status();
    assert_eq!(status.get(), DiscoveryStatus::Ready);
    // Registering the same id and type again writes over it: the same node.
    let (_, before) = admin.get_data(&format!("{base}/api/me")).await.unwrap();
    d.register(&instance("api", "me", 81)).await.unwrap();
    let (data, after) = admin.get_data(&format!("{base}/api/me")).await.unwrap();
    assert_eq!(after.czxid, before.czxid, "deleted and created again");
    assert_eq!(ServiceInstance::from_json(&data).unwrap().port(), Some(81));
    d.close().await.unwrap();
    assert_eq!(status.changed().await.unwrap(), DiscoveryStatus::Closed);
    assert!(children(&admin, &format!("{base}/api")).await.is_empty());

    // Dropped: both kinds unregistered in the background.
    let d = ServiceDiscovery::builder(c.clone(), &base)
        .this_instance(instance("api", "me", 80))
        .this_instance(stat)
        .start()
        .await
        .unwrap();
    let mut status = d.status();
    drop(d);
    assert_eq!(status.changed().await.unwrap(), DiscoveryStatus::Closed);
    eventually("the dropped discovery's instances go", || {
        let (admin, dir) = (admin.clone(), format!("{base}/api"));
        async move { children(&admin, &dir).await.is_empty() }
    })
    .await;

    // The client's end is the discovery's.
    let d = ServiceDiscovery::builder(c.clone(), &base)
        .this_instance(instance("api", "me", 80))
        .start()
        .await
        .unwrap();
    let provider = d.provider("api").start().await.unwrap();
    assert_eq!(provider.status().get(), CacheStatus::Initialized);
    let mut status = d.status();
    c.close().await.unwrap();
    let ended = soon("the discovery ends", status.wait_for(|s| s.has_ended())).await;
    assert_eq!(ended.unwrap(), DiscoveryStatus::Ended(LostReason::Closed));
    assert!(matches!(
        d.register(&instance("api", "late", 1)).await,
        Err(RecipeError::Lost(LostReason::Closed))
    ));
    assert!(matches!(
        ServiceDiscovery::builder(c.clone(), &base).start().await,
        Err(RecipeError::Lost(_))
    ));
    let mut p = provider.status();
    let ended = soon("the provider ends", p.wait_for(|s| s.has_ended())).await;
    assert!(matches!(ended.unwrap(), CacheStatus::Ended(_)));
    assert!(children(&admin, &format!("{base}/api")).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_leaves_the_instance_alone_and_an_expiry_registers_it_again() {
    let (proxy, c) = proxied().await;
    let watcher = client(&shared()).await;
    let base = unique("discovery-reconnect");
    let d = ServiceDiscovery::builder(c.clone(), &base)
        .start()
        .await
        .unwrap();
    d.register(&instance("api", "me", 80)).await.unwrap();
    let wd = ServiceDiscovery::builder(watcher, &base)
        .start()
        .await
        .unwrap();
    let cache = wd.service_cache("api").start().await.unwrap();
    assert_eq!(ids(&cache.instances()), ["me"]);
    let czxid = |c: &zk_session::Client| {
        let (c, path) = (c.clone(), format!("{base}/api/me"));
        async move { c.exists(&path).await.unwrap().map(|s| s.czxid) }
    };
    let before = czxid(&c).await;

    cut_and_reconnect(&proxy, &c).await;
    // Nothing changed for a watcher: no event within a while, the same node.
    let quiet = tokio::time::timeout(Duration::from_millis(1500), cache.changed()).await;
    assert!(quiet.is_err(), "the watcher saw a change on a reconnect");
    assert_eq!(
        czxid(&c).await,
        before,
        "the node was deleted and re-created"
    );

    expire_and_renew(&proxy, &c).await;
    soon("the instance is registered again", async {
        loop {
            if ids(&cache.instances()) == ["me"] && czxid(&c).await != before {
                return;
            }
            let _ = cache.changed().await;
        }
    })
    .await;
    cache.close().await.unwrap();
    d.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_follows_the_cache_and_skips_instances_in_error() {
    let (c, other) = (client(&shared()).await, client(&shared()).await);
    let base = unique("discovery-provider");
    let d = ServiceDiscovery::builder(c, &base).start().await.unwrap();
    let o = ServiceDiscovery::builder(other, &base)
        .start()
        .await
        .unwrap();
    for (id, port) in [("a", 1), ("b", 2)] {
        d.register(&instance("api", id, port)).await.unwrap();
    }
    let provider = o
        .provider("api")
        .strategy(ProviderStrategy::RoundRobin)
        .start()
        .await
        .unwrap();
    let picks: Vec<String> = (0..4)
        .map(|_| provider.get_instance().unwrap().id().to_owned())
        .collect();
    assert_eq!(picks, ["a", "b", "a", "b"]);
    let a = provider
        .all_instances()
        .iter()
        .find(|i| i.id() == "a")
        .cloned()
        .unwrap();
    provider.note_error(&a);
    provider.note_error(&a);
    assert!((0..4).all(|_| provider.get_instance().unwrap().id() == "b"));
    d.register(&instance("api", "c", 3)).await.unwrap();
    soon("the provider sees c", async {
        while !provider.all_instances().iter().any(|i| i.id() == "c") {
            provider.cache().changed().await.unwrap();
        }
    })
    .await;
    d.close().await.unwrap();
    soon("the provider sees them go", async {
        while !provider.all_instances().is_empty() {
            provider.cache().changed().await.unwrap();
        }
    })
    .await;
    assert!(provider.get_instance().is_none());
    provider.close().await.unwrap();
}

fn curator() -> &'static JavaProgram {
    static PROGRAM: OnceLock<JavaProgram> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let jars: Vec<&str> = peers::CURATOR_JARS
            .iter()
            .chain(peers::DISCOVERY_JARS)
            .copied()
            .collect();
        JavaProgram::compile(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("java/CuratorDiscovery.java"),
            &peers::process_dir(&std::env::temp_dir(), "zk-recipes-discovery"),
            &jars,
            "libcurator-discovery-java (scripts/test does)",
        )
        .unwrap_or_else(|e| panic!("Curator interop cannot run: {e}"))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curator_finds_ours_and_we_find_curators() {
    let base = unique("discovery-interop");
    let mut cmd = curator().command();
    cmd.args([shared(), base.clone()]);
    let mut peer = Peer::start("Curator", cmd).await;
    let (proxy, c) = proxied().await;
    let d = ServiceDiscovery::builder(c.clone(), &base)
        .start()
        .await
        .unwrap();

    // Curator registers; we read every field as Curator wrote it.
    peer.send("register api java-1 10.0.0.9 8080").await;
    peer.expect("REGISTERED").await;
    let theirs = d
        .query_for_instance("api", "java-1")
        .await
        .unwrap()
        .expect("Curator's instance");
    assert_eq!(
        (
            theirs.name(),
            theirs.address(),
            theirs.port(),
            theirs.ssl_port()
        ),
        ("api", Some("10.0.0.9"), Some(8080), None)
    );
    assert_eq!(theirs.service_type(), ServiceType::Dynamic);
    let uri = theirs
        .uri_spec()
        .unwrap()
        .render(&theirs, &Default::default());
    assert_eq!(uri, "http://10.0.0.9:8080");

    // We register; Curator's queries, provider and cache find ours, its URI the same.
    d.register(&instance("api", "rust-1", 9090)).await.unwrap();
    peer.send("instances api").await;
    assert_eq!(
        peer.answer("INSTANCES").await,
        "java-1=http://10.0.0.9:8080;rust-1=http://10.0.0.7:9090"
    );
    peer.send("cache api").await;
    assert_eq!(peer.answer("CACHE-STARTED").await, "java-1,rust-1");
    let mut providers = Vec::new();
    for _ in 0..2 {
        peer.send("provide api").await;
        providers.push(peer.answer("PROVIDED").await);
    }
    providers.sort();
    assert!(
        providers.iter().all(|p| p == "java-1" || p == "rust-1"),
        "{providers:?}"
    );

    // Our session ends (expired while cut off): Curator's cache drops ours; our
    // re-registration brings it back.
    expire_and_renew(&proxy, &c).await;
    eventually("Curator's cache saw ours leave and come back", || {
        let lines = peer.stdout.snapshot();
        async move {
            let caches: Vec<&String> = lines.iter().filter(|l| l.starts_with("CACHE ")).collect();
            let gone = caches.iter().position(|l| l.as_str() == "CACHE java-1");
            gone.is_some_and(|g| {
                caches[g..]
                    .iter()
                    .any(|l| l.as_str() == "CACHE java-1,rust-1")
            })
        }
    })
    .await;
    d.close().await.unwrap();
    peer.finish().await;
}

/// Deleted and created events per path, as a persistent recursive watch saw them.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(zk_session::EventType, String)>>>;

fn count(seen: &Seen, kind: zk_session::EventType, path: &str) -> usize {
    let seen = seen.lock().unwrap();
    seen.iter().filter(|(k, p)| *k == kind && p == path).count()
}

/// Issue 31's flap, beside Curator: both connections cut and re-made within the session.
/// Curator deletes its instance and creates it again (on the same session), so a watcher
/// sees it leave and come back; ours is left alone: no event at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_flaps_curators_instance_and_not_ours() {
    use zk_session::{AddWatchMode, EventType};
    let base = unique("discovery-flap");
    let theirs_proxy = Proxy::start(conformance::shared_standalone().client_addr()).await;
    let mut cmd = curator().command();
    cmd.args([theirs_proxy.connect_string(), base.clone()]);
    let mut peer = Peer::start("Curator", cmd).await;
    peer.send("register api java-1 10.0.0.9 8080").await;
    peer.expect("REGISTERED").await;
    let (ours_proxy, c) = proxied_for(Duration::from_secs(20)).await;
    let d = ServiceDiscovery::builder(c.clone(), &base)
        .this_instance(instance("api", "rust-1", 9090))
        .start()
        .await
        .unwrap();
    let (java, rust) = (format!("{base}/api/java-1"), format!("{base}/api/rust-1"));
    let watcher = client(&shared()).await;
    let stat = |path: String| {
        let watcher = watcher.clone();
        async move { watcher.exists(&path).await.unwrap().expect(&path) }
    };
    let (java_before, rust_before) = (stat(java.clone()).await, stat(rust.clone()).await);
    let mut events = watcher
        .add_watch(&base, AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    let seen = Seen::default();
    let collector = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Some(Ok(e)) = events.next().await {
                seen.lock()
                    .unwrap()
                    .push((e.event_type(), e.path().to_owned()));
            }
        })
    };

    let creates = ours_proxy.count(OpCode::Create2);
    theirs_proxy.cut_connections();
    cut_and_reconnect(&ours_proxy, &c).await;
    eventually("Curator's instance is deleted and created again", || {
        let seen = seen.clone();
        let java = java.clone();
        async move {
            count(&seen, EventType::NodeDeleted, &java) >= 1
                && count(&seen, EventType::NodeCreated, &java) >= 1
        }
    })
    .await;
    // Ours has checked its node since the reconnect (a create answered NodeExists)...
    eventually("our instance was checked after the reconnect", || async {
        ours_proxy.count(OpCode::Create2) > creates
    })
    .await;
    // ...and every event before a marker written now has reached the watcher.
    let marker = format!("{base}/marker");
    watcher
        .create(&marker, b"", zk_session::CreateOptions::ephemeral())
        .await
        .unwrap();
    eventually("the marker's event", || {
        let (seen, marker) = (seen.clone(), marker.clone());
        async move { count(&seen, EventType::NodeCreated, &marker) == 1 }
    })
    .await;

    let java_after = stat(java.clone()).await;
    assert_eq!(
        java_after.ephemeral_owner, java_before.ephemeral_owner,
        "Curator's session survived the cut"
    );
    assert_ne!(java_after.czxid, java_before.czxid, "and its node is new");
    let rust_after = stat(rust.clone()).await;
    assert_eq!(
        (rust_after.ephemeral_owner, rust_after.czxid),
        (rust_before.ephemeral_owner, rust_before.czxid),
        "ours: the same session, the same node"
    );
    let flaps = |path: &str| {
        (
            count(&seen, EventType::NodeDeleted, path),
            count(&seen, EventType::NodeCreated, path),
        )
    };
    let (java_flaps, rust_flaps) = (flaps(&java), flaps(&rust));
    println!("deleted/created on a reconnect: Curator's {java_flaps:?}, ours {rust_flaps:?}");
    assert_eq!(rust_flaps, (0, 0), "a watcher saw ours leave or come back");
    let events_on_ours = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, p)| *p == rust)
        .count();
    assert_eq!(
        events_on_ours,
        0,
        "any event on ours: {:?}",
        seen.lock().unwrap()
    );
    collector.abort();
    d.close().await.unwrap();
    peer.finish().await;
}
