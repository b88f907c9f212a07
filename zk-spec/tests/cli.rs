//! The `zk-spec` binary against a real server: the tree, the summary, the exit code, JSON
//! and JUnit output.

use std::process::Command;

use zk_testkit::shared_standalone;

fn zk_spec(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_zk-spec"))
        .args(args)
        .output()
        .expect("run zk-spec");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn passing_checks_exit_0_with_a_tree_and_a_summary() {
    let target = shared_standalone().connect_string();
    let (code, out) = zk_spec(&[&target, "--check", "ops.create"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("2. Operations and their error codes [ops]"),
        "{out}"
    );
    assert!(out.contains("\u{2714} ops.create.node-exists"), "{out}");
    assert!(
        out.contains("11 checks, 11 passed, 0 failed, 0 skipped in"),
        "{out}"
    );
}

#[test]
fn a_failing_check_exits_1_and_names_the_bug_with_frames_in_verbose_mode() {
    let target = shared_standalone().connect_string();
    let junit = std::env::temp_dir().join(format!("zk-spec-cli-{}.xml", std::process::id()));
    let (code, out) = zk_spec(&[
        &target,
        "--check",
        "multi.create2",
        "-v",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("known bug: ZOOKEEPER-4026"), "{out}");
    assert!(
        out.contains("   > c1 0000002d"),
        "the connect frame in hex: {out}"
    );
    assert!(out.contains("1 failed (1 known server bug)"), "{out}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testsuite name=\"multi\" tests=\"1\" failures=\"1\""),
        "{xml}"
    );
    let _ = std::fs::remove_file(junit);
}

#[test]
fn json_output_and_usage_errors() {
    let target = shared_standalone().connect_string();
    let (code, out) = zk_spec(&[&target, "--area", "ordering", "--json"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with('{') && out.trim_end().ends_with('}'),
        "{out}"
    );
    assert!(
        out.contains(r#""id":"ordering.replies-in-order","area":"ordering""#),
        "{out}"
    );
    assert!(out.contains(r#""failed":0"#), "{out}");
    assert_eq!(zk_spec(&[&target, "--area", "nope"]).0, 2);
    assert_eq!(zk_spec(&[&target, "--check", "no.such.check"]).0, 2);
    assert_eq!(
        zk_spec(&["127.0.0.1:1", "--check", "ops.create"]).0,
        2,
        "nothing listens"
    );
}
