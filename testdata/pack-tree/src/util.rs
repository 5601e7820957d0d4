/// Formats cents as `12.34`.
pub fn format_cents(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

// Not documented: plain comments don't attach in Rust.
fn parse_cents(text: &str) -> Option<i64> {
    let (whole, frac) = text.split_once('.')?;
    Some(whole.parse::<i64>().ok()? * 100 + frac.parse::<i64>().ok()?)
}
