//! The command line: global options and commands, with zkCli's names and flags.

use std::{ffi::OsString, time::Duration};

use clap::{Args, Parser, Subcommand, ValueEnum};

const ABOUT: &str = "ZooKeeper from the command line: zkCli's commands, scriptable and \
binary-safe; run a command under a lock or as leader; an interactive shell";

pub const EXIT_STATUS: &str = "\
Data is taken byte for byte: from the DATA argument, or from stdin when it is left out or '-'.
With no command on a terminal, zk starts the shell. Commands read by the shell from a pipe
or file all run; zk then exits with the status of the first that failed (0 if none did).

Exit status:
  0      success (lock, elect: CMD succeeded)
  1      the ZooKeeper operation failed (no node, node exists, bad version, no auth...)
  2      usage error (bad arguments, invalid path, malformed --server)
  3      no connection to ZooKeeper (unreachable, TLS handshake failed, SASL
         authentication failed), or the session ended
  4      lock/elect: timed out waiting (--timeout)
  5      lock/elect: the lock or leadership was lost while CMD ran; CMD got SIGTERM
  126    CMD could not be run
  127    CMD was not found
  128+N  interrupted by signal N while waiting; or CMD was killed by signal N
  other  lock/elect: CMD's own exit status";

#[derive(Parser, Debug)]
#[command(name = "zk", version, about = ABOUT, after_help = EXIT_STATUS)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Option<Cmd>,
}

/// Options of every command; they may come before or after it.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// The ensemble: host:port[,host:port...][/chroot] [default: $ZK_SERVERS, else
    /// 127.0.0.1:2181]
    // The brackets are the help text's notation, not rustdoc links. The environment is read
    // by `Global::server`, not by clap: clap counts an argument taken from the environment
    // as given, and would show `--server <HOSTS>` in every usage line, as if required.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "HOSTS", global = true)]
    pub server: Option<OsString>,
    /// Authenticate as SCHEME:CRED, e.g. digest:user:password (repeatable, like addauth)
    #[arg(long = "auth", value_name = "SCHEME:CRED", global = true)]
    pub auth: Vec<OsString>,
    /// Give up connecting after SECS, whatever the servers do
    #[arg(long, value_name = "SECS", default_value = "5", value_parser = seconds, global = true)]
    pub connect_timeout: Duration,
    /// The session timeout to ask for
    #[arg(long, value_name = "SECS", default_value = "10", value_parser = seconds, global = true)]
    pub session_timeout: Duration,
    /// One JSON document per read (one line per event for watches); data as UTF-8 text when
    /// it is, else base64, with "encoding" saying which
    #[arg(long, global = true)]
    pub json: bool,
    #[command(flatten)]
    pub security: crate::security::Security,
}

/// Where `--server` comes from when it is not given.
pub const SERVERS_ENV: &str = "ZK_SERVERS";
/// The server when neither `--server` nor `$ZK_SERVERS` says.
pub const DEFAULT_SERVER: &str = "127.0.0.1:2181";

impl Global {
    /// `--server`, else `$ZK_SERVERS`, else 127.0.0.1:2181.
    pub fn server(&self) -> OsString {
        self.server
            .clone()
            .or_else(|| std::env::var_os(SERVERS_ENV))
            .unwrap_or_else(|| DEFAULT_SERVER.into())
    }
}

#[derive(Subcommand, Debug, Clone)]
pub enum Cmd {
    /// List the children of PATH, sorted, one per line
    Ls {
        /// Every descendant as a full path, PATH first (breadth first, like zkCli)
        #[arg(short = 'R')]
        recursive: bool,
        /// The Stat of PATH after the list
        #[arg(short = 's')]
        stat: bool,
        /// Then wait for the next change of the children and print it
        #[arg(short = 'w')]
        watch: bool,
        /// The znode
        path: OsString,
    },
    /// Write the data of PATH to stdout, raw (a newline is added only on a terminal)
    Get {
        /// The Stat after the data
        #[arg(short = 's')]
        stat: bool,
        /// Then wait for the next change of the node and print it
        #[arg(short = 'w')]
        watch: bool,
        /// The znode
        path: OsString,
    },
    /// Replace the data of PATH
    Set {
        /// Only if the data version is N
        #[arg(short = 'v', value_name = "N", allow_negative_numbers = true)]
        version: Option<i32>,
        /// The znode
        path: OsString,
        /// The data; stdin when left out (but empty in the shell) or '-'
        #[arg(allow_hyphen_values = true)]
        data: Option<OsString>,
    },
    /// Create a znode and print its path; with -e, hold it until interrupted
    Create {
        /// Ephemeral: lives while zk runs (in the shell: while the shell runs)
        #[arg(short = 'e', conflicts_with_all = ["container", "ttl"])]
        ephemeral: bool,
        /// Sequential: a counter is appended to the name
        #[arg(short = 's', conflicts_with = "container")]
        sequential: bool,
        /// Container: deleted by the server once its last child is gone
        #[arg(short = 'c', conflicts_with = "ttl")]
        container: bool,
        /// Time to live: deleted after TTL_MS without changes once childless (the server
        /// needs zookeeper.extendedTypesEnabled=true)
        #[arg(short = 't', value_name = "TTL_MS")]
        ttl: Option<u64>,
        /// Create missing parents too (as persistent znodes)
        #[arg(short = 'p')]
        parents: bool,
        /// The znode
        path: OsString,
        /// The data; stdin when '-' (empty when left out)
        #[arg(allow_hyphen_values = true)]
        data: Option<OsString>,
        /// The ACL, as scheme:id:perms[,...] (default world:anyone:cdrwa)
        acl: Option<OsString>,
    },
    /// Delete a znode
    Delete {
        /// Only if the data version is N
        #[arg(short = 'v', value_name = "N", allow_negative_numbers = true)]
        version: Option<i32>,
        /// The znode
        path: OsString,
    },
    /// Delete PATH and everything below it
    #[command(name = "deleteall", alias = "rmr")]
    DeleteAll { path: OsString },
    /// The Stat of PATH: times in ISO 8601 (UTC), zxids in hex
    Stat { path: OsString },
    /// The ACL of PATH, one scheme:id:perms per line
    #[command(name = "getAcl", alias = "getacl")]
    GetAcl { path: OsString },
    /// Replace the ACL of PATH
    #[command(name = "setAcl", alias = "setacl")]
    SetAcl {
        /// Only if the ACL version is N
        #[arg(short = 'v', value_name = "N", allow_negative_numbers = true)]
        version: Option<i32>,
        /// The znode
        path: OsString,
        /// scheme:id:perms[,...], perms from cdrwa, e.g. world:anyone:r,auth::cdrwa
        acl: OsString,
    },
    /// Wait until the server has caught up with the leader on PATH
    Sync { path: OsString },
    /// The ensemble's dynamic configuration
    Config,
    /// The identities of this session
    Whoami,
    /// This session's ephemeral znodes under PATH (default /): useful in the shell
    #[command(name = "getEphemerals", alias = "getephemerals")]
    GetEphemerals { path: Option<OsString> },
    /// Print every change at PATH until interrupted (a persistent watch)
    #[command(name = "addWatch", alias = "addwatch")]
    AddWatch {
        /// persistent: PATH and its children list; persistent_recursive: PATH and below
        #[arg(
            short = 'm',
            value_enum,
            default_value = "persistent_recursive",
            ignore_case = true
        )]
        mode: WatchMode,
        /// The znode
        path: OsString,
    },
    /// Print every change at PATH until interrupted (-r: and below it)
    ///
    /// With --cache, through a cache of PATH (and with -r its subtree): first each znode
    /// as created, then initialized, then created/changed/deleted as they happen, with the
    /// data and version; resynced after a reconnect or a new session (changes made while
    /// away are found and printed before it).
    Watch {
        #[arg(short = 'r', short_alias = 'R', long)]
        recursive: bool,
        /// Follow PATH through a cache (data and versions, no event lost across reconnects)
        #[arg(long)]
        cache: bool,
        /// With --cache: levels below PATH to follow at most
        #[arg(long, value_name = "N", requires = "cache")]
        depth: Option<usize>,
        /// The znode
        path: OsString,
    },
    /// Run CMD while holding the lock at PATH, and exit with its status
    ///
    /// The lock is Curator's InterProcessMutex (and kazoo's Lock). CMD gets ZK_LOCK_PATH, ZK_LOCK_NODE and ZK_FENCING_TOKEN (the lock node's czxid)
    /// in its environment. If the lock is lost while CMD runs, CMD's process group gets
    /// SIGTERM (SIGKILL 10 s later) and zk exits with 5.
    Lock {
        /// The znode
        path: OsString,
        /// Give up waiting for the lock after SECS (exit 4)
        #[arg(long, value_name = "SECS", value_parser = seconds)]
        timeout: Option<Duration>,
        /// The command and its arguments, after --
        #[arg(last = true, required = true, value_name = "CMD")]
        cmd: Vec<OsString>,
    },
    /// Run CMD while holding one of N leases of the semaphore at PATH, and exit with its status
    ///
    /// The semaphore is Curator's InterProcessSemaphoreV2 (PATH/locks, PATH/leases). CMD
    /// runs on the same terms and with the same environment variables as with lock
    /// (ZK_LOCK_NODE is the lease node).
    Semaphore {
        /// The znode
        path: OsString,
        /// How many holders the semaphore admits at once (every user of PATH must agree)
        #[arg(long, value_name = "N")]
        leases: u32,
        /// Give up waiting for a lease after SECS (exit 4)
        #[arg(long, value_name = "SECS", value_parser = seconds)]
        timeout: Option<Duration>,
        /// The command and its arguments, after --
        #[arg(last = true, required = true, value_name = "CMD")]
        cmd: Vec<OsString>,
    },
    /// Run CMD once elected leader at PATH, and exit with its status
    ///
    /// The election is Curator's LeaderLatch. CMD runs on the same terms and with the same
    /// environment variables as with lock (ZK_LOCK_NODE is the latch node).
    Elect {
        /// The znode
        path: OsString,
        /// What other participants see (default zk@HOST:PID)
        #[arg(long)]
        id: Option<String>,
        /// Give up waiting for leadership after SECS (exit 4)
        #[arg(long, value_name = "SECS", value_parser = seconds)]
        timeout: Option<Duration>,
        /// The command and its arguments, after --
        #[arg(last = true, required = true, value_name = "CMD")]
        cmd: Vec<OsString>,
    },
    /// List the services registered under BASE and their instances (Curator's
    /// ServiceDiscovery, Spring Cloud Zookeeper): id, address, port, sslPort and URI
    Services {
        /// The base path
        #[arg(default_value = crate::discovery::DEFAULT_BASE)]
        base: OsString,
    },
    /// Run CMD while registered as an instance of service NAME, and exit with its status
    ///
    /// The instance is DYNAMIC (an ephemeral znode BASE/NAME/ID in curator-x-discovery's
    /// JSON), registered again after a session expiry, and removed when CMD exits. CMD gets
    /// ZK_SERVICE_NAME and ZK_SERVICE_ID in its environment.
    Register {
        /// The service's name
        name: String,
        /// The instance's id (unique within the service)
        #[arg(long)]
        id: String,
        /// The address clients reach it at
        #[arg(long)]
        address: String,
        /// The port clients reach it at
        #[arg(long)]
        port: u16,
        /// The base path
        #[arg(long, default_value = crate::discovery::DEFAULT_BASE)]
        base: OsString,
        /// Curator's URI template, e.g. '{scheme}://{address}:{port}'
        #[arg(long, value_name = "SPEC")]
        uri_spec: Option<String>,
        /// The command and its arguments, after --
        #[arg(last = true, required = true, value_name = "CMD")]
        cmd: Vec<OsString>,
    },
    /// Copy a subtree: data, ACLs, container and TTL kinds (ephemeral znodes are skipped)
    ///
    /// SRC and DST are each a znode path on --server's ensemble (/app), a path on another
    /// ensemble (zk://HOST:PORT[,HOST:PORT...]/app) or a backup file (backup.zkb, ./app.json,
    /// or file:NAME for any name: anything not starting with / or zk://). zk-shell's JSON
    /// backups are read too. Stops at the first znode that exists on DST unless --overwrite;
    /// re-running an interrupted copy with --overwrite completes it.
    Cp {
        /// Replace the data and ACL of znodes that exist on DST (or a DST file)
        #[arg(long)]
        overwrite: bool,
        /// Create the znodes whose path below SRC's root (/ for the root itself) matches
        /// REGEX as containers or TTL znodes: ZooKeeper does not tell clients these kinds
        /// (repeatable; the first match wins)
        #[arg(long, value_name = "REGEX=container|REGEX=ttl:MS")]
        kind: Vec<String>,
        /// Where from
        src: OsString,
        /// Where to
        dst: OsString,
    },
    /// Compare two subtrees (sides as for cp): exit 0 when equal, 1 when not, 2 on trouble
    ///
    /// Lists the znodes only in A, only in B, and those whose data, ACL or kind differ, by
    /// path relative to each side's root. Ephemeral znodes are left out.
    Diff { a: OsString, b: OsString },
    /// Data bytes and znodes of each subtree under PATH
    Du {
        /// Levels below PATH to list (sizes always count the whole subtree)
        #[arg(long, value_name = "N", default_value = "1")]
        depth: usize,
        /// The znode
        #[arg(default_value = "/")]
        path: OsString,
    },
    /// Draw the subtree under PATH
    Tree {
        /// Levels below PATH to show at most
        #[arg(long, value_name = "N")]
        depth: Option<usize>,
        /// The znode
        #[arg(default_value = "/")]
        path: OsString,
    },
    /// The paths under PATH that the regular expression PATTERN matches (exit 1: none)
    Find {
        /// Levels below PATH to search at most
        #[arg(long, value_name = "N")]
        depth: Option<usize>,
        pattern: String,
        /// The znode
        #[arg(default_value = "/")]
        path: OsString,
    },
    /// The lines of data under PATH that the regular expression PATTERN matches, as
    /// PATH: LINE (exit 1: none)
    Grep {
        /// Levels below PATH to search at most
        #[arg(long, value_name = "N")]
        depth: Option<usize>,
        pattern: String,
        /// The znode
        #[arg(default_value = "/")]
        path: OsString,
    },
    /// Every member of --server from srvr, mntr and cons, and a verdict: exit 0 ok,
    /// 1 degraded, 3 no quorum
    ///
    /// One row per member: state, mode (the leader marked *), zxid, latency min/avg/max,
    /// outstanding requests, connections, watches, znodes. Members that do not allow the
    /// four-letter words are shown as such and do not count against the verdict.
    Health {
        /// How long each member has to answer
        #[arg(long, value_name = "SECS", default_value = "3", value_parser = seconds)]
        timeout: Duration,
    },
    /// An interactive shell with history and tab completion of znode paths
    Shell,
    /// Print a completion script for a shell
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    #[value(name = "persistent")]
    Persistent,
    #[value(name = "persistent_recursive")]
    PersistentRecursive,
}

/// A number of seconds: 1.5, 0, 30.
fn seconds(v: &str) -> Result<Duration, String> {
    match v.parse::<f64>() {
        Ok(s) if (0.0..1e9).contains(&s) => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!("{v:?} is not a number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_zkcli_style_flags() {
        let cli = Cli::try_parse_from(["zk", "create", "-e", "-s", "-p", "/a/n-", "hi"]).unwrap();
        let Some(Cmd::Create {
            ephemeral,
            sequential,
            parents,
            data,
            ..
        }) = cli.command
        else {
            panic!("not a create")
        };
        assert!(ephemeral && sequential && parents);
        assert_eq!(data, Some("hi".into()));
        assert!(Cli::try_parse_from(["zk", "create", "-e", "-c", "/a"]).is_err());
        assert!(Cli::try_parse_from(["zk", "create", "-c", "-t", "5", "/a"]).is_err());
        let cli = Cli::try_parse_from(["zk", "set", "-v", "3", "/a", "-x"]).unwrap();
        assert!(matches!(
            cli.command,
            Some(Cmd::Set {
                version: Some(3),
                ..
            })
        ));
        let cli = Cli::try_parse_from(["zk", "ls", "/", "--json", "--server", "h:1"]).unwrap();
        assert!(cli.global.json);
        assert_eq!(cli.global.server.as_deref(), Some("h:1".as_ref()));
        let cli = Cli::try_parse_from(["zk", "addWatch", "-m", "PERSISTENT", "/a"]).unwrap();
        assert!(matches!(
            cli.command,
            Some(Cmd::AddWatch {
                mode: WatchMode::Persistent,
                ..
            })
        ));
        let cli = Cli::try_parse_from(["zk", "lock", "/l", "--timeout", "2.5", "--", "sh", "-c"])
            .unwrap();
        let Some(Cmd::Lock { timeout, cmd, .. }) = cli.command else {
            panic!("not a lock")
        };
        assert_eq!(timeout, Some(Duration::from_millis(2500)));
        assert_eq!(cmd, ["sh", "-c"]);
        assert!(Cli::try_parse_from(["zk", "lock", "/l"]).is_err());
        assert!(Cli::try_parse_from(["zk", "--connect-timeout", "x", "ls", "/"]).is_err());
    }
}
