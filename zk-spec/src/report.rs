//! Reports: the h2spec-like text tree, JSON and JUnit XML.

use std::fmt::Write as _;

use zk_testkit::raw::hex;

use crate::{
    check::{Area, Failure, Outcome},
    runner::{CheckReport, Report},
};

/// The heading printed before the first check of `area`.
pub fn area_heading(area: Area) -> String {
    let n = Area::ALL
        .iter()
        .position(|a| *a == area)
        .map_or(0, |i| i + 1);
    format!("{n}. {} [{}]", area.title(), area.name())
}

/// The line (and with `verbose`, the details) for one check.
pub fn check_line(r: &CheckReport, verbose: bool) -> String {
    let c = r.check;
    match &r.outcome {
        Outcome::Passed => format!("  \u{2714} {}: {}", c.id, c.title),
        Outcome::Skipped(why) => format!("  - {}: {} (skipped: {why})", c.id, c.title),
        Outcome::Failed(f) => {
            let mut s = format!("  \u{00d7} {}: {}", c.id, c.title);
            s.push('\n');
            s.push_str(&failure_details(c.rule, f, verbose, 4));
            s
        }
    }
}

fn failure_details(rule: &str, f: &Failure, verbose: bool, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut s = String::new();
    let _ = writeln!(s, "{pad}-> {rule}");
    let _ = writeln!(s, "{pad}   expected: {}", f.expected);
    let _ = writeln!(s, "{pad}        got: {}", f.got);
    if let Some(bug) = f.known_bug {
        let _ = writeln!(s, "{pad}  known bug: {bug}");
    }
    if verbose {
        for fr in &f.frames {
            let dir = if fr.sent { ">" } else { "<" };
            let lead = format!("{pad}   {dir} c{} ", fr.conn);
            let _ = writeln!(s, "{lead}{}", hex(&fr.bytes, lead.len()));
        }
    }
    s.trim_end().to_string()
}

/// The summary line: counts and time.
pub fn summary(report: &Report) -> String {
    let (passed, failed, skipped) = report.counts();
    let known = report
        .failures()
        .filter(|r| matches!(&r.outcome, Outcome::Failed(f) if f.known_bug.is_some()))
        .count();
    let known = if known > 0 {
        format!(
            " ({known} known server bug{})",
            if known == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    format!(
        "{} checks, {passed} passed, {failed} failed{known}, {skipped} skipped in {:.1} s",
        report.results.len(),
        report.elapsed.as_secs_f64()
    )
}

/// The failures again, after the tree.
pub fn failures(report: &Report, verbose: bool) -> String {
    let mut s = String::new();
    for r in report.failures() {
        if let Outcome::Failed(f) = &r.outcome {
            let _ = writeln!(s, "{}: {}", r.check.id, r.check.title);
            let _ = writeln!(s, "{}", failure_details(r.check.rule, f, verbose, 2));
        }
    }
    s
}

/// A JSON string literal.
fn js(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The report as one JSON object: target, counts, and a result per check.
pub fn json(report: &Report, target: &str) -> String {
    let (passed, failed, skipped) = report.counts();
    let mut s = format!(
        "{{\"target\":{},\"passed\":{passed},\"failed\":{failed},\"skipped\":{skipped},\"seconds\":{:.3},\"checks\":[",
        js(target),
        report.elapsed.as_secs_f64()
    );
    for (i, r) in report.results.iter().enumerate() {
        let c = r.check;
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            "{{\"id\":{},\"area\":{},\"title\":{},\"rule\":{},\"seconds\":{:.3},",
            js(c.id),
            js(c.area.name()),
            js(c.title),
            js(c.rule),
            r.elapsed.as_secs_f64()
        );
        match &r.outcome {
            Outcome::Passed => s.push_str("\"result\":\"passed\"}"),
            Outcome::Skipped(why) => {
                let _ = write!(s, "\"result\":\"skipped\",\"why\":{}}}", js(why));
            }
            Outcome::Failed(f) => {
                let frames: Vec<String> = f
                    .frames
                    .iter()
                    .map(|fr| {
                        format!(
                            "{{\"conn\":{},\"dir\":\"{}\",\"hex\":{}}}",
                            fr.conn,
                            if fr.sent { "sent" } else { "received" },
                            js(&fr
                                .bytes
                                .iter()
                                .map(|b| format!("{b:02x}"))
                                .collect::<String>())
                        )
                    })
                    .collect();
                let _ = write!(
                    s,
                    "\"result\":\"failed\",\"expected\":{},\"got\":{},\"known_bug\":{},\"frames\":[{}]}}",
                    js(&f.expected),
                    js(&f.got),
                    f.known_bug.map_or("null".into(), js),
                    frames.join(",")
                );
            }
        }
    }
    s.push_str("]}");
    s
}

/// XML text or attribute content.
fn xml(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '<' => "&lt;".into(),
            '>' => "&gt;".into(),
            '&' => "&amp;".into(),
            '"' => "&quot;".into(),
            '\'' => "&apos;".into(),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => format!("&#{};", c as u32),
            c => c.to_string(),
        })
        .collect()
}

/// The report as JUnit XML: a testsuite per area.
pub fn junit(report: &Report) -> String {
    let mut s =
        String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"zk-spec\">\n");
    for area in Area::ALL {
        let rs: Vec<&CheckReport> = report
            .results
            .iter()
            .filter(|r| r.check.area == *area)
            .collect();
        if rs.is_empty() {
            continue;
        }
        let failed = rs.iter().filter(|r| r.outcome.is_failed()).count();
        let skipped = rs
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Skipped(_)))
            .count();
        let _ = writeln!(
            s,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" skipped=\"{skipped}\">",
            area.name(),
            rs.len()
        );
        for r in rs {
            let _ = write!(
                s,
                "    <testcase classname=\"zk-spec.{}\" name=\"{}\" time=\"{:.3}\"",
                area.name(),
                xml(r.check.id),
                r.elapsed.as_secs_f64()
            );
            match &r.outcome {
                Outcome::Passed => s.push_str("/>\n"),
                Outcome::Skipped(why) => {
                    let _ = writeln!(s, "><skipped message=\"{}\"/></testcase>", xml(why));
                }
                Outcome::Failed(f) => {
                    let _ = writeln!(
                        s,
                        "><failure message=\"{}\">{}</failure></testcase>",
                        xml(&format!("expected {}; got {}", f.expected, f.got)),
                        xml(&failure_details(r.check.rule, f, true, 0))
                    );
                }
            }
        }
        s.push_str("  </testsuite>\n");
    }
    s.push_str("</testsuites>\n");
    s
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{check::Frame, registry};

    fn sample() -> Report {
        let checks = registry::all();
        Report {
            results: vec![
                CheckReport {
                    check: checks[0],
                    outcome: Outcome::Passed,
                    elapsed: Duration::from_millis(3),
                },
                CheckReport {
                    check: checks[1],
                    outcome: Outcome::Failed(Failure {
                        expected: "a \"quoted\" <thing>".into(),
                        got: "other\nline".into(),
                        known_bug: Some("ZOOKEEPER-1"),
                        frames: vec![Frame {
                            conn: 1,
                            sent: true,
                            bytes: vec![0, 0, 0, 1, 0xff],
                        }],
                    }),
                    elapsed: Duration::from_millis(4),
                },
                CheckReport {
                    check: checks[2],
                    outcome: Outcome::Skipped("off".into()),
                    elapsed: Duration::ZERO,
                },
            ],
            elapsed: Duration::from_millis(1500),
        }
    }

    #[test]
    fn summary_counts_and_names_known_bugs() {
        assert_eq!(
            summary(&sample()),
            "3 checks, 1 passed, 1 failed (1 known server bug), 1 skipped in 1.5 s"
        );
    }

    #[test]
    fn failed_line_shows_frames_only_when_verbose() {
        let r = &sample().results[1];
        assert!(!check_line(r, false).contains("00000001 ff"));
        let v = check_line(r, true);
        assert!(v.contains("> c1 00000001 ff"), "{v}");
        assert!(v.contains("known bug: ZOOKEEPER-1"));
    }

    #[test]
    fn json_and_junit_escape() {
        let j = json(&sample(), "127.0.0.1:1");
        assert!(
            j.contains(r#""expected":"a \"quoted\" <thing>","got":"other\nline""#),
            "{j}"
        );
        assert!(j.contains(r#""hex":"00000001ff""#));
        assert!(j.contains(r#""passed":1,"failed":1,"skipped":1"#));
        let x = junit(&sample());
        assert!(x.contains("a &quot;quoted&quot; &lt;thing&gt;"), "{x}");
        assert!(x.contains("<skipped message=\"off\"/>"));
        assert_eq!(x.matches("<testcase").count(), 3);
    }
}
