//! A run through `pack`: search results as pages of packed text under the budget.

use super::*;

impl<'a> Run<'_, 'a> {
    /// Search results through `pack`: pages of packed text under the budget.
    pub(super) fn packed(
        self,
        value: &Value,
        options: &crate::schema::pack::PackOptions,
    ) -> Result<Response, RespondError> {
        let req = self.req;
        let list = chunks::from_response(value, options)?;
        let level = self.level_name(self.level);
        let (gate, _) = self.gate();
        let room = match &gate {
            Some(g) => page_room(g, &req.hint, 0)?.1,
            None => 1 << 40,
        };
        let before = req.measure.then(|| self.tokens_before(value));
        let mut cache = PreviewCache::new(1024);
        // The pack counts real tokens; a chars/4 limit that binds is met by packing again
        // under a proportionally smaller budget.
        let mut pack_budget = room;
        let (packs, settings) = loop {
            let settings = PackSettings {
                options,
                budget: pack_budget,
                tokenizer: req.tokenizer,
                max_tier: Tier::cap_for_level(&level),
                level: &level,
                total: chunks::total(value, options),
                // Every door's page note says how to go on, in its own words.
                cursor_in_text: false,
                query: req.query,
            };
            let mut packs = vec![pack::pack(&list, &settings, &mut cache)];
            while let Some(next) = packs.last().and_then(|p| p.next_cursor.clone()) {
                packs.push(pack::pack_from_cursor(&list, &settings, &mut cache, &next)?);
            }
            if req.pack_data {
                // Each page as data: its text is the JSON, counted as such.
                for p in &mut packs {
                    p.text = p.data(&level).to_string();
                    p.tokens = req.tokenizer.count(&p.text);
                }
            }
            let worst = gate.map_or(0, |g| {
                packs
                    .iter()
                    .map(|p| g.count_known(&p.text, p.tokens))
                    .max()
                    .unwrap_or(0)
            });
            if worst <= room || pack_budget <= MIN_PAGE_TOKENS {
                break (packs, settings);
            }
            pack_budget = (pack_budget * room / worst).min(pack_budget - 1);
        };
        // The pack names its next page in its own text, with the check of its chunks and
        // settings: the pages are numbered with that check, so both cursors are one.
        let check = pack::cursor_check(&list, &settings);
        let cuts = packs
            .into_iter()
            .map(|p| Cut {
                text: p.text,
                continues: None,
                kind: PageKind::Packed,
                tokens: Some(p.tokens),
            })
            .collect();
        let mut template = self.record(self.level, before, &Manifest::default());
        template.format = if req.pack_data { "json" } else { "pack" };
        let pages = self.number_pages(cuts, template, check, None)?;
        self.pick(pages, check, None)
    }
}
