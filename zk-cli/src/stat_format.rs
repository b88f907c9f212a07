//! A Stat as zkCli shows it (zxids in hex; times here in ISO 8601, UTC) and as JSON.

use serde_json::{json, Value};
use zk_session::Stat;

/// zkCli's lines, in zkCli's order and names.
pub fn text(s: &Stat) -> String {
    format!(
        "cZxid = {:#x}\nctime = {}\nmZxid = {:#x}\nmtime = {}\npZxid = {:#x}\n\
         cversion = {}\ndataVersion = {}\naclVersion = {}\nephemeralOwner = {:#x}\n\
         dataLength = {}\nnumChildren = {}\n",
        s.czxid,
        iso8601(s.ctime),
        s.mzxid,
        iso8601(s.mtime),
        s.pzxid,
        s.cversion,
        s.version,
        s.aversion,
        s.ephemeral_owner,
        s.data_length,
        s.num_children
    )
}

/// The same fields as JSON. Every `--json` key of zk is lowerCamelCase; a Stat's keys are the
/// names of ZooKeeper's Java `Stat` (`czxid`, `ephemeralOwner`, `dataLength`...), with the
/// times as ISO 8601 text (`ctime`, `mtime`) and as milliseconds since the epoch (`ctimeMs`,
/// `mtimeMs`).
pub fn json(s: &Stat) -> Value {
    json!({
        "czxid": s.czxid,
        "mzxid": s.mzxid,
        "pzxid": s.pzxid,
        "ctime": iso8601(s.ctime),
        "ctimeMs": s.ctime,
        "mtime": iso8601(s.mtime),
        "mtimeMs": s.mtime,
        "version": s.version,
        "cversion": s.cversion,
        "aversion": s.aversion,
        "ephemeralOwner": s.ephemeral_owner,
        "dataLength": s.data_length,
        "numChildren": s.num_children,
    })
}

/// Milliseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn iso8601(ms: i64) -> String {
    let (days, ms_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let s = ms_of_day / 1000;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s / 60 % 60,
        s % 60,
        ms_of_day % 1000
    )
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (eras of 400 years, whose
/// calendar repeats exactly; years taken to start in March so the leap day comes last).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_known_instants() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.789
        assert_eq!(iso8601(951_827_696_789), "2000-02-29T12:34:56.789Z");
        assert_eq!(iso8601(1_709_251_199_999), "2024-02-29T23:59:59.999Z");
        assert_eq!(iso8601(1_709_251_200_000), "2024-03-01T00:00:00.000Z");
        assert_eq!(iso8601(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn text_has_zkclis_lines() {
        let s = Stat {
            czxid: 0x1a,
            ephemeral_owner: 0x100,
            data_length: 5,
            ..Stat::default()
        };
        let t = text(&s);
        assert!(t.starts_with("cZxid = 0x1a\nctime = 1970-01-01T00:00:00.000Z\n"));
        assert!(t.contains("ephemeralOwner = 0x100\ndataLength = 5\n"));
        assert_eq!(json(&s)["dataLength"], 5);
    }
}
