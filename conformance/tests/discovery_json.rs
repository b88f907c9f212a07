//! Our service-instance JSON beside Curator 5.4's own `JsonInstanceSerializer`, run from the
//! installed jars: the bytes Curator writes are the bytes we write for the same instance, we
//! read every field of Curator's, and Curator reads ours and renders the same URI.

use std::{collections::HashMap, path::Path, time::Duration};

use conformance::peers::{self, JavaProgram};
use zk_recipes::{ServiceInstance, ServiceType, UriSpec};

fn curator() -> JavaProgram {
    let jars: Vec<&str> = peers::CURATOR_JARS
        .iter()
        .chain(peers::DISCOVERY_JARS)
        .copied()
        .collect();
    JavaProgram::compile(
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/java/CuratorDiscoveryJson.java"
        )),
        &peers::process_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "discovery-json"),
        &jars,
        "libcurator-discovery-java",
    )
    .unwrap()
}

fn run(peer: &JavaProgram, args: &[&str]) -> Vec<String> {
    let mut cmd = peer.command();
    cmd.args(args);
    peers::run_child(&mut cmd, Duration::from_secs(60))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The instances CuratorDiscoveryJson.java writes, built with our builder.
fn ours() -> Vec<ServiceInstance> {
    vec![
        ServiceInstance::builder("api")
            .id("7f1c2a9e-3b4d-4e5f-8a6b-0c1d2e3f4a5b")
            .address("10.0.0.5")
            .port(8080)
            .registration_time_utc(1_700_000_000_000)
            .uri_spec(UriSpec::parse("{scheme}://{address}:{port}").unwrap())
            .build(),
        ServiceInstance::builder("billing")
            .id("b-1")
            .address("10.0.0.6")
            .ssl_port(8443)
            .registration_time_utc(5)
            .service_type(ServiceType::Static)
            .payload_json(r#"{"@class":"java.util.HashMap","zone":"eu\u001f/é"}"#)
            .unwrap()
            .uri_spec(UriSpec::parse("{scheme}://{address}:{ssl-port}/x{[}{]}").unwrap())
            .build(),
        ServiceInstance::builder("quote\"d")
            .id("c")
            .registration_time_utc(0)
            .payload_json(r#""text payload""#)
            .unwrap()
            .build(),
    ]
}

#[test]
fn curator_and_we_write_the_same_bytes_and_read_each_other() {
    let peer = curator();
    let written = run(&peer, &["write"]);
    let expected = ours();
    assert_eq!(written.len(), expected.len(), "{written:?}");
    for (theirs, mine) in written.iter().zip(&expected) {
        assert_eq!(&mine.to_json(), theirs, "our bytes differ from Curator's");
        let read = ServiceInstance::from_json(theirs.as_bytes()).unwrap();
        assert_eq!(&read, mine, "we read Curator's instance differently");
    }

    // Curator reads ours (an explicit `enabled` too) and renders the URI we render.
    let mut mine = ours();
    mine.push(
        ServiceInstance::builder("web")
            .id("w")
            .address("h")
            .port(80)
            .registration_time_utc(7)
            .enabled(false)
            .service_type(ServiceType::Permanent)
            .uri_spec(UriSpec::parse("{scheme}://{address}:{port}/{name}/{id}").unwrap())
            .build(),
    );
    let file = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("discovery-json-{}.txt", std::process::id()));
    let text: Vec<String> = mine.iter().map(ServiceInstance::to_json).collect();
    std::fs::write(&file, text.join("\n") + "\n").unwrap();
    let read = run(&peer, &["read", file.to_str().unwrap()]);
    assert_eq!(read.len(), mine.len(), "{read:?}");
    for (line, i) in read.iter().zip(&mine) {
        let fields: Vec<&str> = line.split('|').collect();
        assert_eq!(
            fields.len(),
            10,
            "Curator could not read {}: {line}",
            i.to_json()
        );
        let opt = |v: Option<String>| v.unwrap_or_else(|| "null".to_owned());
        assert_eq!(fields[0], i.name());
        assert_eq!(fields[1], i.id());
        assert_eq!(fields[2], opt(i.address().map(str::to_owned)));
        assert_eq!(fields[3], opt(i.port().map(|p| p.to_string())));
        assert_eq!(fields[4], opt(i.ssl_port().map(|p| p.to_string())));
        assert_eq!(fields[5], i.registration_time_utc().to_string());
        assert_eq!(fields[6], i.service_type().as_str());
        assert_eq!(fields[7], i.is_enabled().to_string());
        let uri = i
            .uri_spec()
            .map(|s| s.render(i, &HashMap::new()))
            .unwrap_or_else(|| "-".to_owned());
        assert_eq!(fields[9], uri, "the URI Curator renders differs from ours");
    }
    let _ = std::fs::remove_file(file);
}

#[test]
fn what_curator_refuses_we_refuse() {
    let peer = curator();
    let bad = [
        r#"{"name":"a","serviceType":"dynamic"}"#,
        r#"{"name":"a","port":"eighty"}"#,
        r#"{"name":"a""#,
    ];
    let file = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("discovery-json-bad-{}.txt", std::process::id()));
    std::fs::write(&file, bad.join("\n") + "\n").unwrap();
    let read = run(&peer, &["read", file.to_str().unwrap()]);
    for (line, json) in read.iter().zip(bad) {
        assert!(line.starts_with("error "), "Curator read {json}: {line}");
        assert!(
            ServiceInstance::from_json(json.as_bytes()).is_err(),
            "we read {json}"
        );
    }
    assert_eq!(read.len(), bad.len());
    let _ = std::fs::remove_file(file);
}
