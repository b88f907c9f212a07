//! Finding (and, on a fresh machine, installing) ZooKeeper and Java.
//!
//! The harness runs Debian's `zookeeper` package (3.8.0): jars in `/usr/share/java`, Java from
//! `default-jre`. When the jars are missing, [`ensure_installed`] says so on stderr
//! ([`INSTALL_NOTICE`]), then runs `apt-get update && apt-get install -y zookeeper` once per
//! process.
//!
//! Environment overrides:
//! - `ZK_TESTKIT_CLASSPATH`: use this Java classpath instead of the Debian jars
//!   (nothing is installed then);
//! - `ZK_TESTKIT_JAVA`: the `java` binary (default: `$JAVA_HOME/bin/java`, else `java` on
//!   `PATH`).

use std::{
    env,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::OnceLock,
};

use crate::{sys, HarnessError, Result};

/// Where Debian puts the jars.
pub const JAR_DIR: &str = "/usr/share/java";

/// The jars the server needs, found by trial: the server itself, its jute records, the
/// slf4j API, Dropwizard metrics (the default metrics provider) and snappy (snapshot
/// compression classes are loaded at startup). Netty, Jetty, Jackson, jline and commons-* are
/// not needed with `admin.enableServer=false` and the default NIO connection factory.
pub const REQUIRED_JARS: &[&str] = &[
    "zookeeper.jar",
    "zookeeper-jute.jar",
    "slf4j-api.jar",
    "metrics-core.jar",
    "snappy-java.jar",
];

/// What the Netty connection factory needs on top of [`REQUIRED_JARS`], for a secure client
/// port (the JDK's TLS; netty-tcnative is not needed).
pub const TLS_JARS: &[&str] = &[
    "netty-handler.jar",
    "netty-common.jar",
    "netty-buffer.jar",
    "netty-transport.jar",
    "netty-codec.jar",
    "netty-resolver.jar",
    "netty-transport-native-epoll.jar",
    "netty-transport-native-unix-common.jar",
];

/// slf4j bindings in order of preference: `simple` writes readable lines to stderr (which the
/// harness sends to the server log), `jdk14` does too, `nop` at least silences the warning.
pub const LOG_BINDINGS: &[&str] = &["slf4j-simple.jar", "slf4j-jdk14.jar", "slf4j-nop.jar"];

/// What [`ensure_installed`] prints (to stderr) before it installs anything.
pub const INSTALL_NOTICE: &str = "zk-testkit: ZooKeeper is not installed (jars missing from \
/usr/share/java). Installing Debian's `zookeeper` package (ZooKeeper 3.8 and a Java runtime, \
about 45 packages on a fresh Debian) with `apt-get update && apt-get install zookeeper`, as root or \
with `sudo -n`, to run real servers for the tests. Set ZK_TESTKIT_CLASSPATH to use a \
ZooKeeper of your own instead.";

/// How to run the ZooKeeper server on this machine.
#[derive(Debug, Clone)]
pub struct Installation {
    /// The `java` executable.
    pub java: PathBuf,
    /// The classpath for `org.apache.zookeeper.server.quorum.QuorumPeerMain`.
    pub classpath: String,
}

/// Makes sure ZooKeeper and Java are present, installing the Debian package if needed.
///
/// Runs at most once per process; later calls return the first outcome.
///
/// ```no_run
/// let install = zk_testkit::ensure_installed().expect("zookeeper");
/// println!("java: {}, classpath: {}", install.java.display(), install.classpath);
/// ```
pub fn ensure_installed() -> Result<&'static Installation> {
    static INSTALL: OnceLock<std::result::Result<Installation, String>> = OnceLock::new();
    INSTALL
        .get_or_init(locate_or_install)
        .as_ref()
        .map_err(|e| HarnessError::Install(e.clone()))
}

fn locate_or_install() -> std::result::Result<Installation, String> {
    if let Ok(classpath) = env::var("ZK_TESTKIT_CLASSPATH") {
        let java = find_java().ok_or("ZK_TESTKIT_CLASSPATH is set but no `java` was found")?;
        return Ok(Installation { java, classpath });
    }
    if missing_jars(Path::new(JAR_DIR)).is_empty() && find_java().is_some() {
        return locate(Path::new(JAR_DIR));
    }
    // Nothing is installed without saying so first: what, why, and how.
    eprintln!("{INSTALL_NOTICE}");
    apt_install(&["zookeeper"])
        .map_err(|e| format!("ZooKeeper jars are missing from {JAR_DIR} and {e}"))?;
    locate(Path::new(JAR_DIR))
}

fn locate(dir: &Path) -> std::result::Result<Installation, String> {
    let missing = missing_jars(dir);
    if !missing.is_empty() {
        return Err(format!(
            "jars missing from {} after installing the `zookeeper` package: {}",
            dir.display(),
            missing.join(", ")
        ));
    }
    let java = find_java()
        .ok_or("no `java` executable (install default-jre-headless, or set ZK_TESTKIT_JAVA)")?;
    Ok(Installation {
        java,
        classpath: classpath_in(dir),
    })
}

fn missing_jars(dir: &Path) -> Vec<&'static str> {
    REQUIRED_JARS
        .iter()
        .copied()
        .filter(|j| !dir.join(j).is_file())
        .collect()
}

/// The classpath built from the jars in `dir`.
pub fn classpath_in(dir: &Path) -> String {
    let binding = LOG_BINDINGS.iter().find(|b| dir.join(b).is_file());
    REQUIRED_JARS
        .iter()
        .chain(binding)
        .map(|j| dir.join(j).display().to_string())
        .collect::<Vec<_>>()
        .join(":")
}

fn find_java() -> Option<PathBuf> {
    if let Some(java) = env::var_os("ZK_TESTKIT_JAVA") {
        return Some(PathBuf::from(java));
    }
    if let Some(home) = env::var_os("JAVA_HOME") {
        let java = Path::new(&home).join("bin/java");
        if java.is_file() {
            return Some(java);
        }
    }
    env::split_paths(&env::var_os("PATH")?)
        .map(|dir| dir.join("java"))
        .find(|java| java.is_file())
}

/// `apt-get update && apt-get install -y PACKAGES` (through `sudo -n` unless root).
pub(crate) fn apt_install(packages: &[&str]) -> std::result::Result<(), String> {
    let update = ["apt-get", "-o", "DPkg::Lock::Timeout=600", "update"];
    let mut install = vec![
        "apt-get",
        "-o",
        "DPkg::Lock::Timeout=600",
        "install",
        "-y",
        "--no-install-recommends",
    ];
    install.extend_from_slice(packages);
    for step in [&update[..], &install[..]] {
        let mut cmd = if sys::is_root() {
            Command::new(step[0])
        } else {
            let mut sudo = Command::new("sudo");
            sudo.arg("-n").arg(step[0]);
            sudo
        };
        cmd.args(&step[1..])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null());
        let output = cmd
            .output()
            .map_err(|e| format!("cannot run `{}`: {e}", step.join(" ")))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(format!(
                "`{}` failed ({}):\n{}",
                step.join(" "),
                output.status,
                stderr.trim_end()
            ));
        }
    }
    Ok(())
}
