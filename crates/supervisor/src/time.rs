//! Time as people and the wire read it: RFC 3339 in UTC, without a date library.

/// The system clock in Unix seconds (0 if it reads before 1970): the one place the daemon asks.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Unix milliseconds as RFC 3339 (UTC, millisecond precision), e.g. `2026-11-30T08:00:00.000Z`.
pub fn iso_time(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!(
        "{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.{:03}Z",
        ms % 1000
    )
}

/// Unix seconds as RFC 3339 (UTC).
pub fn rfc3339(secs: u64) -> String {
    iso_time(secs.saturating_mul(1000))
}

/// Unix seconds of an RFC 3339 time in UTC (`Z`) as [`rfc3339`] writes it (fractions ignored);
/// `None` for anything else.
pub fn parse_rfc3339(t: &str) -> Option<u64> {
    let t = t.strip_suffix('Z')?;
    let (date, clock) = t.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, mo, day) = (d.next()??, d.next()??, d.next()??);
    let clock = clock.split('.').next()?;
    let mut c = clock.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, mi, s) = (c.next()??, c.next()??, c.next()??);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = y - i64::from(mo <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + mi * 60 + s).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn parsed_back() {
        for t in [0, 1_796_025_457, 951_782_400, 4_102_444_799] {
            assert_eq!(super::parse_rfc3339(&super::rfc3339(t)), Some(t));
        }
        assert_eq!(super::parse_rfc3339("2026-13-01T00:00:00Z"), None);
        assert_eq!(super::parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn known_instants() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(super::rfc3339(1_796_025_457), "2026-11-30T07:57:37.000Z");
    }
}
