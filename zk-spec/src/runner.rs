//! [`Runner`]: runs checks against a server, each in its own thread under a timeout, with a
//! probe session after every malformed-input check.

use std::{
    fmt,
    net::SocketAddr,
    sync::{mpsc, Arc, Mutex},
    thread,
    time::{Duration, Instant},
};

use crate::{
    check::{fail, Check, Failure, Finding, Outcome},
    ctx::{Conn, Ctx},
    registry, scratch,
    setup::Setup,
};

/// A check's result.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The check.
    pub check: &'static Check,
    /// How it ended.
    pub outcome: Outcome,
    /// How long it took.
    pub elapsed: Duration,
}

/// The results of a run, in the order the checks ran.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// One per check.
    pub results: Vec<CheckReport>,
    /// The whole run's time.
    pub elapsed: Duration,
}

impl Report {
    /// How many checks passed, failed and were skipped.
    pub fn counts(&self) -> (usize, usize, usize) {
        let mut c = (0, 0, 0);
        for r in &self.results {
            match r.outcome {
                Outcome::Passed => c.0 += 1,
                Outcome::Failed(_) => c.1 += 1,
                Outcome::Skipped(_) => c.2 += 1,
            }
        }
        c
    }

    /// True when no check failed.
    pub fn all_passed(&self) -> bool {
        self.counts().1 == 0
    }

    /// The failed checks.
    pub fn failures(&self) -> impl Iterator<Item = &CheckReport> {
        self.results.iter().filter(|r| r.outcome.is_failed())
    }

    /// The result of check `id`, if it ran.
    pub fn get(&self, id: &str) -> Option<&CheckReport> {
        self.results.iter().find(|r| r.check.id == id)
    }
}

/// The run could not start: the server does not serve a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError(pub String);

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot run the checks: {}", self.0)
    }
}

impl std::error::Error for RunError {}

/// Runs checks against the server at an address.
///
/// ```no_run
/// use zk_spec::{Area, Runner};
///
/// let addr = "127.0.0.1:2181".parse().unwrap();
/// let report = Runner::new(addr).run_area(Area::Watches).unwrap();
/// for failed in report.failures() {
///     eprintln!("{}: {:?}", failed.check.id, failed.outcome);
/// }
/// assert!(report.all_passed());
/// ```
#[derive(Debug, Clone)]
pub struct Runner {
    addr: SocketAddr,
    check_timeout: Duration,
    io_timeout: Duration,
    dangerous: bool,
    setup: Arc<Setup>,
}

impl Runner {
    /// A runner with a 20 s limit per check and 3 s per awaited frame.
    pub fn new(addr: SocketAddr) -> Runner {
        Runner {
            addr,
            check_timeout: Duration::from_secs(20),
            io_timeout: Duration::from_secs(3),
            dangerous: false,
            setup: Arc::default(),
        }
    }

    /// What the server is set up for (other ensemble members, TLS, SASL...): the areas
    /// that need it run instead of skipping.
    pub fn setup(mut self, setup: Setup) -> Runner {
        self.setup = Arc::new(setup);
        self
    }

    /// How long one check may take before it fails as hung.
    pub fn check_timeout(mut self, t: Duration) -> Runner {
        self.check_timeout = t;
        self
    }

    /// How long a check waits for any one frame (a server that neither answers nor closes
    /// within it fails the check).
    pub fn io_timeout(mut self, t: Duration) -> Runner {
        self.io_timeout = t;
        self
    }

    /// Also runs the checks that can harm a server with a known bug ([`Check::danger`]);
    /// skipped by default. Only against a throwaway server.
    pub fn dangerous(mut self, on: bool) -> Runner {
        self.dangerous = on;
        self
    }

    /// Runs every check.
    pub fn run_all(&self) -> Result<Report, RunError> {
        self.run(&registry::all(), |_| {})
    }

    /// Runs the checks of `area`.
    pub fn run_area(&self, area: crate::Area) -> Result<Report, RunError> {
        self.run(&registry::in_area(area), |_| {})
    }

    /// Runs the check with id `id`; `None` when there is no such check.
    pub fn run_check(&self, id: &str) -> Result<Option<CheckReport>, RunError> {
        let Some(check) = registry::by_id(id) else {
            return Ok(None);
        };
        Ok(self.run(&[check], |_| {})?.results.pop())
    }

    /// Runs `checks` in order, calling `done` after each; under a fresh root znode, removed
    /// at the end.
    pub fn run(
        &self,
        checks: &[&'static Check],
        mut done: impl FnMut(&CheckReport),
    ) -> Result<Report, RunError> {
        let start = Instant::now();
        let sasl = self.setup.sasl.as_ref();
        let root = match scratch::create(self.addr, self.io_timeout, "zk-spec")
            // A server that requires SASL serves only a logged-in session.
            .or_else(|f| match sasl {
                Some(_) => scratch::create_as(self.addr, self.io_timeout, "zk-spec", sasl),
                None => Err(f),
            }) {
            Ok(root) => root,
            // A read-only member serves no writes: its checks write only to see them refused.
            Err(_) if checks.iter().all(|c| c.area == crate::Area::ReadOnly) => {
                "/zk-spec-read-only".into()
            }
            Err(f) => return Err(RunError(format!("{f:?}"))),
        };
        let mut report = Report::default();
        for check in checks {
            let r = self.run_one(check, &root);
            done(&r);
            report.results.push(r);
        }
        scratch::remove_as(self.addr, self.io_timeout, &root, sasl);
        report.elapsed = start.elapsed();
        Ok(report)
    }

    fn scratch_ctx(&self, base: String) -> Ctx {
        Ctx::new(self.addr, base, self.io_timeout, Arc::default())
    }

    fn run_one(&self, check: &'static Check, root: &str) -> CheckReport {
        let start = Instant::now();
        if let (Some(danger), false) = (check.danger, self.dangerous) {
            return CheckReport {
                check,
                outcome: Outcome::Skipped(format!("dangerous, run with --dangerous: {danger}")),
                elapsed: start.elapsed(),
            };
        }
        // Opened before the check: a malformed input must not harm other sessions.
        let witness = check
            .malformed
            .then(|| self.scratch_ctx(String::new()).session().ok())
            .flatten();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut ctx = Ctx::new(
            self.addr,
            format!("{root}/{}", check.id),
            self.io_timeout,
            log.clone(),
        )
        .with_setup(self.setup.clone());
        let (tx, rx) = mpsc::channel();
        let run = check.run;
        let spawned = thread::Builder::new().name(check.id.into()).spawn(move || {
            let _ = tx.send(run(&mut ctx));
        });
        let result = match spawned {
            Err(e) => Err(fail("a thread to run the check", e.to_string())),
            Ok(_) => match rx.recv_timeout(self.check_timeout) {
                Ok(r) => r,
                Err(mpsc::RecvTimeoutError::Timeout) => Err(fail(
                    format!("the check done within {:?}", self.check_timeout),
                    "still waiting: the server hangs",
                )),
                // A bug in the check, not the server's doing: say so.
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    Err(fail("the check to finish", "the check itself panicked"))
                }
            },
        };
        let result = match (result, check.malformed) {
            (Ok(()), true) => self.probe(witness),
            (r, _) => r,
        };
        let outcome = match result {
            Ok(()) => Outcome::Passed,
            Err(Finding::Skip(why)) => Outcome::Skipped(why),
            Err(Finding::Fail { expected, got }) => Outcome::Failed(Failure {
                expected,
                got,
                known_bug: check.known_bug,
                frames: log.lock().map(|l| l.clone()).unwrap_or_default(),
            }),
        };
        CheckReport {
            check,
            outcome,
            elapsed: start.elapsed(),
        }
    }

    /// After malformed input: the session opened before it still answers, and a new one
    /// is served.
    fn probe(&self, witness: Option<Conn>) -> Result<(), Finding> {
        const WHY: &str = "the server still serves other sessions after the malformed input";
        let mut witness = witness.ok_or_else(|| fail(WHY, "no session before the check"))?;
        let answered = |c: &mut Conn| c.exists("/", false).map(drop);
        answered(&mut witness)
            .map_err(|f| fail(WHY, format!("the session opened before it: {}", got_of(f))))?;
        let _ = witness.close();
        let mut fresh = self
            .scratch_ctx(String::new())
            .session()
            .map_err(|f| fail(WHY, format!("a new session: {}", got_of(f))))?;
        answered(&mut fresh).map_err(|f| fail(WHY, format!("a new session: {}", got_of(f))))?;
        let _ = fresh.close();
        Ok(())
    }
}

fn got_of(f: Finding) -> String {
    match f {
        Finding::Fail { got, .. } => got,
        Finding::Skip(why) => why,
    }
}
