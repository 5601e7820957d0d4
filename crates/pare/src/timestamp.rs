//! Timestamps of the payloads pare shapes: ISO 8601 / RFC 3339 to seconds, for `merge`'s gaps
//! and spans. Hand-written because it is one small function (no date crate in the engine).

/// Seconds since 1970 of an ISO 8601 / RFC 3339 timestamp: `YYYY-MM-DD[T ]HH:MM[:SS[.f]]`
/// with an optional `Z` or `±HH[:]MM`. Times without an offset are taken as UTC, which is
/// right for differences between timestamps of one payload.
pub(crate) fn parse_timestamp(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let year = num(0..4)?;
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let month = num(5..7)?;
    let day = num(8..10)?;
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') {
        return None;
    }
    let hour = num(11..13)?;
    let minute = num(14..16)?;
    let mut i = 16;
    let mut second = 0.0;
    if b.get(i) == Some(&b':') {
        let whole = num(i + 1..i + 3)? as f64;
        i += 3;
        let mut frac = String::from("0");
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            i = start;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            frac = format!("0.{}", std::str::from_utf8(&b[start..i]).ok()?);
        }
        second = whole + frac.parse::<f64>().ok()?;
    }
    let offset = match b.get(i) {
        None => 0,
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) => {
            let oh = num(i + 1..i + 3)?;
            let om = match b.get(i + 3) {
                Some(b':') => num(i + 4..i + 6)?,
                _ => num(i + 3..i + 5)?,
            };
            let total = (oh * 60 + om) * 60;
            if *sign == b'+' { total } else { -total }
        }
        _ => return None,
    };
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 24
        || minute > 59
        || second >= 61.0
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((days * 86400 + hour * 3600 + minute * 60 - offset) as f64 + second)
}

/// Days since 1970-01-01 (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

#[cfg(test)]
mod tests {
    use super::parse_timestamp;

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(parse_timestamp("1970-01-01T01:00:00+01:00"), Some(0.0));
        assert_eq!(
            parse_timestamp("2026-02-17T09:20:00").unwrap()
                - parse_timestamp("2026-02-17T09:00:00").unwrap(),
            1200.0
        );
        assert_eq!(
            parse_timestamp("2026-02-17T09:00:00.5Z").unwrap() % 1.0,
            0.5
        );
        assert_eq!(
            parse_timestamp("2000-03-01T00:00Z").unwrap()
                - parse_timestamp("2000-02-28T00:00Z").unwrap(),
            2.0 * 86400.0
        );
        for bad in [
            "",
            "2026-02-17",
            "2026-13-01T00:00:00",
            "2026-02-17T09:00:00Q",
            "yesterday",
            "2026-02-17T09:0a:00",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }
}
