//! A real MIT Kerberos KDC for the GSSAPI tests: Debian's `krb5-kdc`, in a scratch directory
//! with its own `krb5.conf`, `kdc.conf` and database, on a free port of 127.0.0.1.
//!
//! [`Kdc::start`] installs the Debian packages when they are missing (see
//! [`ensure_kdc_installed`]), creates the realm with `kdb5_util create`, and runs `krb5kdc`
//! in the foreground, tied to the test process. Principals and keytabs come from
//! `kadmin.local`, tickets from `kinit`. [`shared_kdc`] is one KDC per test process.
//!
//! The client library in the test process finds the realm through `KRB5_CONFIG`, and its
//! tickets through `KRB5CCNAME`: [`Kdc::use_in_this_process`] sets both (a `DIR:` cache
//! collection, so that every principal `kinit`ed by a test keeps its own cache).

use std::{
    fs,
    net::{Ipv4Addr, SocketAddr, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Output, Stdio},
    sync::{Mutex, OnceLock},
    thread,
    time::{Duration, Instant},
};

use crate::{ports, scratch::ScratchDir, spawner::TiedCommand, HarnessError, Result};

/// The realm of every test KDC.
pub const REALM: &str = "ZK.TEST";

/// What the harness runs, and the Debian package each comes from.
pub const PROGRAMS: &[(&str, &str)] = &[
    ("/usr/sbin/krb5kdc", "krb5-kdc"),
    ("/usr/sbin/kdb5_util", "krb5-kdc"),
    ("/usr/sbin/kadmin.local", "krb5-admin-server"),
    ("/usr/bin/kinit", "krb5-user"),
];

/// A running KDC; dropping it kills `krb5kdc` and removes its files.
#[derive(Debug)]
pub struct Kdc {
    dir: ScratchDir,
    port: u16,
    proc: Mutex<Child>,
}

/// One KDC for the whole test process, already [used in this process](Kdc::use_in_this_process).
pub fn shared_kdc() -> &'static Kdc {
    static KDC: OnceLock<Kdc> = OnceLock::new();
    KDC.get_or_init(|| {
        let kdc = Kdc::start().expect("a Kerberos KDC");
        kdc.use_in_this_process();
        kdc
    })
}

impl Kdc {
    /// Creates the realm [`REALM`] and starts its KDC.
    pub fn start() -> Result<Kdc> {
        ensure_kdc_installed()?;
        let dir = ScratchDir::new("kdc")?;
        let port = ports::free_port()?;
        let kdc = Kdc {
            proc: Mutex::new(Self::create_and_run(dir.path(), port)?),
            dir,
            port,
        };
        kdc.wait_listening(Duration::from_secs(10))?;
        Ok(kdc)
    }

    fn create_and_run(dir: &Path, port: u16) -> Result<Child> {
        write(&dir.join("krb5.conf"), &krb5_conf(port))?;
        write(&dir.join("kdc.conf"), &kdc_conf(dir, port))?;
        fs::create_dir_all(dir.join("ccaches"))
            .map_err(|e| HarnessError::io("creating the cache collection", e))?;
        let mut create = Command::new("/usr/sbin/kdb5_util");
        create.args(["create", "-s", "-r", REALM, "-P", "test-master-key"]);
        run(with_env(&mut create, dir), "kdb5_util create")?;
        let mut cmd = TiedCommand::new("/usr/sbin/krb5kdc");
        // -n: foreground, so the test process owns it; logs go to kdc.log (kdc.conf).
        cmd.args(["-n", "-r", REALM]);
        with_env(&mut cmd, dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd.spawn()
            .map_err(|e| HarnessError::Kerberos(format!("starting krb5kdc: {e}")))
    }

    fn wait_listening(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = self.lock().try_wait() {
                return Err(self.failure(format!("krb5kdc exited ({status})")));
            }
            if Instant::now() > deadline {
                return Err(self.failure(format!("krb5kdc not listening on {addr}")));
            }
            thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Child> {
        self.proc.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn failure(&self, what: String) -> HarnessError {
        let log = fs::read_to_string(self.dir.path().join("kdc.log")).unwrap_or_default();
        HarnessError::Kerberos(format!("{what}\n--- kdc.log ---\n{log}"))
    }

    /// The realm's `krb5.conf` (the KDC on TCP, no DNS lookups for realms or KDCs).
    pub fn krb5_conf(&self) -> PathBuf {
        self.dir.path().join("krb5.conf")
    }

    /// The `DIR:` cache collection that [`kinit`](Self::kinit) fills.
    pub fn ccache_collection(&self) -> String {
        format!("DIR:{}", self.dir.path().join("ccaches").display())
    }

    /// A directory for the test's own files (keytabs), removed with the KDC.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Points this process's Kerberos library at this realm and its cache collection
    /// (`KRB5_CONFIG`, `KRB5CCNAME`). Call it before any thread uses Kerberos.
    pub fn use_in_this_process(&self) {
        std::env::set_var("KRB5_CONFIG", self.krb5_conf());
        std::env::set_var("KRB5CCNAME", self.ccache_collection());
    }

    /// `name@REALM`.
    pub fn principal(name: &str) -> String {
        format!("{name}@{REALM}")
    }

    /// Adds a principal with a random key (`addprinc -randkey`).
    pub fn add_principal(&self, name: &str) -> Result<()> {
        self.kadmin(&format!("addprinc -randkey {name}"))
    }

    /// Writes the principals' keys to a keytab (without changing them: `-norandkey`).
    pub fn keytab(&self, path: &Path, principals: &[&str]) -> Result<()> {
        for p in principals {
            self.kadmin(&format!("ktadd -k {} -norandkey {p}", path.display()))?;
        }
        Ok(())
    }

    /// Adds `name` and returns a keytab with its key, in the KDC's directory.
    pub fn principal_with_keytab(&self, name: &str) -> Result<PathBuf> {
        self.add_principal(name)?;
        let path = self
            .dir()
            .join(format!("{}.keytab", name.replace('/', "_")));
        self.keytab(&path, &[name])?;
        Ok(path)
    }

    /// Refuses tickets to `name` from now on (`modprinc -allow_tix`).
    pub fn disable(&self, name: &str) -> Result<()> {
        self.kadmin(&format!("modprinc -allow_tix {name}"))
    }

    /// `kinit -k -t keytab -l lifetime name` into the cache collection, as a user would
    /// (with the password; here the keytab stands in for it).
    pub fn kinit(&self, name: &str, keytab: &Path, lifetime: Duration) -> Result<()> {
        self.kinit_into(&self.ccache_collection(), name, keytab, lifetime)
    }

    /// [`kinit`](Self::kinit) into the ticket cache `ccache`, such as `FILE:/tmp/cc`.
    pub fn kinit_into(
        &self,
        ccache: &str,
        name: &str,
        keytab: &Path,
        lifetime: Duration,
    ) -> Result<()> {
        let mut cmd = Command::new("kinit");
        cmd.arg("-k")
            .arg("-t")
            .arg(keytab)
            .arg("-l")
            .arg(format!("{}s", lifetime.as_secs().max(1)))
            .arg(name)
            .env("KRB5CCNAME", ccache);
        run(
            with_env(&mut cmd, self.dir.path()),
            &format!("kinit {name}"),
        )
        .map(drop)
    }

    fn kadmin(&self, query: &str) -> Result<()> {
        let mut cmd = Command::new("/usr/sbin/kadmin.local");
        cmd.args(["-r", REALM, "-q", query]);
        let out = run(with_env(&mut cmd, self.dir.path()), "kadmin.local")?;
        // kadmin.local exits 0 even when the query failed; it says so on stderr, beside two
        // notices that are not errors.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let notice = |l: &str| l.starts_with("Authenticating as") || l.starts_with("No policy");
        if stderr.lines().any(|l| !notice(l)) {
            return Err(HarnessError::Kerberos(format!(
                "kadmin.local -q {query:?}: {stderr}"
            )));
        }
        Ok(())
    }
}

impl Drop for Kdc {
    fn drop(&mut self) {
        let mut child = self.lock();
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The files every Kerberos program of this realm reads.
fn with_env<'a>(cmd: &'a mut Command, dir: &Path) -> &'a mut Command {
    cmd.env("KRB5_CONFIG", dir.join("krb5.conf"))
        .env("KRB5_KDC_PROFILE", dir.join("kdc.conf"))
}

fn krb5_conf(port: u16) -> String {
    // TCP only (udp_preference_limit=1), for MIT and Java alike; MIT's default host name
    // canonicalization, which turns 127.0.0.1 into the name /etc/hosts gives it.
    format!(
        "[libdefaults]\n  default_realm = {REALM}\n  dns_lookup_kdc = false\n  \
         dns_lookup_realm = false\n  udp_preference_limit = 1\n  ticket_lifetime = 1h\n\
         [realms]\n  {REALM} = {{\n    kdc = 127.0.0.1:{port}\n  }}\n"
    )
}

fn kdc_conf(dir: &Path, port: u16) -> String {
    let d = dir.display();
    format!(
        "[kdcdefaults]\n  kdc_listen = 127.0.0.1:{port}\n  kdc_tcp_listen = 127.0.0.1:{port}\n\
         [realms]\n  {REALM} = {{\n    database_name = {d}/principal\n    \
         key_stash_file = {d}/stash\n    acl_file = {d}/kadm5.acl\n    max_life = 1h\n    \
         max_renewable_life = 0\n  }}\n[logging]\n  kdc = FILE:{d}/kdc.log\n"
    )
}

fn write(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).map_err(|e| HarnessError::io(format!("writing {}", path.display()), e))
}

fn run(cmd: &mut Command, what: &str) -> Result<Output> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| HarnessError::Kerberos(format!("running {what}: {e}")))?;
    if !out.status.success() {
        return Err(HarnessError::Kerberos(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        )));
    }
    Ok(out)
}

/// Makes sure the KDC programs are present: when one is missing, installs Debian's
/// `krb5-kdc` (the KDC, `kdb5_util`), `krb5-admin-server` (`kadmin.local`) and `krb5-user`
/// (`kinit`) with apt-get, once per process, saying so on stderr.
pub fn ensure_kdc_installed() -> Result<()> {
    static INSTALL: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    INSTALL
        .get_or_init(|| {
            let mut missing: Vec<&str> = PROGRAMS
                .iter()
                .filter(|(program, _)| !Path::new(program).is_file())
                .map(|(_, package)| *package)
                .collect();
            missing.dedup();
            if missing.is_empty() {
                return Ok(());
            }
            eprintln!(
                "conformance: installing {} (apt-get) for the Kerberos tests' KDC",
                missing.join(" ")
            );
            crate::install::apt_install(&missing)
        })
        .clone()
        .map_err(HarnessError::Kerberos)
}
