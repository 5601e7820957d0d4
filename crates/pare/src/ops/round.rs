//! `round`: give numbers at most N decimals.
//!
//! Why: `0.627281` and `0.63` rank results the same for a model, and the digits cost tokens
//! ("precision noise"). Only numbers with more decimals than asked change;
//! rounding is half away from zero, done in decimal on the number's text (so long integers
//! and exponents are exact), and trailing zeros are dropped (`0.601` → `0.6` at 2). Changed
//! numbers are recorded.
//!
//! ```toml
//! [[ops]]
//! op = "round"
//! at = ["$..score"]
//! decimals = 2
//! ```
//!
//! In: `{"results":[{"id":7,"score":0.627281},{"id":8,"score":0.601}]}`
//! Out: `{"results":[{"id":7,"score":0.63},{"id":8,"score":0.6}]}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::manifest::Kind;
use crate::value::{Number, Value};

/// Options of `round`. Rounding is half away from zero, in decimal on the number's text.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoundSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the numbers to round.
    pub at: Vec<String>,
    /// Decimals to keep (0–15).
    pub decimals: u32,
}

/// `round` compiled: its selectors (indices into the policy's selector set) and decimals.
#[derive(Debug)]
pub struct Round {
    at: Vec<usize>,
    decimals: usize,
}

impl RoundSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Round, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        if self.decimals > 15 {
            return Err(cx.error(
                "decimals",
                format!("{} is out of range 0–15", self.decimals),
            ));
        }
        Ok(Round {
            at: cx.selectors("at", &self.at)?,
            decimals: self.decimals as usize,
        })
    }
}

/// `n` rounded half away from zero to `decimals` decimals, trailing zeros dropped; `None`
/// if it has no more decimals than that. Done in decimal on the lexeme, never through `f64`,
/// so long integers keep every digit and `1e300` stays `1e300`.
pub(crate) fn round_number(n: &Number, decimals: usize) -> Option<Number> {
    let lexeme = n.as_str();
    let (negative, unsigned) = match lexeme.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, lexeme),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], unsigned[i + 1..].parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // value = digits × 10^(exponent − frac_len): count the fraction digits that follows.
    let digits: Vec<u8> = int_part
        .bytes()
        .chain(frac_part.bytes())
        .map(|b| b - b'0')
        .collect();
    let scale = frac_part.len() as i64 - exponent; // digits after the point
    if scale <= decimals as i64 {
        return None;
    }
    let drop = (scale - decimals as i64) as usize; // trailing digits to cut
    let (mut kept, round_up) = if drop > digits.len() {
        (Vec::new(), false)
    } else {
        let cut = digits.len() - drop;
        (digits[..cut].to_vec(), digits[cut] >= 5)
    };
    if round_up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, 1);
                break;
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    // `kept` holds the value × 10^decimals; split it into integer and fraction digits.
    while kept.len() <= decimals {
        kept.insert(0, 0);
    }
    let split = kept.len() - decimals;
    let int: String = kept[..split].iter().map(|d| char::from(b'0' + d)).collect();
    let int = int.trim_start_matches('0');
    let frac: String = kept[split..].iter().map(|d| char::from(b'0' + d)).collect();
    let frac = frac.trim_end_matches('0');
    let mut text = String::new();
    let zero = int.is_empty() && frac.is_empty();
    if negative && !zero {
        text.push('-');
    }
    text.push_str(if int.is_empty() { "0" } else { int });
    if !frac.is_empty() {
        text.push('.');
        text.push_str(frac);
    }
    let rounded = Number::from_lexeme(&text)?;
    (rounded != *n).then_some(rounded)
}

impl Op for Round {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Number(n) = node else { return };
        if !cx.matches_any(&self.at) {
            return;
        }
        if let Some(r) = round_number(n, self.decimals) {
            *n = r;
            cx.rec.here(Kind::Rounded, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str, d: usize) -> Option<String> {
        round_number(&Number::from_lexeme(s).unwrap(), d).map(|n| n.as_str().to_owned())
    }

    #[test]
    fn rounds_only_what_has_more_decimals() {
        assert_eq!(r("0.627281", 2).as_deref(), Some("0.63"));
        assert_eq!(r("0.601", 2).as_deref(), Some("0.6"));
        assert_eq!(r("20.0", 2), None);
        assert_eq!(r("7", 0), None);
        assert_eq!(r("1.5e-7", 3).as_deref(), Some("0"));
        assert_eq!(r("-0.0001", 2).as_deref(), Some("0"));
        assert_eq!(r("0.995", 2).as_deref(), Some("1"));
        assert_eq!(r("-2.675", 2).as_deref(), Some("-2.68"));
        assert_eq!(r("9.999", 0).as_deref(), Some("10"));
        assert_eq!(r("1.2345e2", 1).as_deref(), Some("123.5"));
        assert_eq!(r("5e-1", 0).as_deref(), Some("1"));
        assert_eq!(r("4.9e-1", 0).as_deref(), Some("0"));
    }

    #[test]
    fn regression_round_keeps_exponents_and_long_numbers() {
        assert_eq!(r("1e300", 2), None);
        assert_eq!(r("-2.5E+30", 2), None);
        assert_eq!(
            r("12345678901234567890.123", 2).as_deref(),
            Some("12345678901234567890.12")
        );
        assert_eq!(
            r("12345678901234567890.125", 2).as_deref(),
            Some("12345678901234567890.13")
        );
    }
}
