//! `zk-spec HOST:PORT`: runs the conformance checks and prints an h2spec-like report.

use std::{
    io::Write as _,
    net::{SocketAddr, ToSocketAddrs},
    process::ExitCode,
    time::Duration,
};

use zk_spec::{args, registry, report, Area, Runner};

fn main() -> ExitCode {
    let args = match args::parse(std::env::args().skip(1)) {
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
    let mut runner = Runner::new(addr).dangerous(args.dangerous);
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
