//! One search response packed under a budget: the chunks read out of it by the `[pack]`
//! field mapping, the level's tier cap, the response's `total`, page 1 or the page a
//! cursor names. What `pare pack FILE` and the Python package's `pare.pack()` both do, so
//! they give the same text.
//!
//! ```
//! use pare::pack::{cache::PreviewCache, response::pack_response};
//! use pare::schema::pack::PackOptions;
//! let input = pare::json::parse(r#"{"results":[{"id":"a","score":0.9,"text":"hello"}]}"#).unwrap();
//! let tok = pare::tokens::builtin("o200k_base").unwrap();
//! let opts = PackOptions::default();
//! let packed = pack_response(&input, &opts, "full", 200, tok, None, None, &mut PreviewCache::new(8)).unwrap();
//! assert!(packed.text.contains("hello") && packed.tokens <= 200);
//! ```

use super::cache::PreviewCache;
use super::{PackError, PackSettings, Packed, Tier, chunks, pack, pack_from_cursor};
use crate::policy::Policy;
use crate::schema::pack::PackOptions;
use crate::tokens::Tokenizer;
use crate::value::Value;

/// Pack the search response `input` (see the module doc); with `query`, ranked by its
/// relevance blended with the upstream score ([`PackSettings::query`]).
#[allow(clippy::too_many_arguments)]
pub fn pack_response(
    input: &Value,
    options: &PackOptions,
    level: &str,
    budget: usize,
    tokenizer: &dyn Tokenizer,
    cursor: Option<&str>,
    query: Option<&str>,
    cache: &mut PreviewCache,
) -> Result<Packed, PackError> {
    let list = chunks::from_response(input, options)?;
    let settings = PackSettings {
        options,
        budget,
        tokenizer,
        max_tier: Tier::cap_for_level(level),
        level,
        total: chunks::total(input, options),
        cursor_in_text: true,
        query,
    };
    match cursor {
        Some(c) => pack_from_cursor(&list, &settings, cache, c),
        None => Ok(pack(&list, &settings, cache)),
    }
}

/// Why [`setup`] could not say how to pack.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SetupError {
    /// The level named is not one of the policy's.
    #[error("unknown level `{name}`; this policy's levels: {}", levels.join(", "))]
    Level {
        /// The level as named.
        name: String,
        /// The policy's levels.
        levels: Vec<String>,
    },
    /// The policy has no `[pack]` section.
    #[error("the policy has no [pack] section naming the response's fields")]
    NoPack,
}

/// What a language package packs with (`pare.pack`): `policy`'s `[pack]` section at
/// `level` (its default level when none is named), or without a policy pare's default field
/// mapping at `level` (`full` when none is named).
pub fn setup(
    policy: Option<&Policy>,
    level: Option<String>,
) -> Result<(PackOptions, String), SetupError> {
    let Some(p) = policy else {
        return Ok((
            PackOptions::default(),
            level.unwrap_or_else(|| "full".into()),
        ));
    };
    let level = match level {
        Some(name) if p.level_index(&name).is_err() => {
            return Err(SetupError::Level {
                name,
                levels: p.levels().to_vec(),
            });
        }
        Some(name) => name,
        None => p.default_level().to_owned(),
    };
    let options = p.options().pack.clone().ok_or(SetupError::NoPack)?;
    Ok((options, level))
}
