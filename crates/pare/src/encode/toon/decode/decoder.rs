//! The recursive descent over the lines that builds the value.

use super::*;

pub(super) struct Decoder<'a> {
    /// Reading pare's `auto` dialect (see the module docs).
    pub(super) dialect: bool,
    pub(super) reader: Reader<'a>,
    pub(super) strict: bool,
    /// Containers open on the current path.
    pub(super) nesting: usize,
    pub(super) hasher: RandomState,
    /// Scratch for a row's cells, reused across rows.
    pub(super) cells: Vec<&'a str>,
}

impl<'a> Decoder<'a> {
    pub(super) fn document(&mut self) -> Result<Value, Fail> {
        let Some(first) = self.reader.peek()? else {
            return Ok(Value::Object(Map::new()));
        };
        if first.depth != 0 {
            return Err(over_indented(&first, 0));
        }
        if trim_spaces(first.content) == "[]" {
            self.reader.advance();
            self.expect_end()?;
            return Ok(Value::Array(Vec::new()));
        }
        if is_array_header_content(first.content)
            && let Some(header) = self.header(first.content)?
        {
            self.reader.advance();
            let value = self.array_from_header(header, 0, &first)?;
            self.expect_end()?;
            return Ok(value);
        }
        self.reader.advance();
        let following = self.reader.peek()?;
        if !is_key_value_content(first.content) {
            match following {
                None => return parse_primitive(first.content, self.dialect),
                Some(next) if next.depth == 0 => {
                    return Err(fail_at(
                        first.content,
                        "expected a key-value or array-header line at the top level, found a \
                         bare value followed by more lines",
                    ));
                }
                Some(_) => {}
            }
        }
        self.enter(&first)?;
        let mut obj = ObjBuilder::default();
        self.key_value(first, 0, &mut obj)?;
        while let Some(line) = self.reader.peek()? {
            if line.depth != 0 {
                return Err(over_indented(&line, 0));
            }
            self.reader.advance();
            self.key_value(line, 0, &mut obj)?;
        }
        Ok(Value::Object(obj.finish()))
    }

    /// Parse a header candidate with the mode's policy applied: malformed headers are an
    /// error in strict mode and plain `key: value` lines otherwise.
    pub(super) fn header(&self, content: &'a str) -> Result<Option<Header<'a>>, Fail> {
        match parse_header(content, self.dialect)? {
            HeaderParse::NotHeader => Ok(None),
            HeaderParse::Invalid(fail) if self.strict => Err(fail),
            HeaderParse::Invalid(_) => Ok(None),
            HeaderParse::Header(mut header) => match header.strict_error.take() {
                Some(fail) if self.strict => Err(fail),
                _ => Ok(Some(header)),
            },
        }
    }

    /// `decodeKeyValue`: one `key: value`, `key:` (nested object) or `key[N]...` line into `obj`.
    pub(super) fn key_value(
        &mut self,
        line: Line<'a>,
        base: usize,
        obj: &mut ObjBuilder,
    ) -> Result<(), Fail> {
        let header = self.header(line.content)?;
        self.key_value_with(line, header, base, obj)
    }

    pub(super) fn key_value_with(
        &mut self,
        line: Line<'a>,
        header: Option<Header<'a>>,
        base: usize,
        obj: &mut ObjBuilder,
    ) -> Result<(), Fail> {
        let content = line.content;
        if let Some(mut header) = header {
            let Some(key) = header.key.take() else {
                return Err(fail_at(
                    content,
                    if header.keyed {
                        "expected a key before a keyed header's '[' (keyless keyed headers are \
                         only valid at the document root)"
                    } else {
                        "expected a key before '[' (keyless array headers are only valid at \
                         the document root or as a list item)"
                    },
                ));
            };
            let slot = self.claim(obj, &key, content)?;
            let value = self.array_from_header(header, base, &line)?;
            obj.put(slot, key, value);
            return Ok(());
        }
        let (key, end) = parse_key_token(content)?;
        let rest = trim_spaces(&content[end..]);
        let slot = self.claim(obj, &key, content)?;
        let value = if rest.is_empty() {
            match self.reader.peek()? {
                Some(next) if next.depth > base => {
                    self.no_depth_jump(&next, base)?;
                    self.object_fields(base + 1, &line)?
                }
                _ => Value::Object(Map::new()),
            }
        } else if rest == "[]" {
            Value::Array(Vec::new())
        } else if self.dialect && rest.starts_with(['[', '{']) {
            parse_json(rest, self.json_depth_left())?
        } else {
            parse_primitive(rest, self.dialect)?
        };
        obj.put(slot, key, value);
        Ok(())
    }

    /// `decodeObjectFields`: the fields of a nested object, all at the depth of the first.
    pub(super) fn object_fields(&mut self, base: usize, opener: &Line<'a>) -> Result<Value, Fail> {
        self.enter(opener)?;
        let mut obj = ObjBuilder::default();
        let mut depth = None;
        while let Some(line) = self.reader.peek()? {
            if line.depth < base {
                break;
            }
            let expected = *depth.get_or_insert(line.depth);
            if line.depth != expected {
                return Err(over_indented(&line, expected));
            }
            self.reader.advance();
            self.key_value(line, expected, &mut obj)?;
        }
        self.leave();
        Ok(Value::Object(obj.finish()))
    }

    /// `followSiblingFields`: the fields after the first one of a list-item object.
    pub(super) fn sibling_fields(
        &mut self,
        depth: usize,
        obj: &mut ObjBuilder,
    ) -> Result<(), Fail> {
        while let Some(line) = self.reader.peek()? {
            if line.depth < depth {
                break;
            }
            if line.depth != depth {
                return Err(over_indented(&line, depth));
            }
            self.reader.advance();
            self.key_value(line, depth, obj)?;
        }
        Ok(())
    }

    pub(super) fn array_from_header(
        &mut self,
        header: Header<'a>,
        base: usize,
        line: &Line<'a>,
    ) -> Result<Value, Fail> {
        self.enter(line)?;
        // A keyed header always has fields, and fields never come with inline values
        // (`parse_header` rejects both), so the order of these tests is the reference's.
        let value = if header.keyed
            && let Some(fields) = &header.fields
        {
            self.keyed_object(&header, fields, base, line)?
        } else if let Some(inline) = header.inline {
            self.inline_array(&header, inline, line)?
        } else if let Some(fields) = header.fields.as_ref().filter(|f| !f.list.is_empty()) {
            self.tabular_array(&header, fields, base, line)?
        } else {
            self.list_array(&header, base, line)?
        };
        self.leave();
        Ok(value)
    }

    /// `key[N]: a,b,c`
    pub(super) fn inline_array(
        &mut self,
        header: &Header<'a>,
        inline: &'a str,
        line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let mut cells = std::mem::take(&mut self.cells);
        split_delimited(inline, header.delimiter, &mut cells);
        let values = cells
            .iter()
            .map(|cell| parse_primitive(cell, self.dialect))
            .collect::<Result<Vec<_>, _>>()?;
        self.cells = cells;
        if self.strict && values.len() != header.length {
            return Err(fail_at(
                line.raw,
                format!(
                    "expected {} inline array values, found {}",
                    header.length,
                    values.len()
                ),
            ));
        }
        Ok(Value::Array(values))
    }

    /// `key[N:]{fields}:` with rows `entryKey: cells`.
    pub(super) fn keyed_object(
        &mut self,
        header: &Header<'a>,
        fields: &Fields,
        base: usize,
        header_line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let entry_depth = self.scope_content_depth(base)?;
        let mut obj = ObjBuilder::default();
        let mut count = 0;
        let mut span: Option<(usize, usize)> = None;
        let mut last = *header_line;
        while let Some(line) = self.reader.peek()? {
            if line.depth <= base {
                break;
            }
            if line.depth != entry_depth {
                return Err(over_indented(&line, entry_depth));
            }
            let content = line.content;
            if find_unquoted(content.as_bytes(), b':', 0).is_none() {
                return Err(fail_after(
                    content,
                    "expected an entry row `key: cells` inside the keyed object, found no ':'",
                ));
            }
            self.reader.advance();
            span = Some((span.map_or(line.number, |s| s.0), line.number));
            last = line;
            let (key, end) = parse_key_token(content)?;
            let slot = self.claim(&mut obj, &key, content)?;
            let cells_text = trim_spaces(&content[end..]);
            let row = self.row(
                fields,
                cells_text,
                header.delimiter,
                "keyed entry cells",
                &line,
            )?;
            obj.put(slot, key, row);
            count += 1;
        }
        if self.strict {
            self.check_count(count, header.length, "keyed entries", &last)?;
            self.no_blank_lines(span, "keyed object")?;
        }
        Ok(Value::Object(obj.finish()))
    }

    /// `key[N]{fields}:` with one row of cells per line.
    pub(super) fn tabular_array(
        &mut self,
        header: &Header<'a>,
        fields: &Fields,
        base: usize,
        header_line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let row_depth = self.scope_content_depth(base)?;
        if self.dialect {
            return self.dialect_rows(header, fields, base, row_depth, header_line);
        }
        let is_row = |content: &str| is_data_row(content, header.delimiter);
        // A `- ` line right after the last row belongs to an enclosing list, not this table.
        let is_more = |content: &str| !content.starts_with("- ") && is_row(content);
        let block = Block {
            length: header.length,
            base,
            depth: row_depth,
            what: "tabular rows",
            name: "tabular array",
        };
        self.counted_block(&block, header_line, is_row, is_more, |d, line| {
            d.reader.advance();
            d.row(
                fields,
                line.content,
                header.delimiter,
                "tabular row values",
                &line,
            )
        })
    }

    /// The dialect's table rows: every line below the header is a row (no `key: value`
    /// heuristic), either cells or `- {…}`, the whole item as JSON. A top-level member's
    /// table may have flat rows instead: at the header's own depth, exactly as many as the
    /// header declares (the count says where they end).
    pub(super) fn dialect_rows(
        &mut self,
        header: &Header<'a>,
        fields: &Fields,
        base: usize,
        row_depth: usize,
        header_line: &Line<'a>,
    ) -> Result<Value, Fail> {
        // A member's header (not a list item's `- [N]…`, not the root's `[N]…`).
        let member_header = !header_line.raw.starts_with(['-', '[']);
        let flat = header_line.depth == 0
            && member_header
            && header.length > 0
            && self.reader.peek()?.is_some_and(|next| next.depth == 0);
        let row_depth = if flat { 0 } else { row_depth };
        let mut rows = Vec::with_capacity(header.length.min(1024));
        let mut span: Option<(usize, usize)> = None;
        let mut last = *header_line;
        while let Some(line) = self.reader.peek()? {
            let ended = if flat {
                rows.len() == header.length
            } else {
                line.depth <= base
            };
            if ended {
                break;
            }
            if line.depth != row_depth {
                return Err(over_indented(&line, row_depth));
            }
            span = Some((span.map_or(line.number, |s| s.0), line.number));
            last = line;
            self.reader.advance();
            if self.strict && rows.len() == header.length {
                return Err(fail_at(
                    line.raw,
                    format!("expected {} tabular rows, found more", header.length),
                ));
            }
            rows.push(self.dialect_row(header, fields, &line)?);
        }
        // Flat rows end by their count, so a short table is an error even when lenient.
        if self.strict || flat {
            self.check_count(rows.len(), header.length, "tabular rows", &last)?;
        }
        if self.strict {
            self.no_blank_lines(span, "tabular array")?;
        }
        Ok(Value::Array(rows))
    }

    /// One dialect row: cells, or `- {…}`, the whole item as JSON.
    fn dialect_row(
        &mut self,
        header: &Header<'a>,
        fields: &Fields,
        line: &Line<'a>,
    ) -> Result<Value, Fail> {
        match line.content.strip_prefix("- ") {
            Some(json) => {
                let json = trim_spaces(json);
                if !json.starts_with('{') {
                    return Err(fail_at(
                        json,
                        "expected a whole row as a JSON object `- {…}`",
                    ));
                }
                parse_json(json, self.json_depth_left())
            }
            None => self.row(
                fields,
                line.content,
                header.delimiter,
                "tabular row values",
                line,
            ),
        }
    }

    /// How deep inline JSON may nest here, within [`MAX_DEPTH`] overall.
    pub(super) fn json_depth_left(&self) -> usize {
        MAX_DEPTH.saturating_sub(self.nesting)
    }

    /// One row of cells into an object shaped by the field tree.
    pub(super) fn row(
        &mut self,
        fields: &Fields,
        text: &'a str,
        delimiter: u8,
        what: &str,
        line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let mut cells = std::mem::take(&mut self.cells);
        // no cells at all for ""
        let split = if self.dialect {
            split_dialect_cells(text, delimiter, &mut cells)
        } else {
            split_delimited(text, delimiter, &mut cells);
            Ok(())
        };
        if let Err(fail) = split {
            self.cells = cells;
            return Err(fail);
        }
        if cells.len() != fields.leaves {
            let found = cells.len();
            self.cells = cells;
            return Err(fail_at(
                line.raw,
                format!("expected {} {what}, found {found}", fields.leaves),
            ));
        }
        let mut next = 0;
        let row = if self.dialect {
            build_dialect_row(
                &fields.list,
                &cells,
                &mut next,
                fields.unique,
                self.json_depth_left(),
            )
        } else {
            build_row(&fields.list, &cells, &mut next, fields.unique)
        };
        self.cells = cells;
        Ok(Value::Object(row?))
    }

    /// `key[N]:` with `- item` lines.
    pub(super) fn list_array(
        &mut self,
        header: &Header<'a>,
        base: usize,
        header_line: &Line<'a>,
    ) -> Result<Value, Fail> {
        let item_depth = self.scope_content_depth(base)?;
        let is_item = |content: &str| content.starts_with("- ") || content == "-";
        let is_more = |content: &str| content.starts_with("- ");
        let block = Block {
            length: header.length,
            base,
            depth: item_depth,
            what: "list items",
            name: "list array",
        };
        self.counted_block(&block, header_line, is_item, is_more, |d, _| {
            d.list_item(item_depth)
        })
    }

    /// The entries of a `[N]` block (table rows or list items) at `block.depth`, while
    /// `is_entry` holds. Strict mode checks the count against the header, that no blank
    /// line falls between entries, and that no further entry (`is_more`) follows.
    fn counted_block(
        &mut self,
        block: &Block,
        header_line: &Line<'a>,
        is_entry: impl Fn(&str) -> bool,
        is_more: impl Fn(&str) -> bool,
        mut entry: impl FnMut(&mut Self, Line<'a>) -> Result<Value, Fail>,
    ) -> Result<Value, Fail> {
        let length = block.length;
        let mut items = Vec::with_capacity(length.min(1024));
        let mut span: Option<(usize, usize)> = None;
        let mut last = *header_line;
        while !self.strict || items.len() < length {
            let Some(line) = self.reader.peek()? else {
                break;
            };
            if line.depth <= block.base {
                break;
            }
            if line.depth != block.depth {
                return Err(over_indented(&line, block.depth));
            }
            if !is_entry(line.content) {
                break;
            }
            let start = span.map_or(line.number, |s| s.0);
            items.push(entry(self, line)?);
            // An entry ends at the last line it consumed (a list item's fields, nested rows...).
            last = self.reader.last.unwrap_or(line);
            span = Some((start, last.number));
        }
        if self.strict {
            self.check_count(items.len(), length, block.what, &last)?;
            self.no_blank_lines(span, block.name)?;
            if let Some(next) = self.reader.peek()?
                && next.depth == block.depth
                && is_more(next.content)
            {
                return Err(fail_at(
                    next.raw,
                    format!("expected {length} {}, found more", block.what),
                ));
            }
        }
        Ok(Value::Array(items))
    }

    /// `decodeListItem`: `- value`, `- key: value` (an object), `- [N]: ...` (an array),
    /// `- key[N]{fields}:` (an object whose first field is a table).
    pub(super) fn list_item(&mut self, depth: usize) -> Result<Value, Fail> {
        let Some(line) = self.reader.next()? else {
            return Err(Fail {
                addr: usize::MAX,
                message: "expected a list item, found the end of the document".into(),
            });
        };
        if line.content == "-" {
            return Ok(Value::Object(Map::new()));
        }
        let Some(after) = line.content.strip_prefix("- ") else {
            return Err(fail_at(
                line.content,
                "expected a list item to start with \"- \"",
            ));
        };
        let after = after.trim_start_matches(' ');
        let trimmed = trim_spaces(after);
        if trimmed.is_empty() {
            return Ok(Value::Object(Map::new()));
        }
        if trimmed == "[]" {
            return Ok(Value::Array(Vec::new()));
        }
        let item = Line {
            content: after,
            ..line
        };
        if self.dialect && after.starts_with(['[', '{']) {
            return self.dialect_list_item(item, depth);
        }
        // A header starting with '[' is exactly a keyless one (see `parse_header`), so one
        // parse serves the reference's two.
        let header = self.header(after)?;
        if let Some(h) = &header
            && h.key.is_none()
            && (h.keyed || h.fields.is_some())
        {
            return Err(fail_at(
                after,
                if h.keyed {
                    "expected a key before a keyed header's '[' (keyless keyed headers are only \
                     valid at the document root)"
                } else {
                    "expected a key before a header with a field list (keyless ones are only \
                     valid at the document root)"
                },
            ));
        }
        match header {
            // `- [N]: ...`: an array in an array
            Some(h) if h.key.is_none() => return self.array_from_header(h, depth, &item),
            None if !is_key_value_content(after) => return parse_primitive(after, self.dialect),
            _ => {}
        }
        // An object: its first field on the hyphen line, the others one level deeper. The
        // reference's separate path for `- key[N]{fields}:` comes to the same thing: the
        // table's rows sit two levels below the hyphen either way.
        self.enter(&item)?;
        let mut obj = ObjBuilder::default();
        self.key_value_with(item, header, depth + 1, &mut obj)?;
        self.sibling_fields(depth + 1, &mut obj)?;
        self.leave();
        Ok(Value::Object(obj.finish()))
    }

    /// A dialect list item starting with `[` or `{`: a keyless array header (`- [2]: a,b`,
    /// `- [2]:` with items, `- [2]{a,b}:` with rows), or else JSON.
    pub(super) fn dialect_list_item(
        &mut self,
        item: Line<'a>,
        depth: usize,
    ) -> Result<Value, Fail> {
        if item.content.starts_with('[')
            && let HeaderParse::Header(mut header) = parse_header(item.content, true)?
        {
            if let Some(fail) = header.strict_error.take()
                && self.strict
            {
                return Err(fail);
            }
            if header.key.is_none() && !header.keyed {
                // The encoder writes the array's block two levels below the hyphen (as it
                // would as a member); TOON writes a list's items one level below. Either
                // reads: nothing else can sit under an item that is an array.
                let base = match self.reader.peek()? {
                    Some(next) if next.depth == depth + 2 => depth + 1,
                    _ => depth,
                };
                return self.array_from_header(header, base, &item);
            }
        }
        parse_json(item.content, self.json_depth_left())
    }

    /// Where an array's rows or items sit: one level below `base`, or (lenient mode) as
    /// deep as the first of them.
    pub(super) fn scope_content_depth(&mut self, base: usize) -> Result<usize, Fail> {
        match self.reader.peek()? {
            Some(first) if first.depth > base + 1 => {
                self.no_depth_jump(&first, base)?;
                Ok(first.depth)
            }
            _ => Ok(base + 1),
        }
    }

    pub(super) fn no_depth_jump(&self, line: &Line<'a>, parent: usize) -> Result<(), Fail> {
        if self.strict && line.depth > parent + 1 {
            return Err(fail_at(
                line.content,
                format!(
                    "expected indentation depth {}, found {} (a jump of more than one level)",
                    parent + 1,
                    line.depth
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn no_blank_lines(
        &self,
        span: Option<(usize, usize)>,
        inside: &str,
    ) -> Result<(), Fail> {
        if let Some((start, end)) = span
            && let Some(raw) = self.reader.blank_between(start, end)
        {
            return Err(fail_at(
                raw,
                format!("expected no blank lines inside a {inside} in strict mode"),
            ));
        }
        Ok(())
    }

    pub(super) fn check_count(
        &self,
        found: usize,
        expected: usize,
        what: &str,
        line: &Line<'a>,
    ) -> Result<(), Fail> {
        if found != expected {
            return Err(fail_at(
                line.raw,
                format!("expected {expected} {what}, found {found}"),
            ));
        }
        Ok(())
    }

    pub(super) fn expect_end(&mut self) -> Result<(), Fail> {
        match self.reader.peek()? {
            Some(line) => Err(fail_at(
                line.content,
                "expected the end of the document after the root array, found more content",
            )),
            None => Ok(()),
        }
    }

    /// Where `key` goes in `obj`: its current position (last write wins), or `None` to append.
    /// Strict mode rejects a repeated key instead.
    pub(super) fn claim(
        &self,
        obj: &mut ObjBuilder,
        key: &str,
        at: &str,
    ) -> Result<Option<usize>, Fail> {
        let slot = obj.find(key, &self.hasher);
        if self.strict && slot.is_some() {
            return Err(fail_at(
                at,
                format!("duplicate key {key:?}: keys must be unique in strict mode"),
            ));
        }
        Ok(slot)
    }

    pub(super) fn enter(&mut self, line: &Line<'a>) -> Result<(), Fail> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(fail_at(
                line.content,
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.nesting -= 1;
    }
}

/// Where a counted block's entries are, and how errors name them.
struct Block {
    /// The count the header declares.
    length: usize,
    /// The depth of the line that opened the block; a line at or above it ends the block.
    base: usize,
    /// The depth every entry is at.
    depth: usize,
    /// The entries, in count errors: "tabular rows", "list items".
    what: &'static str,
    /// The block, in blank-line errors: "tabular array", "list array".
    name: &'static str,
}
