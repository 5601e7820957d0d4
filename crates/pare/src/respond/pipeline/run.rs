//! A run's levels and renderings: which level, the input text itself or a rendering, one
//! page (`single`) or the input's own page.

use super::*;

impl<'a> Run<'_, 'a> {
    pub(super) fn tok(&self) -> &dyn Tokenizer {
        self.req.tokenizer
    }

    pub(super) fn policy(&self) -> &Policy {
        self.req.policy
    }

    pub(super) fn level_name(&self, level: usize) -> String {
        self.policy().levels()[level].clone()
    }

    pub(super) fn render_at(&self, value: Value, level: usize) -> Rendering {
        let shaping = Instant::now();
        let opts = shape_options(self.req, &self.params, level);
        let shaped = match self.early.take() {
            // Only the value parsed for it, at the level planned.
            // (`early` is only set when the value was parsed from `self.text`.)
            Some((plan, omitted)) if level == self.level => {
                let text = self.text.unwrap_or_default();
                early::shape_parsed(text, value, self.policy(), &opts, &plan, omitted)
            }
            _ => shape(value, self.policy(), &opts),
        };
        let (shaped, unmatched_fields) = self.projected(shaped);
        let rendering = Instant::now();
        let counted = self.counted();
        let (text, tokens) = if counted {
            render_counted(&shaped.value, self.req.format, self.tok())
        } else if self.req.format == Format::Json {
            // Minified JSON is at most about as long as the input text: one buffer of that
            // size, instead of a string that grows by doubling (on a large payload the copies
            // and fresh pages cost more than writing the JSON).
            let mut out = String::with_capacity(self.text.map_or(0, str::len));
            json::write_compact(&shaped.value, &mut out);
            (out, 0)
        } else {
            (
                crate::encode::render(&shaped.value, self.req.format, self.tok()),
                0,
            )
        };
        let (text, tokens) = match self.frame {
            Some(f) => {
                let framed = f.wrap(&text);
                let tokens = if counted {
                    self.tok().count(&framed)
                } else {
                    0
                };
                (framed, tokens)
            }
            None => (text, tokens),
        };
        let mut stages = self.stages.get();
        stages.shape += rendering - shaping;
        stages.render += rendering.elapsed();
        self.stages.set(stages);
        Rendering {
            level,
            shaped,
            text,
            tokens,
            unmatched_fields,
        }
    }

    /// The shaped value with only the caller's fields ([`Request::fields`]), what that left
    /// out in its manifest (op `fields`), and the fields that selected nothing.
    fn projected(&self, mut shaped: Shaped) -> (Shaped, Vec<String>) {
        let Some(fields) = self.req.fields else {
            return (shaped, Vec::new());
        };
        let value = std::mem::replace(&mut shaped.value, Value::Null);
        let p = fields.project(value);
        shaped.value = p.value;
        if p.left_out > 0 {
            shaped.manifest.entries.push(crate::manifest::Entry {
                op: "fields",
                kind: crate::manifest::Kind::Stripped,
                path: "$".to_owned(),
                count: p.left_out,
            });
        }
        (shaped, p.unmatched)
    }

    /// The lines that open every page's note: what the policy removed, and the fields
    /// shown.
    pub(super) fn opening(&self, manifest: &crate::manifest::Manifest) -> Option<String> {
        let fields = self
            .req
            .fields
            .map(|f| note::fields_line(&self.req.hint, f.given()));
        note::join(note::removed_line(manifest), fields)
    }

    /// What [`Run::opening`] may cost by `fit`, in any door's words.
    pub(super) fn opening_cost(
        &self,
        fit: &dyn Tokenizer,
        manifest: &crate::manifest::Manifest,
    ) -> usize {
        note::removed_cost(fit, note::removed_line(manifest))
            + self
                .req
                .fields
                .map_or(0, |f| note::fields_cost(fit, f.given()))
    }

    /// Whether rendering `r` fits in `room` tokens, with the lines that open its note (in
    /// the budget).
    pub(super) fn fits(&self, gate: Option<Gate>, r: &Rendering, room: usize) -> bool {
        let opening = gate.map_or(0, |g| self.opening_cost(&g, &r.shaped.manifest));
        gate_count(gate, &r.text, r.tokens) + opening <= room
    }

    /// Tokens of the input as given (its text, or the value as minified JSON).
    pub(super) fn tokens_before(&self, value: &Value) -> usize {
        match self.text {
            Some(_) => (self.input_tokens)(),
            None => self.tok().count(&json::to_compact(value)),
        }
    }

    pub(super) fn shaped(self, value: Value) -> Result<Response, RespondError> {
        let req = self.req;
        let (gate, limit) = self.gate();
        let lowerable = lowerable(self.policy(), self.level, self.explicit, gate.is_some());
        let want_before = self.wants_before();
        let is_full = self.policy().levels()[self.level] == FULL;

        // The input text itself, at `full`, for a transparent door (not when the caller asked
        // for some fields only).
        if req.keep_input_text
            && req.fields.is_none()
            && is_full
            && let Some(text) = self.text
        {
            let real = (self.input_tokens)();
            if gate_count(gate, text, real) <= limit {
                return Ok(self.input_page(text, real, value));
            }
        }

        // The input's count runs on another core while this one shapes and renders: the
        // input text's since the request came in ([`InputCount`]); a value given as such is
        // counted as minified JSON from here.
        let value_text = (want_before && self.text.is_none()).then(|| json::to_compact(&value));
        let (value_for_lower, to_shape) = if lowerable {
            (Some(value.clone()), value)
        } else {
            (None, value)
        };
        let (before, first) = std::thread::scope(|scope| {
            let tok = self.tok();
            let value_before = value_text
                .as_deref()
                .map(|t| scope.spawn(move || tok.count(t)));
            let first = self.render_at(to_shape, self.level);
            let before = match value_before {
                Some(h) => Some(h.join().expect("counting does not panic")),
                None => want_before.then(self.input_tokens),
            };
            (before, first)
        });

        if let Some((text, before)) = self.kept_input(first.tokens, before, gate, limit) {
            return Ok(self.input_page(text, before, first.shaped.value));
        }
        if self.fits(gate, &first, limit) {
            return Ok(self.single(first, before, None));
        }
        if let (Some(value), Some(g)) = (value_for_lower, gate) {
            let room = limit.saturating_sub(note::lowered_reserve(
                &g,
                &req.hint,
                self.policy().levels(),
                limit,
            ));
            // A level alike the one asked gives the same text: it cannot fit either.
            let lower_levels = (0..self.level)
                .rev()
                .filter(|&l| !self.policy().levels_alike(l, self.level));
            for lower in lower_levels {
                let r = self.render_at(value.clone(), lower);
                if self.fits(gate, &r, room) {
                    let asked = self.level_name(self.level);
                    let note =
                        note::lowered_note(&req.hint, &self.level_name(lower), &asked, limit);
                    return Ok(self.single(r, before, Some((asked, note))));
                }
            }
        }
        let g = gate.expect("only a budget can be exceeded");
        self.paged(first, before, &g)
    }

    /// The text [`json::compact_omitting`] wrote, following `plan` (shaped with `opts`), as
    /// the one page; `None` when it is over the budget (the value is then built and paged).
    pub(super) fn streamed(
        &self,
        streamed: json::Streamed,
        plan: &early::Plan,
        opts: &ShapeOptions,
    ) -> Option<Response> {
        let json::Streamed {
            text,
            omitted,
            selectors_hit,
        } = streamed;
        // The parser did the ops, or the stream did list ops: the walk records what the
        // parser left out, and the selectors the stream reached are noted.
        let mut shaped =
            crate::shape::shape_planned(Value::Null, self.policy(), opts, Some((plan, omitted)));
        for s in selectors_hit {
            self.policy()
                .selectors
                .note_selected(&mut shaped.matches, s);
        }
        let tokens = if self.counted() {
            self.tok().count(&text)
        } else {
            0
        };
        let (gate, limit) = self.gate();
        let before = self.wants_before().then(self.input_tokens);
        if let Some((input, before)) = self.kept_input(tokens, before, gate, limit) {
            return Some(Response {
                shaped: None,
                ..self.input_page(input, before, Value::Null)
            });
        }
        let rendering = Rendering {
            level: self.level,
            shaped,
            text,
            tokens,
            unmatched_fields: Vec::new(),
        };
        self.fits(gate, &rendering, limit).then(|| Response {
            shaped: None,
            ..self.single(rendering, before, None)
        })
    }

    /// The budget's gate (with none, `None`) and its limit (with none, unbounded).
    pub(super) fn gate(&self) -> (Option<Gate<'a>>, usize) {
        let budget = self.req.budget;
        (
            budget.map(|b| Gate::new(self.req.tokenizer, b)),
            budget.map_or(usize::MAX, |b| b.tokens),
        )
    }

    /// Whether renderings are counted: for the record, or for a budget.
    pub(super) fn counted(&self) -> bool {
        self.req.measure || self.req.budget.is_some()
    }

    /// Whether the input's count is wanted: for the record, or to tell whether shaping made
    /// anything cheaper ([`Run::kept_input`]).
    pub(super) fn wants_before(&self) -> bool {
        self.req.measure || self.req.keep_input_text
    }

    /// The input text and its count (`before`), when a transparent door keeps it: shaping
    /// made nothing cheaper (the rendering's `tokens` are not fewer) and it fits the budget.
    pub(super) fn kept_input(
        &self,
        tokens: usize,
        before: Option<usize>,
        gate: Option<Gate>,
        limit: usize,
    ) -> Option<(&'a str, usize)> {
        let (text, before) = (self.text?, before?);
        // Fields asked for are shown, whatever the tokens.
        let keep = self.req.keep_input_text && self.req.fields.is_none();
        (keep && tokens >= before && gate_count(gate, text, before) <= limit)
            .then_some((text, before))
    }

    /// The whole rendering as the one page; `lowered`: the level asked and the note.
    pub(super) fn single(
        &self,
        r: Rendering,
        before: Option<usize>,
        lowered: Option<(String, String)>,
    ) -> Response {
        let counted = self.counted();
        let mut record = self.record(r.level, before, &r.shaped.manifest);
        record.warnings.extend(self.shaped_warnings(&r));
        let (lowered_from, note) = lowered.unzip();
        let note = note::join(self.opening(&r.shaped.manifest).as_deref(), note);
        // Counted only for the record: a run that counts nothing else (`pare compact`
        // without a budget) paid a cold count of its note for a number it threw away.
        let note_tokens = counted.then(|| note.as_deref().map_or(0, |n| self.tok().count(n)));
        record.tokens_after = counted.then_some(r.tokens);
        record.note_tokens = note_tokens;
        record.lowered_from = lowered_from;
        Response {
            page: Page {
                text: r.text,
                note,
                record,
            },
            rest: Vec::new(),
            shaped: Some(r.shaped),
            stages: Stages::default(),
        }
    }

    /// The input text unchanged as the one page.
    pub(super) fn input_page(&self, text: &str, tokens: usize, value: Value) -> Response {
        let shaped = Shaped {
            value,
            manifest: Default::default(),
            removed: Vec::new(),
            matches: Default::default(),
        };
        let mut record = self.record(self.level, Some(tokens), &shaped.manifest);
        record.kind = PageKind::Input;
        record.embedded = None;
        record.tokens_after = Some(tokens);
        record.note_tokens = Some(0);
        Response {
            page: Page {
                text: text.to_owned(),
                note: None,
                record,
            },
            rest: Vec::new(),
            shaped: Some(shaped),
            stages: Stages::default(),
        }
    }
}
