//! Time as people and the wire read it: RFC 3339 in UTC, without a date library.

/// The system clock in Unix seconds (0 if it reads before 1970): the one place the daemon asks.
pub fn now_secs() -> u64 {
    now_ms() / 1000
}

/// The system clock in Unix milliseconds (0 if it reads before 1970).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
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
    t.ends_with('Z')
        .then(|| parse_iso_ms(t))
        .flatten()
        .map(|ms| ms / 1000)
}

/// Unix milliseconds of an ISO 8601 date-time as A2A servers write `status.timestamp` (see
/// [`parse_iso`]), a time without a zone read as UTC.
pub fn parse_iso_ms(t: &str) -> Option<u64> {
    parse_iso(t).map(|(ms, _)| ms)
}

/// An offset from UTC as `+HH:MM` or `-HH:MM` (`Z` and `UTC` are `+00:00`), in seconds; `None`
/// for anything else (beyond ±23:59 included).
pub fn parse_offset(t: &str) -> Option<i32> {
    let t = t.trim();
    if t.eq_ignore_ascii_case("z") || t.eq_ignore_ascii_case("utc") {
        return Some(0);
    }
    let b = t.as_bytes();
    let [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] = b else {
        return None;
    };
    let digit = |c: &u8| c.is_ascii_digit().then(|| i32::from(c - b'0'));
    let (h, m) = (digit(h1)? * 10 + digit(h2)?, digit(m1)? * 10 + digit(m2)?);
    if h > 23 || m > 59 {
        return None;
    }
    Some(if *sign == b'-' { -1 } else { 1 } * (h * 3600 + m * 60))
}

/// An offset in seconds as `+HH:MM`.
pub fn offset_name(secs: i32) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let a = secs.unsigned_abs();
    format!("{sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
}

/// Unix milliseconds of an ISO 8601 date-time as A2A servers write `status.timestamp`: `Z`
/// (protobuf JSON, as a2a-sdk writes it), an offset such as `+00:00` (Python's `isoformat()` of
/// an aware time), or none at all (fasta2a writes Python's naive `datetime.now()`, Agent Zero's
/// local time: read here as UTC, and said so — `true` — so the caller can apply the zone the
/// operator says the remote runs in). Fractions past milliseconds are dropped. `None` for
/// anything else. Read byte by byte at fixed places: every poll reads one.
pub fn parse_iso(t: &str) -> Option<(u64, bool)> {
    let b = t.as_bytes();
    let digits = |at: usize, n: usize| -> Option<i64> {
        b.get(at..at + n)?.iter().try_fold(0i64, |acc, c| {
            c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
        })
    };
    let punctuated = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if !punctuated.iter().all(|&(at, c)| b.get(at) == Some(&c)) {
        return None;
    }
    let (y, mo, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (h, mi, s) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = b.get(19..)?;
    let mut ms = 0i64;
    if let Some((b'.', fraction)) = rest.split_first() {
        let n = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        ms = fraction[..n]
            .iter()
            .chain(std::iter::repeat(&b'0'))
            .take(3)
            .fold(0, |acc, c| acc * 10 + i64::from(c - b'0'));
        rest = &fraction[n..];
    }
    let naive = rest.is_empty();
    let offset_secs = match rest {
        [] | [b'Z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (oh, om) = (digits(b.len() - 5, 2)?, digits(b.len() - 2, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let sign = if *sign == b'-' { -1 } else { 1 };
            sign * (oh * 3600 + om * 60)
        }
        _ => return None,
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = y - i64::from(mo <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_secs;
    u64::try_from(secs * 1000 + ms).ok().map(|ms| (ms, naive))
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
        assert_eq!(super::parse_rfc3339("2026-11-30T07:57:37+00:00"), None);
    }

    #[test]
    fn status_timestamps_as_servers_write_them() {
        let at = 1_796_025_457_000;
        for (t, ms) in [
            ("2026-11-30T07:57:37.000Z", at),
            ("2026-11-30T07:57:37Z", at),
            ("2026-11-30T07:57:37.123456+00:00", at + 123),
            ("2026-11-30T07:57:37.5", at + 500),
            ("2026-11-30T09:57:37+02:00", at),
            ("2026-11-30T02:27:37.25-05:30", at + 250),
        ] {
            assert_eq!(super::parse_iso_ms(t), Some(ms), "{t}");
        }
        for t in [
            "2026-11-30",
            "2026-11-30T07:57",
            "2026-11-30T07:57:37.",
            "2026-11-30T07:57:37+0200",
            "2026-11-30T24:00:00Z",
            "2026-1-30T07:57:37Z",
            "2026-11-30T07:57:37.1e3Z",
            "+2026-11-30T07:57:37Z",
        ] {
            assert_eq!(super::parse_iso_ms(t), None, "{t}");
        }
        for ms in [
            0,
            999,
            951_782_400_001,
            1_796_025_457_123,
            4_102_444_799_999,
        ] {
            assert_eq!(super::parse_iso_ms(&super::iso_time(ms)), Some(ms));
        }
    }

    #[test]
    fn a_time_without_a_zone_says_so_and_offsets_read_both_ways() {
        assert_eq!(
            super::parse_iso("2026-11-30T07:57:37"),
            Some((1_796_025_457_000, true))
        );
        assert_eq!(
            super::parse_iso("2026-11-30T07:57:37Z"),
            Some((1_796_025_457_000, false))
        );
        assert_eq!(
            super::parse_iso("2026-11-30T08:57:37+01:00"),
            Some((1_796_025_457_000, false))
        );
        for (text, secs) in [
            ("+02:00", 7200),
            ("-05:30", -19_800),
            ("Z", 0),
            ("utc", 0),
            ("+00:00", 0),
        ] {
            assert_eq!(super::parse_offset(text), Some(secs), "{text}");
            assert_eq!(super::parse_offset(&super::offset_name(secs)), Some(secs));
        }
        for bad in ["+24:00", "2:00", "+02", "+02:60", "east", ""] {
            assert_eq!(super::parse_offset(bad), None, "{bad}");
        }
    }

    #[test]
    fn known_instants() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(super::rfc3339(1_796_025_457), "2026-11-30T07:57:37.000Z");
    }
}
