//! A run's pages: the cuts of a value or a text, the cursor check, the numbered pages and
//! the one a cursor names.

use super::*;

impl<'a> Run<'_, 'a> {
    /// The shaped value at the level asked, cut into pages.
    pub(super) fn paged(
        &self,
        r: Rendering,
        before: Option<usize>,
        gate: &Gate,
    ) -> Result<Response, RespondError> {
        let opening = self.opening(&r.shaped.manifest);
        let cost = self.opening_cost(gate, &r.shaped.manifest);
        let (reserve, room) = page_room(gate, &self.req.hint, cost)?;
        let mut template = self.record(r.level, before, &r.shaped.manifest);
        template.warnings.extend(self.shaped_warnings(&r));
        let cuts: Vec<Cut> = match self.value_cuts(&r.shaped.value, gate, room) {
            Ok(cuts) => cuts,
            Err(why) => {
                template.warnings.push(format!(
                    "{why}: the pages are the text cut in pieces, and do not decode alone"
                ));
                text_cuts(cut::cut_text(&r.text, gate, room))
            }
        };
        // A value given as such was moved into shaping: its shaped form stands for it in
        // the check (the pages are a function of the shaped value).
        let check = self.check(|| json::to_compact(&r.shaped.value), reserve);
        let pages = self.number_pages(cuts, template, check, opening.as_deref())?;
        self.pick(pages, check, Some(r.shaped))
    }

    /// The value's pages, each within `room` by `gate`, with the frame around each when
    /// the value was read out of text; why not, when a page cannot hold a part of it.
    pub(super) fn value_cuts(
        &self,
        value: &Value,
        gate: &Gate,
        room: usize,
    ) -> Result<Vec<Cut>, String> {
        let (format, tok) = (self.req.format, self.tok());
        let cut = |(p, tokens): (cut::ValuePage, Option<usize>)| Cut {
            text: p.text,
            continues: p.continues,
            kind: PageKind::Value,
            tokens,
        };
        Ok(match self.frame {
            None => cut::cut_value(value, format, tok, gate, room)
                .ok_or(frame::TOO_BIG)?
                .into_iter()
                .map(|p| cut((p, None)))
                .collect(),
            Some(f) => f
                .cut(value, format, tok, gate, room)?
                .into_iter()
                .map(|(p, tokens)| cut((p, Some(tokens))))
                .collect(),
        })
    }

    /// What the shaping of `r` warns of, besides the input's own warnings: the selectors of
    /// the ops that ran and matched nothing (a policy written for another payload, or a typo
    /// in a path, is said, not silently a no-op), then what the format loses.
    pub(super) fn shaped_warnings(&self, r: &Rendering) -> Vec<String> {
        let mut out = self.policy().unmatched_warnings(&r.shaped.matches, r.level);
        out.extend(
            r.unmatched_fields
                .iter()
                .map(|f| format!("fields: `{f}` selected nothing")),
        );
        out.extend(self.value_warnings(&r.shaped.value));
        out
    }

    /// The record every page of this response starts from.
    pub(super) fn record(
        &self,
        level: usize,
        before: Option<usize>,
        manifest: &Manifest,
    ) -> Record {
        Record {
            tokenizer: self.tok().name().to_owned(),
            format: self.req.format.name(),
            level: self.level_name(level),
            lowered_from: None,
            tokens_before: before,
            tokens_after: None,
            note_tokens: None,
            page: 1,
            pages: 1,
            next_cursor: None,
            continues: None,
            kind: PageKind::Value,
            embedded: self.frame.map(|f| f.kind.as_str()),
            omitted: manifest
                .totals()
                .into_iter()
                .map(|(k, n)| (k.as_str(), n))
                .collect(),
            warnings: self.warnings.clone(),
        }
    }

    /// What the format loses of `value`, said rather than done silently: `toon` writes a
    /// number beyond a double's range as JavaScript does (`null`, or `0`). (`auto` never
    /// loses anything: it does not choose TOON then.)
    pub(super) fn value_warnings(&self, value: &Value) -> Vec<String> {
        if self.req.format != Format::Toon {
            return Vec::new();
        }
        let found = crate::encode::toon::inexact_numbers(value);
        crate::report::listed(&found, "numbers toon cannot carry exactly")
    }

    /// The cursor check of this input with these settings. `reserve` stands for the notes'
    /// cost, which decides where pages end.
    pub(super) fn check(&self, value_text: impl FnOnce() -> String, reserve: usize) -> u64 {
        let req = self.req;
        let owned;
        let input: &str = match self.text {
            Some(t) => t,
            None => {
                owned = value_text();
                &owned
            }
        };
        // Every setting in a spelling of our own (no `Debug` text, which may change between
        // Rust versions), so a cursor stays valid across processes and machines.
        let budget = req.budget.map_or_else(
            || "none".to_owned(),
            |b| format!("{}/{}", b.tokens, b.chars4),
        );
        let omitted = match req.omitted_notes {
            None => "policy",
            Some(true) => "on",
            Some(false) => "off",
        };
        let settings = format!(
            "{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{}\u{1}{:016x}",
            self.level_name(self.level),
            self.params.stable_text(),
            req.format.name(),
            req.tokenizer.name(),
            budget,
            omitted,
            reserve,
            self.explicit,
            req.policy.fingerprint(),
        );
        // The fields shown, only when asked: every earlier cursor stays as it was.
        match req.fields {
            Some(f) => {
                let fields = f.given().join("\u{1}");
                cursor::check([input.as_bytes(), settings.as_bytes(), fields.as_bytes()])
            }
            None => cursor::check([input.as_bytes(), settings.as_bytes()]),
        }
    }

    /// Pages with their notes, cursors and records. A response of one page has no page
    /// note; `opening` ([`Run::opening`]) opens every page's note.
    pub(super) fn number_pages(
        &self,
        cuts: Vec<Cut>,
        template: Record,
        check: u64,
        opening: Option<&str>,
    ) -> Result<Vec<Page>, RespondError> {
        let n = cuts.len();
        if n > cursor::MAX_PAGES {
            return Err(RespondError::Budget(format!(
                "{n} pages: more than the {} a cursor can count; raise the budget",
                cursor::MAX_PAGES
            )));
        }
        let ends_inside: Vec<bool> = cuts
            .windows(2)
            .map(|w| w[0].ends_inside(&w[1]))
            .chain([false])
            .collect();
        Ok(cuts
            .into_iter()
            .enumerate()
            .map(|(i, cut)| {
                let next = (i + 1 < n).then(|| {
                    Cursor {
                        check,
                        page: (i + 2) as u16,
                    }
                    .encode()
                });
                let page_note = (n > 1).then(|| {
                    note::page_note(&self.req.hint, i + 1, n, next.as_deref(), ends_inside[i])
                });
                let note = note::join(opening, page_note);
                let mut record = template.clone();
                record.tokens_after =
                    Some(cut.tokens.unwrap_or_else(|| self.tok().count(&cut.text)));
                record.note_tokens = Some(note.as_deref().map_or(0, |t| self.tok().count(t)));
                record.page = i + 1;
                record.pages = n;
                record.next_cursor = next;
                record.continues = cut.continues;
                record.kind = cut.kind;
                Page {
                    text: cut.text,
                    note,
                    record,
                }
            })
            .collect())
    }

    /// The page the request's cursor names (page 1 without one), and the pages after it.
    pub(super) fn pick(
        &self,
        mut pages: Vec<Page>,
        check: u64,
        shaped: Option<Shaped>,
    ) -> Result<Response, RespondError> {
        let at = match self.req.cursor {
            None => 0,
            Some(c) => cursor_page(c, check, pages.len())? - 1,
        };
        let rest = pages.split_off(at + 1);
        let page = pages.pop().expect("at least one page");
        Ok(Response {
            page,
            rest,
            shaped,
            stages: Stages::default(),
        })
    }
}

/// Plain-text pieces as page cuts.
pub(super) fn text_cuts(pages: Vec<String>) -> Vec<Cut> {
    pages
        .into_iter()
        .map(|text| Cut {
            text,
            continues: None,
            kind: PageKind::Text,
            tokens: None,
        })
        .collect()
}

/// The page number a cursor names, checked against this input and settings.
pub(super) fn cursor_page(text: &str, check: u64, pages: usize) -> Result<usize, RespondError> {
    let c = Cursor::decode(text)
        .ok_or_else(|| RespondError::Cursor(format!("`{text}` is not a pare cursor")))?;
    if c.check != check {
        return Err(RespondError::Cursor(format!(
            "cursor `{text}` does not fit this input: a cursor is good for the same input, \
             policy, level, parameters, format, tokenizer and budget it came from"
        )));
    }
    let page = usize::from(c.page);
    if page < 2 || page > pages {
        return Err(RespondError::Cursor(format!(
            "cursor `{text}` names page {page}, but there are {pages}"
        )));
    }
    Ok(page)
}

/// Plain text (not JSON): the text itself when it fits, else pieces cut at line ends.
pub(super) fn text_response(
    req: &Request,
    text: &str,
    level: usize,
    input_tokens: &dyn Fn() -> usize,
) -> Result<Response, RespondError> {
    let run = Run {
        req,
        text: Some(text),
        input_tokens,
        level,
        explicit: true,
        params: Params::default(),
        frame: None,
        // Fields select in a value: plain text has none, and is shown whole.
        warnings: req
            .fields
            .map(|_| "fields: the response is not JSON: shown whole".to_owned())
            .into_iter()
            .collect(),
        early: Default::default(),
        stages: &Cell::new(Stages::default()),
    };
    let counted = run.counted();
    let tokens = counted.then(input_tokens);
    let mut record = run.record(level, tokens, &Manifest::default());
    record.format = "text";
    let (gate, _) = run.gate();
    let over = match (gate, tokens) {
        (Some(g), Some(t)) => g.count_known(text, t) > g.limit(),
        _ => false,
    };
    let Some(g) = gate.filter(|_| over) else {
        record.kind = PageKind::Input;
        record.tokens_after = tokens;
        record.note_tokens = counted.then_some(0);
        return Ok(Response {
            page: Page {
                text: text.to_owned(),
                note: None,
                record,
            },
            rest: Vec::new(),
            shaped: None,
            stages: Stages::default(),
        });
    };
    let (reserve, room) = page_room(&g, &req.hint, 0)?;
    let cuts = text_cuts(cut::cut_text(text, &g, room));
    let check = run.check(String::new, reserve);
    let pages = run.number_pages(cuts, record, check, None)?;
    run.pick(pages, check, None)
}
