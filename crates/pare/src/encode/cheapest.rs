//! `auto`'s choice for a whole document without counting every candidate whole: a floor
//! ([`Tokenizer::count_floor`]: a BPE encoding's pieces, each at least one token, found for
//! about half a count's cost) mostly settles that JSON or TOON costs more than the dialect,
//! which is counted. The choice is the one counting every text whole makes. (Within the
//! dialect, whose candidates are small, floors cost more than they save.)

use crate::tokens::Tokenizer;

/// A text `auto` may return for the whole document, counted only as far as the choice
/// needs: its floor settles most comparisons, its count the rest.
pub(crate) struct Choice {
    pub(crate) text: String,
    floor: usize,
    tokens: Option<usize>,
    /// Whether it reads back as the value, when already checked.
    pub(crate) reads_back: Option<bool>,
}

impl Choice {
    /// A text whose count is known.
    pub(crate) fn counted(text: String, tokens: usize, reads_back: Option<bool>) -> Choice {
        Choice {
            text,
            floor: tokens,
            tokens: Some(tokens),
            reads_back,
        }
    }

    /// A text with a floor `floor` ([`Tokenizer::count_floor`]), counted when needed.
    pub(crate) fn floored(text: String, floor: usize) -> Choice {
        Choice {
            text,
            floor,
            tokens: None,
            reads_back: None,
        }
    }

    pub(crate) fn tokens(&mut self, tok: &dyn Tokenizer) -> usize {
        *self.tokens.get_or_insert_with(|| tok.count(&self.text))
    }

    /// Whether it costs fewer than `n` tokens.
    pub(crate) fn below(&mut self, n: usize, tok: &dyn Tokenizer) -> bool {
        self.floor < n && self.tokens(tok) < n
    }

    /// Whether it costs more than `n` tokens.
    pub(crate) fn above(&mut self, n: usize, tok: &dyn Tokenizer) -> bool {
        self.floor > n || self.tokens(tok) > n
    }
}
