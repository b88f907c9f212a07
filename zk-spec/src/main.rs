//! `zk-spec HOST:PORT`: runs the conformance checks and prints an h2spec-like report.

use std::{
    io::Write as _,
    net::{SocketAddr, ToSocketAddrs},
    process::ExitCode,
    time::Duration,
};

use zk_spec::{
    args,
    fuzz::{self, Case, FuzzConfig},
    registry, report, Area, Runner,
};

fn main() -> ExitCode {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("fuzz") {
        argv.remove(0);
        return fuzz_main(argv);
    }
    let args = match args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("zk-spec: {e}");
            }
            eprintln!("{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    if args.list {
        for c in registry::all() {
            println!("{:<44} {}", c.id, c.title);
        }
        return ExitCode::SUCCESS;
    }
    let checks = registry::select(args.area, args.check.as_deref());
    if checks.is_empty() {
        eprintln!("zk-spec: no check matches");
        return ExitCode::from(2);
    }
    let addr = match resolve(&args.target) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("zk-spec: {}: {e}", args.target);
            return ExitCode::from(2);
        }
    };
    let setup = match args
        .setup
        .to_setup(|t| resolve(t).map_err(|e| format!("{t}: {e}")))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("zk-spec: {e}");
            return ExitCode::from(2);
        }
    };
    let mut runner = Runner::new(addr).dangerous(args.dangerous).setup(setup);
    if let Some(secs) = args.io_timeout_secs {
        runner = runner.io_timeout(Duration::from_secs_f64(secs));
    }
    if !args.json {
        println!(
            "zk-spec {}: {} checks against {}\n",
            env!("CARGO_PKG_VERSION"),
            checks.len(),
            args.target
        );
    }
    let mut area: Option<Area> = None;
    let result = runner.run(&checks, |r| {
        if args.json {
            return;
        }
        if area != Some(r.check.area) {
            if area.is_some() {
                println!();
            }
            println!("{}", report::area_heading(r.check.area));
            area = Some(r.check.area);
        }
        println!("{}", report::check_line(r, args.verbose));
        let _ = std::io::stdout().flush();
    });
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("zk-spec: {e}");
            return ExitCode::from(2);
        }
    };
    if args.json {
        println!("{}", report::json(&report, &args.target));
    } else {
        let failures = report::failures(&report, args.verbose);
        if !failures.is_empty() {
            println!("\nFailures:\n\n{failures}");
        }
        println!("\n{}", report::summary(&report));
    }
    if let Some(path) = &args.junit {
        if let Err(e) = std::fs::write(path, report::junit(&report)) {
            eprintln!("zk-spec: cannot write {path}: {e}");
            return ExitCode::from(2);
        }
    }
    if report.all_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn resolve(target: &str) -> std::io::Result<SocketAddr> {
    target
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))
}

fn fuzz_main(argv: Vec<String>) -> ExitCode {
    let args = match args::parse_fuzz(argv) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("zk-spec fuzz: {e}");
            }
            eprintln!("{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    let addr = match resolve(&args.target) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("zk-spec fuzz: {}: {e}", args.target);
            return ExitCode::from(2);
        }
    };
    let mut config = FuzzConfig::new(addr, args.duration.unwrap_or(Duration::from_secs(60)));
    if let Some(file) = &args.replay {
        return replay_main(&config, file);
    }
    config.sessions = args.sessions.unwrap_or(config.sessions);
    config.rate = args.rate.unwrap_or(config.rate);
    config.seed = args.seed.unwrap_or(config.seed);
    config.out_dir = Some(args.out.clone().unwrap_or_else(|| ".".into()).into());
    println!(
        "zk-spec fuzz: {} for {:?}, {} sessions, {} requests/s, seed {}",
        args.target, config.duration, config.sessions, config.rate, config.seed
    );
    let report = match fuzz::run(&config) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("zk-spec fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "{} requests ({} mutated), {} connections closed by the server, {} cut, {} probes served in {:.1} s",
        report.requests,
        report.mutated,
        report.closes,
        report.cuts,
        report.probes,
        report.elapsed.as_secs_f64()
    );
    for f in &report.findings {
        println!(
            "FOUND: {} ({} frames, shrunk from {}, {}){}",
            f.case.what,
            f.case.steps.len(),
            f.original_len,
            if f.reproduced {
                "reproduced"
            } else {
                "not reproduced on replay"
            },
            f.saved
                .as_ref()
                .map_or(String::new(), |p| format!(": saved to {}", p.display()))
        );
    }
    if report.findings.is_empty() {
        println!("nothing found");
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn replay_main(config: &FuzzConfig, file: &str) -> ExitCode {
    let case = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|t| Case::from_text(&t))
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("zk-spec fuzz: {file}: {e}");
            return ExitCode::from(2);
        }
    };
    println!("replaying {} frames ({})", case.steps.len(), case.what);
    match fuzz::case::replay(config.addr, &case.steps, config.io_timeout) {
        Some(what) => {
            println!("FOUND: {what}");
            ExitCode::from(1)
        }
        None => {
            println!("the server handled it");
            ExitCode::SUCCESS
        }
    }
}
