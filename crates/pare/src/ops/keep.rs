//! `keep`: an allow-list — the selected objects keep only the named fields.
//!
//! Why: progressive disclosure (show little first, more on request). At `ids_only` a search result needs its id,
//! score and rank and nothing else; listing what stays is shorter and safer than listing
//! everything that goes, and new upstream fields stay out until someone asks for them.
//!
//! ```toml
//! levels = ["ids_only", "standard", "full"]
//! default_level = "ids_only"
//!
//! [[ops]]
//! op = "keep"
//! levels = ["ids_only"]
//! at = ["$.results[*]"]
//! fields = ["chunk_id", "hybrid_score", "rank"]
//! ```
//!
//! In: `{"results":[{"chunk_id":1,"rank":1,"chunk_text":"fn main() {}","hybrid_score":0.9}]}`
//! Out: `{"results":[{"chunk_id":1,"rank":1,"hybrid_score":0.9}]}`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::compile::{CompileCx, PolicyError};
use super::{ApplyCx, Op};
use crate::manifest::Kind;
use crate::value::Value;

/// Options of `keep`: an allow-list; other members of the selected objects are removed.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeepSpec {
    /// Levels this op runs at. Default: every level but `full`.
    #[serde(default)]
    pub levels: Option<Vec<String>>,
    /// The objects to filter (selectors).
    pub at: Vec<String>,
    /// The fields they keep; the object's own order is kept.
    pub fields: Vec<String>,
}

/// `keep` compiled: its selectors (indices into the policy's selector set) and fields.
#[derive(Debug)]
pub struct Keep {
    at: Vec<usize>,
    fields: Vec<String>,
}

impl KeepSpec {
    pub(crate) fn compile(&self, cx: &mut CompileCx) -> Result<Keep, PolicyError> {
        if self.at.is_empty() {
            return Err(cx.error("at", "name at least one selector"));
        }
        Ok(Keep {
            at: cx.selectors("at", &self.at)?,
            fields: self.fields.clone(),
        })
    }
}

impl Op for Keep {
    fn apply(&self, node: &mut Value, cx: &mut ApplyCx<'_, '_>) {
        let Value::Object(map) = node else { return };
        if !cx.matches_any(&self.at) {
            return;
        }
        let rec = &mut *cx.rec;
        map.retain(|k, _| {
            let keep = self.fields.iter().any(|f| f == k);
            if !keep {
                rec.key(Kind::Stripped, k, 1);
            }
            keep
        });
    }
}
