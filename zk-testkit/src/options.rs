//! Server settings shared by standalone servers and ensemble members.

use std::time::Duration;

use crate::SaslServer;

/// How to configure and run a ZooKeeper server for tests.
///
/// The defaults favour fast tests: `tickTime=200` (so sessions can time out in under a second:
/// the server clamps session timeouts to 2–20 ticks unless `maxSessionTimeout` says
/// otherwise), no fsync, a small JVM.
///
/// ```
/// use std::time::Duration;
/// use zk_testkit::ServerOptions;
/// let opts = ServerOptions::default()
///     .tick_time(100)
///     .extended_types(true)
///     .max_session_timeout(Duration::from_secs(30));
/// assert_eq!(opts.tick_time_ms, 100);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// `tickTime` in milliseconds (default 200).
    pub tick_time_ms: u32,
    /// `initLimit` in ticks (default 20).
    pub init_limit: u32,
    /// `syncLimit` in ticks (default 10).
    pub sync_limit: u32,
    /// `minSessionTimeout` (default: the server's, 2 ticks).
    pub min_session_timeout: Option<Duration>,
    /// `maxSessionTimeout` (default 60 s, so tests can ask for long sessions).
    pub max_session_timeout: Duration,
    /// `-Dzookeeper.extendedTypesEnabled=true`: TTL nodes (default false).
    pub extended_types: bool,
    /// `reconfigEnabled` (default false).
    pub reconfig_enabled: bool,
    /// `standaloneEnabled` (default: unset, the server's `true`).
    pub standalone_enabled: Option<bool>,
    /// `-Dreadonlymode.enabled=true`: partitioned members serve reads (default false).
    pub read_only_mode: bool,
    /// `-Dzookeeper.skipACL=yes` (default false). Reconfig needs this or a super user.
    pub skip_acl: bool,
    /// `-Dzookeeper.forceSync`: fsync the transaction log (default false, for speed).
    pub force_sync: bool,
    /// `-Xmx` in MiB (default 256).
    pub max_heap_mb: u32,
    /// How long to wait for the server to serve after a start (default 30 s).
    pub startup_timeout: Duration,
    /// Extra `key=value` lines appended to zoo.cfg.
    pub extra_config: Vec<(String, String)>,
    /// Extra `-Dkey=value` JVM system properties.
    pub system_properties: Vec<(String, String)>,
    /// Extra raw JVM arguments.
    pub jvm_args: Vec<String>,
    /// The address the client port is bound to (default 127.0.0.1). `0.0.0.0` lets clients in
    /// another network namespace reach the server through a veth pair; connect strings and
    /// health checks still use 127.0.0.1.
    pub client_address: std::net::IpAddr,
    /// SASL: a JAAS file with DIGEST-MD5 users and the SASL auth provider (default off).
    pub sasl: Option<SaslServer>,
    /// A secure client port beside the plain one (default: none); see [`ServerTls`].
    pub tls: Option<ServerTls>,
}

/// Whether a TLS server asks for client certificates (`ssl.clientAuth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// A client without a certificate fails the handshake (ZooKeeper's default).
    #[default]
    Need,
    /// A certificate is asked for but not required.
    Want,
    /// No certificate is asked for.
    None,
}

/// A secure client port (`secureClientPort`, Netty connection factory) beside the plain
/// client port, which health checks and four-letter words keep using (mixed mode).
///
/// ```
/// use zk_testkit::{options::ClientAuth, ServerOptions, ServerTls};
/// let tls = ServerTls::new("/tmp/c/server.pem", "/tmp/c/ca.pem").client_auth(ClientAuth::Want);
/// let opts = ServerOptions::default().tls(tls);
/// assert_eq!(opts.tls.unwrap().client_auth, ClientAuth::Want);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerTls {
    /// The server's certificate chain and PKCS#8 key in one PEM file (`ssl.keyStore`).
    pub key_store: std::path::PathBuf,
    /// The CA certificates it trusts for client certificates (`ssl.trustStore`).
    pub trust_store: std::path::PathBuf,
    /// `ssl.clientAuth` (default [`ClientAuth::Need`]).
    pub client_auth: ClientAuth,
}

impl ServerTls {
    /// PEM key store and trust store, client certificates required.
    pub fn new(
        key_store: impl Into<std::path::PathBuf>,
        trust_store: impl Into<std::path::PathBuf>,
    ) -> Self {
        ServerTls {
            key_store: key_store.into(),
            trust_store: trust_store.into(),
            client_auth: ClientAuth::Need,
        }
    }

    /// The server certificate and CA of [`TestCerts`](crate::TestCerts), which must outlive
    /// the server.
    pub fn from_certs(certs: &crate::TestCerts) -> Self {
        ServerTls::new(certs.server_pem(), certs.ca())
    }

    /// Sets `ssl.clientAuth`.
    pub fn client_auth(mut self, auth: ClientAuth) -> Self {
        self.client_auth = auth;
        self
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            tick_time_ms: 200,
            init_limit: 20,
            sync_limit: 10,
            min_session_timeout: None,
            max_session_timeout: Duration::from_secs(60),
            extended_types: false,
            reconfig_enabled: false,
            standalone_enabled: None,
            read_only_mode: false,
            skip_acl: false,
            force_sync: false,
            max_heap_mb: 256,
            startup_timeout: Duration::from_secs(30),
            extra_config: Vec::new(),
            system_properties: Vec::new(),
            jvm_args: Vec::new(),
            client_address: std::net::Ipv4Addr::LOCALHOST.into(),
            sasl: None,
            tls: None,
        }
    }
}

/// Chainable setters; `Standalone::builder()` and `Ensemble::builder()` offer the same ones.
impl ServerOptions {
    /// Sets `tickTime` (milliseconds).
    pub fn tick_time(mut self, ms: u32) -> Self {
        self.tick_time_ms = ms;
        self
    }

    /// Sets `initLimit` and `syncLimit` (in ticks).
    pub fn limits(mut self, init_limit: u32, sync_limit: u32) -> Self {
        self.init_limit = init_limit;
        self.sync_limit = sync_limit;
        self
    }

    /// Sets `minSessionTimeout`.
    pub fn min_session_timeout(mut self, t: Duration) -> Self {
        self.min_session_timeout = Some(t);
        self
    }

    /// Sets `maxSessionTimeout`.
    pub fn max_session_timeout(mut self, t: Duration) -> Self {
        self.max_session_timeout = t;
        self
    }

    /// Enables TTL nodes (`zookeeper.extendedTypesEnabled`).
    pub fn extended_types(mut self, on: bool) -> Self {
        self.extended_types = on;
        self
    }

    /// Sets `reconfigEnabled`.
    pub fn reconfig_enabled(mut self, on: bool) -> Self {
        self.reconfig_enabled = on;
        self
    }

    /// Sets `standaloneEnabled`.
    pub fn standalone_enabled(mut self, on: bool) -> Self {
        self.standalone_enabled = Some(on);
        self
    }

    /// Enables read-only mode for partitioned members.
    pub fn read_only_mode(mut self, on: bool) -> Self {
        self.read_only_mode = on;
        self
    }

    /// Disables ACL checks on the server.
    pub fn skip_acl(mut self, on: bool) -> Self {
        self.skip_acl = on;
        self
    }

    /// Turns fsync of the transaction log on or off.
    pub fn force_sync(mut self, on: bool) -> Self {
        self.force_sync = on;
        self
    }

    /// Sets the JVM's maximum heap (MiB).
    pub fn max_heap_mb(mut self, mb: u32) -> Self {
        self.max_heap_mb = mb;
        self
    }

    /// Sets how long a start may take.
    pub fn startup_timeout(mut self, t: Duration) -> Self {
        self.startup_timeout = t;
        self
    }

    /// Appends `key=value` to zoo.cfg.
    pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.extra_config.push((key.into(), value.into()));
        self
    }

    /// Passes `-Dkey=value` to the JVM.
    pub fn system_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.system_properties.push((key.into(), value.into()));
        self
    }

    /// Passes a raw argument to the JVM (before the main class).
    pub fn jvm_arg(mut self, arg: impl Into<String>) -> Self {
        self.jvm_args.push(arg.into());
        self
    }

    /// Binds the client port to `addr` instead of 127.0.0.1 (`clientPortAddress` and the
    /// client part of the `server.N` lines).
    pub fn client_address(mut self, addr: std::net::IpAddr) -> Self {
        self.client_address = addr;
        self
    }

    /// Serves SASL: writes the JAAS file, passes it to the JVM and registers the provider.
    pub fn sasl(mut self, sasl: SaslServer) -> Self {
        self.sasl = Some(sasl);
        self
    }

    /// Adds a secure client port (see [`ServerTls`]).
    pub fn tls(mut self, tls: ServerTls) -> Self {
        self.tls = Some(tls);
        self
    }
}

/// Generates builder methods that forward to the [`ServerOptions`] setters of field `$field`.
macro_rules! forward_option_setters {
    ($field:ident) => {
        /// Sets `tickTime` (milliseconds); see [`ServerOptions::tick_time`].
        pub fn tick_time(mut self, ms: u32) -> Self {
            self.$field = self.$field.tick_time(ms);
            self
        }
        /// Sets `initLimit`/`syncLimit`; see [`ServerOptions::limits`].
        pub fn limits(mut self, init_limit: u32, sync_limit: u32) -> Self {
            self.$field = self.$field.limits(init_limit, sync_limit);
            self
        }
        /// See [`ServerOptions::min_session_timeout`].
        pub fn min_session_timeout(mut self, t: std::time::Duration) -> Self {
            self.$field = self.$field.min_session_timeout(t);
            self
        }
        /// See [`ServerOptions::max_session_timeout`].
        pub fn max_session_timeout(mut self, t: std::time::Duration) -> Self {
            self.$field = self.$field.max_session_timeout(t);
            self
        }
        /// Enables TTL nodes; see [`ServerOptions::extended_types`].
        pub fn extended_types(mut self, on: bool) -> Self {
            self.$field = self.$field.extended_types(on);
            self
        }
        /// See [`ServerOptions::reconfig_enabled`].
        pub fn reconfig_enabled(mut self, on: bool) -> Self {
            self.$field = self.$field.reconfig_enabled(on);
            self
        }
        /// See [`ServerOptions::standalone_enabled`].
        pub fn standalone_enabled(mut self, on: bool) -> Self {
            self.$field = self.$field.standalone_enabled(on);
            self
        }
        /// See [`ServerOptions::read_only_mode`].
        pub fn read_only_mode(mut self, on: bool) -> Self {
            self.$field = self.$field.read_only_mode(on);
            self
        }
        /// See [`ServerOptions::skip_acl`].
        pub fn skip_acl(mut self, on: bool) -> Self {
            self.$field = self.$field.skip_acl(on);
            self
        }
        /// See [`ServerOptions::force_sync`].
        pub fn force_sync(mut self, on: bool) -> Self {
            self.$field = self.$field.force_sync(on);
            self
        }
        /// See [`ServerOptions::max_heap_mb`].
        pub fn max_heap_mb(mut self, mb: u32) -> Self {
            self.$field = self.$field.max_heap_mb(mb);
            self
        }
        /// See [`ServerOptions::startup_timeout`].
        pub fn startup_timeout(mut self, t: std::time::Duration) -> Self {
            self.$field = self.$field.startup_timeout(t);
            self
        }
        /// Appends `key=value` to zoo.cfg; see [`ServerOptions::config`].
        pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
            self.$field = self.$field.config(key, value);
            self
        }
        /// Passes `-Dkey=value`; see [`ServerOptions::system_property`].
        pub fn system_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
            self.$field = self.$field.system_property(key, value);
            self
        }
        /// Passes a raw JVM argument; see [`ServerOptions::jvm_arg`].
        pub fn jvm_arg(mut self, arg: impl Into<String>) -> Self {
            self.$field = self.$field.jvm_arg(arg);
            self
        }
        /// See [`ServerOptions::client_address`].
        pub fn client_address(mut self, addr: std::net::IpAddr) -> Self {
            self.$field = self.$field.client_address(addr);
            self
        }
        /// Serves SASL; see [`ServerOptions::sasl`].
        pub fn sasl(mut self, sasl: $crate::SaslServer) -> Self {
            self.$field = self.$field.sasl(sasl);
            self
        }

        /// Adds a secure client port; see [`ServerOptions::tls`].
        pub fn tls(mut self, tls: crate::ServerTls) -> Self {
            self.$field = self.$field.tls(tls);
            self
        }
        /// Replaces all options at once.
        pub fn options(mut self, options: ServerOptions) -> Self {
            self.$field = options;
            self
        }
    };
}
pub(crate) use forward_option_setters;
