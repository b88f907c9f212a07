//! `zk services` and `zk register` against a real ZooKeeper (the test kit's shared server),
//! beside instances registered by the library's ServiceDiscovery (Curator's layout and JSON).

mod support;

use support::{admin, assert_code, json, server, stdout, unique, zk, ZK};
use zk_recipes::{ServiceDiscovery, ServiceInstance, ServiceInstanceBuilder, UriSpec};

/// `register NAME --id ID --address ADDRESS --port PORT --base BASE`.
fn register(name: &str, id: &str, address: &str, port: &str, base: &str) -> Vec<String> {
    let args = [
        "register",
        name,
        "--id",
        id,
        "--address",
        address,
        "--port",
        port,
    ];
    let mut args: Vec<String> = args.map(String::from).to_vec();
    args.extend(["--base".to_owned(), base.to_owned()]);
    args
}

fn instance(name: &str, id: &str) -> ServiceInstanceBuilder {
    ServiceInstance::builder(name).id(id).address("10.0.0.5")
}

/// Instances registered by the library are listed with every field and their rendered URI,
/// as JSON and as text; a missing base is an empty list.
#[tokio::test]
async fn services_lists_names_instances_and_uris() {
    let base = unique("services");
    let discovery = ServiceDiscovery::builder(admin().await, &base)
        .start()
        .await
        .unwrap();
    let spec = UriSpec::parse("{scheme}://{address}:{port}/x").unwrap();
    let a = instance("api", "a1").port(8080).uri_spec(spec).build();
    let b = instance("api", "a2").port(8081).ssl_port(8443).build();
    let c = instance("billing", "b1").port(9000).build();
    for i in [&a, &b, &c] {
        discovery.register(i).await.unwrap();
    }

    let doc = json(&zk(["--json", "services", &base]).await);
    assert_eq!(doc["base"], base.as_str());
    let services = doc["services"].as_array().unwrap();
    let names: Vec<&str> = services
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["api", "billing"]);
    let api = services[0]["instances"].as_array().unwrap();
    assert_eq!(api.len(), 2);
    assert_eq!(api[0]["id"], "a1");
    assert_eq!(api[0]["address"], "10.0.0.5");
    assert_eq!(api[0]["port"], 8080);
    assert!(api[0]["sslPort"].is_null());
    assert_eq!(api[0]["uri"], "http://10.0.0.5:8080/x");
    assert_eq!(api[0]["serviceType"], "DYNAMIC");
    assert_eq!(api[1]["id"], "a2");
    assert_eq!(api[1]["sslPort"], 8443);
    assert!(api[1]["uri"].is_null());

    let o = zk(["services", &base]).await;
    assert_code(&o, 0);
    let text = stdout(&o);
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "api",
            "  a1 10.0.0.5:8080 http://10.0.0.5:8080/x",
            "  a2 10.0.0.5:8081 ssl 8443",
            "billing",
            "  b1 10.0.0.5:9000",
        ],
        "{text}"
    );
    discovery.close().await.unwrap();

    let empty = json(&zk(["--json", "services", &format!("{base}-none")]).await);
    assert_eq!(empty["services"].as_array().unwrap().len(), 0);
}

/// `zk register` keeps the instance registered (found by the library, JSON and URI as
/// given) exactly while CMD runs, passes CMD's status, and leaves nothing behind.
#[tokio::test]
async fn register_holds_the_instance_while_cmd_runs() {
    let base = unique("register");
    // CMD lists the services itself, while registered.
    let list = format!("\"{ZK}\" --server {} --json services {base}", server());
    let mut args = register("web", "w1", "192.168.1.9", "8088", &base);
    args.extend(
        [
            "--uri-spec",
            "{scheme}://{address}:{port}",
            "--",
            "sh",
            "-c",
        ]
        .map(String::from),
    );
    args.push(format!(
        "echo \"$ZK_SERVICE_NAME $ZK_SERVICE_ID\"; {list}; exit 3"
    ));
    let o = zk(args).await;
    assert_code(&o, 3);
    let out = stdout(&o);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("web w1"), "{out}");
    let doc: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    let web = &doc["services"][0];
    assert_eq!(web["name"], "web");
    assert_eq!(web["instances"][0]["id"], "w1");
    assert_eq!(web["instances"][0]["address"], "192.168.1.9");
    assert_eq!(web["instances"][0]["port"], 8088);
    assert_eq!(web["instances"][0]["uri"], "http://192.168.1.9:8088");

    // Gone once CMD exited; the znode was ephemeral in Curator's JSON.
    let c = admin().await;
    let discovery = ServiceDiscovery::builder(c.clone(), &base)
        .start()
        .await
        .unwrap();
    assert!(discovery
        .query_for_instances("web")
        .await
        .unwrap()
        .is_empty());
    let doc = json(&zk(["--json", "services", &base]).await);
    let left: Vec<_> = doc["services"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| !s["instances"].as_array().unwrap().is_empty())
        .collect();
    assert!(left.is_empty(), "{doc}");
}

/// The znode is an ephemeral Curator reads: DYNAMIC, at BASE/NAME/ID.
#[tokio::test]
async fn register_writes_an_ephemeral_curator_instance() {
    let base = unique("register-eph");
    let probe = format!("\"{ZK}\" --server {} --json stat {base}/db/d1", server());
    let mut args = register("db", "d1", "h", "5432", &base);
    args.extend(["--", "sh", "-c", &probe].map(String::from));
    let o = zk(args).await;
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_code(&o, 0);
    let owner = doc["ephemeralOwner"].as_i64();
    assert!(owner.is_some_and(|o| o != 0), "{doc}");
    let c = admin().await;
    assert!(c.exists(&format!("{base}/db/d1")).await.unwrap().is_none());
    assert_code(
        &zk([
            "register",
            "db",
            "--id",
            "d1",
            "--address",
            "h",
            "--port",
            "1",
        ])
        .await,
        2,
    );
}
