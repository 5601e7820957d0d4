//! `tier`: replace a number by the label of the band it falls in.
//!
//! Why: a model reads `"high"` as well as `0.92`, and score tiers cost fewer
//! tokens than "precision noise". Bands are checked from the highest `min` down; a number
//! below every band keeps its value unless `below` names a label. Replaced numbers are
//! recorded.
//!
//! ```toml
//! [[ops]]
//! op = "tier"
//! at = ["$..score"]
//! tiers = [{ min = 0.8, label = "high" }, { min = 0.5, label = "medium" }]
//! below = "low"
//! ```
//!
//! In: `{"results":[{"score":0.92},{"score":0.6},{"score":0.1}]}`
//! Out: `{"results":[{"score":"high"},{"score":"medium"},{"score":"low"}]}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::manifest::Kind;
use crate::value::Value;

/// Options of `tier`. Bands are checked from the highest `min` down.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// Selectors of the numbers to label.
    pub at: Vec<String>,
    /// The bands: a number ≥ `min` gets `label` (the highest matching band wins).
    pub tiers: Vec<TierBand>,
    /// The label for numbers below every band. Default: keep the number.
    #[serde(default)]
    pub below: Option<String>,
}

/// One band of `tier`: a lower bound and its label.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TierBand {
    /// The band's lower bound: numbers ≥ `min` (and below the next band up) get its label.
    pub min: f64,
    /// The label that replaces them.
    pub label: String,
}

/// `tier` compiled: its selectors (indices into the policy's selector set) and bands.
#[derive(Debug)]
pub struct Tier {
    at: Vec<usize>,
    /// Highest `min` first.
    bands: Vec<(f64, String)>,
    below: Option<String>,
}

impl TierSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Tier, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        if self.tiers.is_empty() {
            return Err(cx.error("tiers", "name at least one band"));
        }
        if let Some(b) = self.tiers.iter().find(|b| !b.min.is_finite()) {
            return Err(cx.error("tiers", format!("band `{}` needs a finite min", b.label)));
        }
        let mut bands: Vec<(f64, String)> = self
            .tiers
            .iter()
            .map(|b| (b.min, b.label.clone()))
            .collect();
        bands.sort_by(|a, b| b.0.total_cmp(&a.0));
        Ok(Tier {
            at: cx.selectors("at", &self.at)?,
            bands,
            below: self.below.clone(),
        })
    }
}

impl Op for Tier {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Some(x) = node.as_f64() else { return };
        if !cx.matches_any(&self.at) {
            return;
        }
        let label = self
            .bands
            .iter()
            .find(|(min, _)| x >= *min)
            .map(|(_, l)| l)
            .or(self.below.as_ref());
        if let Some(label) = label {
            *node = Value::from(label.as_str());
            cx.rec.here(Kind::Tiered, 1);
        }
    }
}
