//! Starting what the user asked for with the test kit, and telling them how to reach it.

use std::{
    collections::hash_map::RandomState,
    fmt::Write as _,
    hash::{BuildHasher, Hasher},
    time::Instant,
};

use zk_testkit::{
    ensure_installed, Ensemble, HarnessError, SaslServer, ServerOptions, ServerTls, Standalone,
    TestCerts, ZkServer,
};

use crate::args::Args;

/// The SASL user zk-local creates.
pub const SASL_USER: &str = "zk-local";

/// The running servers, and what was made for them. Dropping it stops them and removes every
/// file.
pub struct Local {
    // Dropped first: the servers must be gone before their certificates.
    servers: Servers,
    certs: Option<TestCerts>,
    sasl_password: Option<String>,
    started_in: f64,
}

enum Servers {
    Standalone(Standalone),
    Ensemble(Ensemble),
}

impl Local {
    /// Installs ZooKeeper if needed (saying so first), then starts the servers.
    pub fn start(args: &Args) -> Result<Local, HarnessError> {
        ensure_installed()?;
        let certs = args.tls.then(TestCerts::generate).transpose()?;
        let sasl_password = args.sasl.then(password);
        // The tests' settings: 200 ms ticks, so sessions may be as short as 0.4 s (and up to
        // 60 s), no fsync, a small JVM. Empty containers (and expired TTL nodes) go within
        // 100 ms rather than a minute, so that what uses them can be seen to work at once.
        let mut opts =
            ServerOptions::default().system_property("znode.container.checkIntervalMs", "100");
        if let Some(certs) = &certs {
            opts = opts.tls(ServerTls::from_certs(certs));
        }
        if let Some(password) = &sasl_password {
            opts = opts.sasl(SaslServer::digest_md5().user(SASL_USER, password));
        }
        let what = match args.servers {
            1 => "a standalone ZooKeeper 3.8 server".to_string(),
            n => format!("a {n}-server ZooKeeper 3.8 ensemble"),
        };
        eprintln!("zk-local: starting {what} on 127.0.0.1 (server output goes to log files)");
        let t0 = Instant::now();
        let servers = match args.servers {
            1 => Servers::Standalone(Standalone::builder().options(opts).start()?),
            n => Servers::Ensemble(Ensemble::builder().options(opts).size(n).start()?),
        };
        Ok(Local {
            servers,
            certs,
            sasl_password,
            started_in: t0.elapsed().as_secs_f64(),
        })
    }

    fn servers(&self) -> &[ZkServer] {
        match &self.servers {
            Servers::Standalone(s) => std::slice::from_ref(s.server()),
            Servers::Ensemble(e) => e.servers(),
        }
    }

    fn connect_string(&self, secure: bool) -> String {
        let each = |s: &ZkServer| match secure {
            true => s.secure_connect_string(),
            false => s.connect_string(),
        };
        self.servers()
            .iter()
            .map(each)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// What the user needs to connect: connect strings, export lines, files, credentials.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let plain = self.connect_string(false);
        let _ = writeln!(
            s,
            "ZooKeeper is serving (started in {:.1} s).\n",
            self.started_in
        );
        let zk_servers = match &self.certs {
            None => {
                let _ = writeln!(s, "connect string: {plain}");
                plain
            }
            Some(certs) => {
                let secure = self.connect_string(true);
                let _ = writeln!(
                    s,
                    "connect string (TLS, client certificate required): {secure}"
                );
                let _ = writeln!(s, "connect string (plain TCP): {plain}");
                let _ = writeln!(s, "CA certificate: {}", certs.ca().display());
                let _ = writeln!(
                    s,
                    "client certificate and key (one PEM file): {}",
                    certs.client_pem().display()
                );
                secure
            }
        };
        if let Some(password) = &self.sasl_password {
            let _ = writeln!(s, "SASL DIGEST-MD5 user: {SASL_USER}, password: {password}");
        }
        let _ = writeln!(s, "\nexport ZK_SERVERS={zk_servers}");
        // The variables examples/tls.rs and examples/sasl.rs read, so that they run as printed.
        if let Some(certs) = &self.certs {
            let _ = writeln!(s, "export ZK_TLS_CA={}", certs.ca().display());
            let _ = writeln!(
                s,
                "export ZK_TLS_CLIENT_PEM={}",
                certs.client_pem().display()
            );
        }
        if let Some(password) = &self.sasl_password {
            let _ = writeln!(s, "export ZK_SASL_USER={SASL_USER}");
            let _ = writeln!(s, "export ZK_SASL_PASSWORD={password}");
        }
        let _ = write!(s, "\nthen: zk{} ls /", self.zk_flags());
        let _ = write!(s, "\nserver logs:");
        for server in self.servers() {
            let _ = write!(s, "\n  {}", server.log_path().display());
        }
        s
    }

    /// The `zk` options for the TLS and SASL set-up.
    fn zk_flags(&self) -> String {
        let mut flags = String::new();
        if let Some(certs) = &self.certs {
            let pem = certs.client_pem();
            let _ = write!(
                flags,
                " --tls-ca {} --tls-cert {} --tls-key {}",
                certs.ca().display(),
                pem.display(),
                pem.display()
            );
        }
        if self.sasl_password.is_some() {
            let _ = write!(flags, " --sasl-user {SASL_USER}");
        }
        flags
    }

    /// A line about the first server that is no longer running, with its log's end.
    pub fn dead_server(&self) -> Option<String> {
        let dead = self.servers().iter().find(|s| !s.is_running())?;
        Some(format!(
            "the server on {} exited; the end of {}:\n{}",
            dead.connect_string(),
            dead.log_path().display(),
            dead.log_tail(20)
        ))
    }

    /// The directories that go when this is dropped, for the last line.
    pub fn files(&self) -> String {
        let mut dirs: Vec<String> = self
            .servers()
            .iter()
            .map(|s| s.dir().display().to_string())
            .collect();
        dirs.extend(self.certs.iter().map(|c| c.dir().display().to_string()));
        dirs.join(", ")
    }
}

/// A password for the generated SASL user: 16 hex digits from std's randomly keyed hasher
/// (the kit has no random number generator; this only has to be unguessable for a local
/// throwaway server).
fn password() -> String {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    format!("{:016x}", h.finish())
}
