//! The caption and trailer around a value read out of text ([`crate::embedded`]), put back
//! around every page.
//!
//! Why on every page, not the caption on the first and the trailer on the last: a page
//! must read alone (a door may show page 3 without pages 1 and 2), and the caption says
//! what the value is (`Contents of https://…:`). The budget counts them on each page, and
//! a door that merges pages strips them from each the same way.
//!
//! ```text
//! text:   "Rows:\n" + [r0 … r99] + "\n(more available)"
//! page 1: "Rows:\n" + [r0 … r40] + "\n(more available)"
//! page 2: "Rows:\n" + [r41 … r99] + "\n(more available)"
//! ```

use crate::embedded::{Embedded, Kind};
use crate::encode::Format;
use crate::tokens::Tokenizer;
use crate::value::Value;

use super::budget::Gate;
use super::cut::{self, ValuePage};

/// What stands before and after the value in the text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Frame<'a> {
    pub prefix: &'a str,
    pub suffix: &'a str,
    pub kind: Kind,
}

impl<'a> Frame<'a> {
    pub(super) fn of(found: &Embedded<'a>) -> Frame<'a> {
        Frame {
            prefix: found.prefix,
            suffix: found.suffix,
            kind: found.kind,
        }
    }

    pub(super) fn wrap(&self, inner: &str) -> String {
        [self.prefix, inner, self.suffix].concat()
    }

    /// Pages of `value` inside the frame, each within `room` by `gate`, with their real
    /// token counts; why not, when no page can hold a part of the value.
    ///
    /// Room for the caption and trailer comes off every page (and a token for each
    /// junction, where the tokenizer may merge across); a page the junctions still push
    /// over is cut again with that much less room.
    pub(super) fn cut(
        &self,
        value: &Value,
        format: Format,
        tok: &dyn Tokenizer,
        gate: &Gate,
        room: usize,
    ) -> Result<Vec<(ValuePage, usize)>, String> {
        let no_room = || "the text around the value leaves no room for a part of it".to_owned();
        let cost = gate.count(self.prefix) + gate.count(self.suffix) + 2;
        let mut inner = room.checked_sub(cost).ok_or_else(no_room)?;
        loop {
            let pages = cut::cut_value(value, format, tok, gate, inner).ok_or(TOO_BIG)?;
            let framed: Vec<(ValuePage, usize)> = pages
                .into_iter()
                .map(|p| {
                    let text = self.wrap(&p.text);
                    let tokens = tok.count(&text);
                    (ValuePage { text, ..p }, tokens)
                })
                .collect();
            let worst = framed
                .iter()
                .map(|(p, tokens)| gate.count_known(&p.text, *tokens))
                .max()
                .unwrap_or(0);
            if worst <= room {
                return Ok(framed);
            }
            inner = inner
                .checked_sub(worst - room)
                .filter(|&n| n > 0)
                .ok_or_else(no_room)?;
        }
    }
}

/// Why a value could not be paged as a value.
pub(super) const TOO_BIG: &str = "a single key or number is over the budget";
