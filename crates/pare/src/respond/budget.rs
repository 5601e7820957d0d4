//! The budget gate: a text fits when it is within `tokens` by the chosen tokenizer *and*
//! within `chars4` by the chars/4 estimate, because some clients (Claude Code's
//! `MAX_MCP_OUTPUT_TOKENS`, 25,000 by default) judge results by chars/4 while the model pays
//! real tokens. Counts reported in the record stay the real ones.
//!
//! As a [`Tokenizer`] the gate counts in units of the real budget: chars/4 is scaled by
//! `tokens / chars4`, so "fits in `b`" means both limits hold in proportion.
//!
//! ```
//! use pare::respond::{Budget, budget::Gate};
//! use pare::tokens::{self, Tokenizer};
//! let o200k = tokens::builtin("o200k_base").unwrap();
//! let gate = Gate::new(o200k, Budget::tokens(100));
//! // 400 characters of long words: few real tokens, but 100 by chars/4.
//! let text = "internationalization ".repeat(19);
//! assert!(o200k.count(&text) < 100 && gate.count(&text) == 100);
//! ```

use crate::tokens::{self, Tokenizer};

/// A hard limit on what one page costs: `tokens` by the real tokenizer and `chars4` by the
/// chars/4 estimate (⌈chars / 4⌉).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Budget {
    /// Most tokens a page may cost by the real tokenizer; 0 counts as 1.
    pub tokens: usize,
    /// Most a page may cost by chars/4 (characters, not bytes); 0 counts as 1.
    pub chars4: usize,
}

impl Budget {
    /// `n` tokens by both counts.
    pub fn tokens(n: usize) -> Budget {
        Budget {
            tokens: n,
            chars4: n,
        }
    }
}

/// The stricter of a tokenizer and a scaled chars/4, for the budget decisions.
#[derive(Clone, Copy)]
pub struct Gate<'t> {
    real: &'t dyn Tokenizer,
    chars4: &'static dyn Tokenizer,
    max_tokens: usize,
    max_chars4: usize,
}

impl<'t> Gate<'t> {
    /// A gate that counts by `real` and holds `budget`.
    pub fn new(real: &'t dyn Tokenizer, budget: Budget) -> Gate<'t> {
        Gate {
            real,
            chars4: tokens::builtin("chars4").expect("chars4 is built in"),
            max_tokens: budget.tokens.max(1),
            max_chars4: budget.chars4.max(1),
        }
    }

    /// The real tokenizer behind the gate.
    pub fn real(&self) -> &'t dyn Tokenizer {
        self.real
    }

    /// The budget in the gate's units (real tokens).
    pub fn limit(&self) -> usize {
        self.max_tokens
    }

    /// The chars/4 estimate of `text` in units of the real budget (what [`Gate::count`]
    /// takes the maximum of, with the real count).
    pub(crate) fn chars4_count(&self, text: &str) -> usize {
        let c4 = self.chars4.count(text) as u128 * self.max_tokens as u128;
        c4.div_ceil(self.max_chars4 as u128) as usize
    }

    /// The gate's count of a text whose real count is known: no second real count.
    pub(crate) fn count_known(&self, text: &str, real: usize) -> usize {
        real.max(self.chars4_count(text))
    }

    /// A budget in real tokens as a chars/4 budget.
    fn chars4_budget(&self, budget: usize) -> usize {
        (budget as u128 * self.max_chars4 as u128 / self.max_tokens as u128) as usize
    }
}

impl std::fmt::Debug for Gate<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("tokenizer", &self.real.name())
            .field("tokens", &self.max_tokens)
            .field("chars4", &self.max_chars4)
            .finish()
    }
}

impl Tokenizer for Gate<'_> {
    fn name(&self) -> &str {
        self.real.name()
    }
    fn count(&self, text: &str) -> usize {
        self.real.count(text).max(self.chars4_count(text))
    }
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize {
        self.real
            .prefix_len(text, max_tokens)
            .min(self.chars4.prefix_len(text, self.chars4_budget(max_tokens)))
    }
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize {
        self.real.suffix_start(text, max_tokens).max(
            self.chars4
                .suffix_start(text, self.chars4_budget(max_tokens)),
        )
    }
    fn fits(&self, text: &str, max_tokens: usize) -> bool {
        self.chars4.fits(text, self.chars4_budget(max_tokens)) && self.real.fits(text, max_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o200k() -> &'static dyn Tokenizer {
        tokens::builtin("o200k_base").unwrap()
    }

    fn budget(tokens: usize, chars4: usize) -> Budget {
        Budget { tokens, chars4 }
    }

    #[test]
    fn chars4_decides_when_its_limit_binds() {
        // Long words: few real tokens, many chars.
        let text = "internationalization ".repeat(50);
        let real = o200k().count(&text);
        let chars4 = text.chars().count().div_ceil(4);
        assert!(chars4 > real);
        let g = Gate::new(o200k(), budget(100, 100));
        assert_eq!(g.count(&text), chars4);
        assert!(!g.fits(&text, chars4 - 1) && g.fits(&text, chars4));
        assert!(g.prefix_len(&text, 10) <= 40);
    }

    #[test]
    fn a_looser_chars4_limit_leaves_the_real_count_in_charge() {
        let text = "internationalization ".repeat(50);
        let real = o200k().count(&text);
        let g = Gate::new(o200k(), budget(100, 1000));
        assert_eq!(g.count(&text), real);
        assert!(g.fits(&text, real) && !g.fits(&text, real - 1));
        assert_eq!(g.count_known(&text, real), real);
    }
}
