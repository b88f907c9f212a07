//! The other clients the tests and benchmarks run beside ours: Java programs against
//! Debian's ZooKeeper and Curator jars, Python programs with kazoo, and the plumbing to run
//! them as child processes and read what they print.
//!
//! The programs live in `conformance/java` and `conformance/python`. Tests use those files
//! in place; the benchmark binaries embed them (`include_str!`) and write them out with
//! [`JavaProgram::compile_embedded`] and [`KazooProgram::prepare_embedded`], so that a
//! release binary runs from anywhere. The helpers the programs share ([`CURATOR_PEERS`],
//! [`BENCH_ARGS`], [`KAZOO_PEERS`]) are written beside them.
//!
//! Everything here reports a failure as a `String` that says what to install or what the
//! child printed last: the benchmarks show it as "n/a: …" in their tables, the tests panic
//! with it.
//!
//! ```no_run
//! use std::{path::Path, time::Duration};
//! use conformance::peers::{self, JavaProgram};
//!
//! let classes = peers::process_dir(&std::env::temp_dir(), "my-peer");
//! let peer = JavaProgram::compile(
//!     Path::new("conformance/java/CuratorLock.java"),
//!     &classes,
//!     peers::CURATOR_JARS,
//!     "libcurator-recipes-java",
//! )
//! .unwrap();
//! let mut cmd = peer.command();
//! cmd.args(["hold", "127.0.0.1:2181", "/lock", "1000"]);
//! let stdout = peers::run_child(&mut cmd, Duration::from_secs(60)).unwrap();
//! # let _ = stdout;
//! ```

use std::{
    env, fmt, fs,
    io::{BufRead, BufReader, Read},
    path::{Path, PathBuf},
    process::{Command, ExitStatus, Stdio},
    sync::{Arc, Mutex},
    thread::{self, JoinHandle},
    time::{Duration, Instant},
};

use tokio::sync::Notify;

use crate::install::JAR_DIR;

/// What the ZooKeeper Java client needs at run time (Debian: libzookeeper-java,
/// libslf4j-java). slf4j-nop keeps the client quiet; the server's logging jars are not needed.
pub const ZOOKEEPER_CLIENT_JARS: &[&str] = &[
    "zookeeper.jar",
    "zookeeper-jute.jar",
    "slf4j-api.jar",
    "slf4j-nop.jar",
];

/// What Curator's recipes need at run time (Debian: libcurator-recipes-java).
pub const CURATOR_JARS: &[&str] = &[
    "curator-framework.jar",
    "curator-client.jar",
    "curator-recipes.jar",
    "zookeeper.jar",
    "zookeeper-jute.jar",
    "guava.jar",
    "slf4j-api.jar",
    "slf4j-nop.jar",
];

/// What Curator's service discovery needs at run time beside [`CURATOR_JARS`] (Debian:
/// libcurator-discovery-java, which brings Jackson).
pub const DISCOVERY_JARS: &[&str] = &[
    "curator-x-discovery.jar",
    "jackson-databind.jar",
    "jackson-core.jar",
    "jackson-annotations.jar",
];

/// Netty (Debian: libnetty-java), which the election peer puts on its classpath after
/// [`CURATOR_JARS`].
pub const NETTY_JARS: &[&str] = &[
    "netty-handler.jar",
    "netty-transport.jar",
    "netty-common.jar",
    "netty-buffer.jar",
    "netty-resolver.jar",
    "netty-codec.jar",
    "netty-transport-native-epoll.jar",
    "netty-transport-native-unix-common.jar",
];

/// `CuratorPeers.java`, the connect and line printer of the Curator programs, for
/// [`JavaProgram::compile_embedded`] beside the program that uses it.
pub const CURATOR_PEERS: (&str, &str) = (
    "CuratorPeers.java",
    include_str!("../java/CuratorPeers.java"),
);

/// `BenchArgs.java`, the command line of the Java benchmark programs, for
/// [`JavaProgram::compile_embedded`] beside the program that uses it.
pub const BENCH_ARGS: (&str, &str) = ("BenchArgs.java", include_str!("../java/BenchArgs.java"));

/// `kazoo_peers.py`, what the kazoo programs share, for [`KazooProgram::prepare_embedded`]
/// beside the program that imports it.
pub const KAZOO_PEERS: (&str, &str) = ("kazoo_peers.py", include_str!("../python/kazoo_peers.py"));

/// How long `javac` may take: a few seconds normally, much more on a loaded machine.
const JAVAC_LIMIT: Duration = Duration::from_secs(120);
/// How long `python -c "import kazoo.client"` may take.
const PROBE_LIMIT: Duration = Duration::from_secs(30);
/// How often [`run_to_end`] looks whether the child has exited.
const POLL: Duration = Duration::from_millis(20);

// ----- scratch files -----

/// `parent/TAG-PID`, created if it can be (a failure shows when something is written there).
///
/// One per process, so that concurrent runs never load each other's half-written classes.
pub fn process_dir(parent: &Path, tag: &str) -> PathBuf {
    let dir = parent.join(format!("{tag}-{}", std::process::id()));
    let _ = fs::create_dir_all(&dir);
    dir
}

/// Writes `contents` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, contents: &str) -> Result<PathBuf, String> {
    let path = dir.join(name);
    fs::write(&path, contents).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Writes `files` (name and text: the program first, then what it uses) into `dir`; the
/// path of the first (an error saying "no `what`" when there is none).
fn write_files(files: &[(&str, &str)], dir: &Path, what: &str) -> Result<PathBuf, String> {
    let mut written = Vec::with_capacity(files.len());
    for (name, text) in files {
        written.push(write_file(dir, name, text)?);
    }
    written
        .into_iter()
        .next()
        .ok_or_else(|| format!("no {what}"))
}

// ----- child processes -----

/// How a child run by [`run_to_end`] ended.
#[derive(Debug)]
pub enum Exit {
    /// It exited by itself.
    Exited(ExitStatus),
    /// It was still running after this long, and was killed.
    TimedOut(Duration),
    /// Waiting for it failed.
    WaitFailed(std::io::Error),
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exit::Exited(st) => write!(f, "{st}"),
            Exit::TimedOut(limit) => write!(f, "timed out after {limit:?}"),
            Exit::WaitFailed(e) => write!(f, "{e}"),
        }
    }
}

/// A child run to its end: how it ended and all it printed.
#[derive(Debug)]
pub struct Finished {
    pub exit: Exit,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// Whether the child exited with status 0.
    pub fn success(&self) -> bool {
        matches!(&self.exit, Exit::Exited(st) if st.success())
    }

    /// The last three of the non-empty lines of stderr followed by the `ERROR` lines of
    /// stdout (where the peer programs report what went wrong): enough to say why, short
    /// enough for one line of a report.
    pub fn tail(&self) -> String {
        let lines: Vec<&str> = self
            .stderr
            .lines()
            .chain(self.stdout.lines().filter(|l| l.starts_with("ERROR")))
            .filter(|l| !l.trim().is_empty())
            .collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    }

    /// Stdout on success; otherwise how it ended and [`tail`](Self::tail).
    pub fn into_stdout(self) -> Result<String, String> {
        if self.success() {
            Ok(self.stdout)
        } else {
            Err(format!("{}: {}", self.exit, self.tail()))
        }
    }
}

/// Reads all of `pipe` on a thread of its own.
///
/// A child blocks once it fills a pipe nobody reads; reading stdout and stderr each on its own
/// thread means neither can stall the child while we wait for the other (or for its exit).
pub fn read_in_background(mut pipe: impl Read + Send + 'static) -> JoinHandle<String> {
    thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    })
}

/// Runs `cmd` (stdin from /dev/null, stdout and stderr captured) until it exits or `limit`
/// passes, when it is killed. `Err` only when it cannot be started.
pub fn run_to_end(cmd: &mut Command, limit: Duration) -> Result<Finished, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", cmd.get_program().to_string_lossy()))?;
    let out = read_in_background(child.stdout.take().expect("piped stdout"));
    let err = read_in_background(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + limit;
    let exit = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Exit::Exited(st),
            Ok(None) if Instant::now() < deadline => thread::sleep(POLL),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                break Exit::TimedOut(limit);
            }
            Err(e) => break Exit::WaitFailed(e),
        }
    };
    Ok(Finished {
        exit,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// Runs `cmd` to completion within `limit`; its stdout, or why not (see [`Finished::tail`]).
///
/// ```no_run
/// use std::{process::Command, time::Duration};
///
/// let mut cmd = Command::new("javac");
/// cmd.arg("-version");
/// match conformance::peers::run_child(&mut cmd, Duration::from_secs(30)) {
///     Ok(stdout) => println!("{stdout}"),
///     Err(why) => eprintln!("javac: {why}"),
/// }
/// ```
pub fn run_child(cmd: &mut Command, limit: Duration) -> Result<String, String> {
    run_to_end(cmd, limit)?.into_stdout()
}

/// The lines a child writes to one pipe, gathered by a thread as they come, for tests that
/// talk to a peer line by line while it runs.
///
/// A thread rather than a tokio task, so that it works with `std::process` children and keeps
/// reading while a test's runtime is busy or blocked.
#[derive(Clone)]
pub struct Lines(Arc<LinesShared>);

struct LinesShared {
    state: Mutex<LinesState>,
    changed: Notify,
}

#[derive(Default)]
struct LinesState {
    lines: Vec<String>,
    /// The pipe reached its end (the child closed it or exited).
    ended: bool,
}

impl Lines {
    /// Starts reading `pipe`, line by line, until its end.
    pub fn follow(pipe: impl Read + Send + 'static) -> Lines {
        let lines = Lines(Arc::new(LinesShared {
            state: Mutex::new(LinesState::default()),
            changed: Notify::new(),
        }));
        let shared = lines.0.clone();
        thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                shared.lock().lines.push(line);
                shared.changed.notify_waiters();
            }
            shared.lock().ended = true;
            shared.changed.notify_waiters();
        });
        lines
    }

    /// Every line so far.
    pub fn snapshot(&self) -> Vec<String> {
        self.0.lock().lines.clone()
    }

    /// Waits until `check`, given the lines so far and whether the pipe has ended, returns
    /// `Some`; `None` if it has not after `limit`.
    pub async fn wait_for<T>(
        &self,
        limit: Duration,
        mut check: impl FnMut(&[String], bool) -> Option<T>,
    ) -> Option<T> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            // Made before the check: a line that comes between the check and the await
            // still wakes it (`notify_waiters` reaches every `Notified` already created).
            let changed = self.0.changed.notified();
            {
                let st = self.0.lock();
                if let Some(v) = check(&st.lines, st.ended) {
                    return Some(v);
                }
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                let st = self.0.lock();
                return check(&st.lines, st.ended);
            }
        }
    }
}

impl LinesShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, LinesState> {
        // A panicking `check` must not take the transcript with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

// ----- Java -----

/// The `javac` of the JDK whose `java` runs the servers, else the one on `PATH`.
///
/// Classes compiled by a newer `javac` than the `java` that runs them do not load, so the
/// pair is taken from one JDK when it can be.
pub fn javac_beside(java: &Path) -> PathBuf {
    java.canonicalize()
        .ok()
        .and_then(|j| Some(j.parent()?.join("javac")))
        .filter(|j| j.exists())
        .unwrap_or_else(|| PathBuf::from("javac"))
}

/// The paths of `jars` in Debian's jar directory; when any is missing, an error naming them
/// and the `packages` that provide them.
pub fn debian_jars(jars: &[&str], packages: &str) -> Result<Vec<PathBuf>, String> {
    let dir = Path::new(JAR_DIR);
    let missing: Vec<&str> = jars
        .iter()
        .copied()
        .filter(|j| !dir.join(j).exists())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing in {}: {} (apt-get install {packages})",
            dir.display(),
            missing.join(", ")
        ));
    }
    Ok(jars.iter().map(|j| dir.join(j)).collect())
}

/// A Java program compiled against Debian's jars, ready to run.
#[derive(Debug, Clone)]
pub struct JavaProgram {
    java: PathBuf,
    classpath: String,
    main_class: String,
}

impl JavaProgram {
    /// Compiles `source` (whose file stem is its main class) into `classes`, with `classes`
    /// and `jars` (from Debian's jar directory; `packages` provide them) on the classpath
    /// and the source's directory on the source path (so peers can share helper classes).
    /// Finds (or installs) Java the way the server harness does.
    ///
    /// Once per process for each source and directory: the tests of one binary run in
    /// parallel, and a second javac rewriting the class files while the first test's JVM
    /// loads them made it fail with "Truncated class file".
    pub fn compile(
        source: &Path,
        classes: &Path,
        jars: &[&str],
        packages: &str,
    ) -> Result<JavaProgram, String> {
        type Compiled = std::collections::HashMap<(PathBuf, PathBuf), JavaProgram>;
        static COMPILED: std::sync::OnceLock<Mutex<Compiled>> = std::sync::OnceLock::new();
        let mut compiled = COMPILED
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let key = (source.to_path_buf(), classes.to_path_buf());
        if let Some(program) = compiled.get(&key) {
            return Ok(program.clone());
        }
        let program = JavaProgram::compile_now(source, classes, jars, packages)?;
        compiled.insert(key, program.clone());
        Ok(program)
    }

    fn compile_now(
        source: &Path,
        classes: &Path,
        jars: &[&str],
        packages: &str,
    ) -> Result<JavaProgram, String> {
        let main_class = source
            .file_stem()
            .ok_or_else(|| format!("{}: not a source file", source.display()))?
            .to_string_lossy()
            .into_owned();
        let install = crate::ensure_installed().map_err(|e| e.to_string())?;
        let jars = debian_jars(jars, packages)?;
        fs::create_dir_all(classes).map_err(|e| format!("{}: {e}", classes.display()))?;
        let classpath = std::iter::once(classes)
            .chain(jars.iter().map(PathBuf::as_path))
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        let mut javac = Command::new(javac_beside(&install.java));
        javac
            .arg("-nowarn")
            .arg("-d")
            .arg(classes)
            .arg("-cp")
            .arg(&classpath)
            .arg("-sourcepath")
            .arg(source.parent().unwrap_or(Path::new(".")))
            .arg(source);
        run_child(&mut javac, JAVAC_LIMIT).map_err(|e| format!("javac: {e}"))?;
        Ok(JavaProgram {
            java: install.java.clone(),
            classpath,
            main_class,
        })
    }

    /// [`compile`](Self::compile) for a benchmark binary's embedded Java: writes `sources`
    /// (file name and text: the main class first, then the helper classes it uses) into
    /// `dir` and compiles the first there.
    pub fn compile_embedded(
        sources: &[(&str, &str)],
        dir: &Path,
        jars: &[&str],
        packages: &str,
    ) -> Result<JavaProgram, String> {
        let main = write_files(sources, dir, "Java source to compile")?;
        JavaProgram::compile(&main, dir, jars, packages)
    }

    /// `java -cp CLASSPATH MAIN`; the program's arguments go after it.
    pub fn command(&self) -> Command {
        self.command_with(&[])
    }

    /// [`command`](Self::command) with options for the JVM (such as `-Xmx128m`).
    pub fn command_with(&self, jvm_options: &[&str]) -> Command {
        let mut cmd = Command::new(&self.java);
        cmd.args(jvm_options)
            .arg("-cp")
            .arg(&self.classpath)
            .arg(&self.main_class);
        cmd
    }
}

// ----- Python -----

/// The project's own virtual environment, where scripts/test installs kazoo, relative to the
/// workspace root.
pub const VENV_PYTHON: &str = "target/venv/bin/python";

/// The Python interpreter: `$PYTHON` (scripts/test sets it), else the project's virtual
/// environment ([`VENV_PYTHON`]) when it exists, else `python3`.
pub fn python() -> String {
    if let Ok(python) = env::var("PYTHON") {
        return python;
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(VENV_PYTHON);
    if venv.is_file() {
        return venv.display().to_string();
    }
    "python3".to_owned()
}

/// A Python script whose interpreter can import kazoo.
#[derive(Debug, Clone)]
pub struct KazooProgram {
    python: String,
    script: PathBuf,
}

impl KazooProgram {
    /// Checks that [`python`] imports `kazoo.client`, which every kazoo program needs, so
    /// that a missing kazoo is reported as such rather than as a traceback.
    pub fn prepare(script: PathBuf) -> Result<KazooProgram, String> {
        let python = python();
        let mut probe = Command::new(&python);
        probe.args(["-c", "import kazoo.client"]);
        run_child(&mut probe, PROBE_LIMIT).map_err(|e| {
            format!(
                "{python} cannot import kazoo ({e}); scripts/test installs it into \
                     {VENV_PYTHON}"
            )
        })?;
        Ok(KazooProgram { python, script })
    }

    /// [`prepare`](Self::prepare) for a benchmark binary's embedded Python: writes `sources`
    /// (file name and text: the script first, then the modules it imports, which Python finds
    /// beside it) into `dir` and prepares the first.
    pub fn prepare_embedded(sources: &[(&str, &str)], dir: &Path) -> Result<KazooProgram, String> {
        KazooProgram::prepare(write_files(sources, dir, "Python script to run")?)
    }

    /// `python SCRIPT`; the script's arguments go after it.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.python);
        // The scripts import kazoo_peers from beside them, which is the source tree when the
        // tests run them in place: no __pycache__ there.
        cmd.env("PYTHONDONTWRITEBYTECODE", "1").arg(&self.script);
        cmd
    }
}
