//! `round`: give numbers at most N decimals.
//!
//! Why: `0.627281` and `0.63` rank results the same for a model, and the digits cost tokens
//! (seed 001 calls it "precision noise"). Only numbers with more decimals than asked change;
//! trailing zeros of a rounded number are dropped (`0.601` → `0.6` at 2). Changed numbers are
//! recorded.
//!
//! ```toml
//! [[ops]]
//! op = "round"   # {"score":0.627281} → {"score":0.63}
//! at = ["$..score"]
//! decimals = 2
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ApplyCx, Op};
use crate::manifest::Kind;
use crate::policy::{CompileCx, PolicyError};
use crate::value::{Number, Value};

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
            return Err(cx.error("decimals", format!("{} is out of range 0–15", self.decimals)));
        }
        Ok(Round {
            at: cx.selectors("at", &self.at)?,
            decimals: self.decimals as usize,
        })
    }
}

/// `n` rounded to `decimals`, trailing zeros dropped; `None` if it has no more decimals.
pub(crate) fn round_number(n: &Number, decimals: usize) -> Option<Number> {
    if n.decimals() <= decimals && !n.as_str().contains(['e', 'E']) {
        return None;
    }
    let f = n.as_f64()?;
    let mut text = Number::from_f64_fixed(f, decimals)?.as_str().to_owned();
    if text.contains('.') {
        let trimmed = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(trimmed);
    }
    if text == "-0" {
        text = "0".into();
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
    }
}
