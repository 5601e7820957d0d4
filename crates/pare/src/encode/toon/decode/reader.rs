//! The line scanner: indentation, comments, blank lines, CRLF and the BOM.

use super::*;

/// One non-blank, non-comment line.
#[derive(Clone, Copy, Debug)]
pub(super) struct Line<'a> {
    /// The whole line without its `\r` (and without the BOM on line 1).
    pub(super) raw: &'a str,
    /// After the indentation, trailing spaces trimmed; never empty. A list item's content
    /// is re-pointed past its `- `.
    pub(super) content: &'a str,
    pub(super) depth: usize,
    pub(super) number: usize,
}

/// Hands out lines one at a time with one line of lookahead, scanning lazily as the
/// reference does, so errors surface in the order the reference finds them.
pub(super) struct Reader<'a> {
    /// The text not scanned yet; `None` once the last line has been scanned.
    pub(super) rest: Option<&'a str>,
    pub(super) line_no: usize,
    pub(super) indent: usize,
    pub(super) strict: bool,
    pub(super) peeked: Option<Line<'a>>,
    /// The last line consumed (the reference's `lastLine`): where a list item ended.
    pub(super) last: Option<Line<'a>>,
    /// Blank lines seen so far: number and text, for the strict no-blank-lines check.
    pub(super) blanks: Vec<(usize, &'a str)>,
}

impl<'a> Reader<'a> {
    pub(super) fn peek(&mut self) -> Result<Option<Line<'a>>, Fail> {
        if self.peeked.is_none() {
            self.peeked = self.scan()?;
        }
        Ok(self.peeked)
    }

    /// Consume the line `peek` returned.
    pub(super) fn advance(&mut self) {
        if let Some(line) = self.peeked.take() {
            self.last = Some(line);
        }
    }

    pub(super) fn next(&mut self) -> Result<Option<Line<'a>>, Fail> {
        self.peek()?;
        let line = self.peeked.take();
        if line.is_some() {
            self.last = line;
        }
        Ok(line)
    }

    /// Scan up to the next line with content, recording blank lines and skipping comments.
    pub(super) fn scan(&mut self) -> Result<Option<Line<'a>>, Fail> {
        while let Some(rest) = self.rest {
            let mut raw = match rest.find('\n') {
                Some(i) => {
                    self.rest = Some(&rest[i + 1..]);
                    &rest[..i]
                }
                None => {
                    self.rest = None;
                    rest
                }
            };
            self.line_no += 1;
            if self.line_no == 1 {
                raw = raw.strip_prefix('\u{feff}').unwrap_or(raw);
            }
            raw = raw.strip_suffix('\r').unwrap_or(raw);

            let bytes = raw.as_bytes();
            let ws = bytes
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            let first_tab = bytes[..ws].iter().position(|&b| b == b'\t');
            // Strict mode measures indentation up to the first tab (then rejects the tab);
            // lenient mode counts each tab as one whole level.
            let indent = match first_tab {
                Some(tab) if self.strict => tab,
                _ => ws,
            };
            let tabs = match first_tab {
                Some(_) if !self.strict => bytes[..ws].iter().filter(|&&b| b == b'\t').count(),
                _ => 0,
            };
            let content = trim_trailing_spaces(&raw[indent..]);
            // `#` after space-only indentation is a comment line, at any indentation.
            if first_tab.is_none() && content.starts_with('#') {
                continue;
            }
            let depth = (indent - tabs) / self.indent + tabs;
            if content.is_empty() {
                self.blanks.push((self.line_no, raw));
                continue;
            }
            if self.strict {
                if let Some(tab) = first_tab {
                    return Err(fail_at(
                        &raw[tab..],
                        "tabs are not allowed in indentation in strict mode",
                    ));
                }
                if indent % self.indent != 0 {
                    return Err(fail_at(
                        content,
                        format!(
                            "expected indentation in multiples of {} spaces, found {indent}",
                            self.indent
                        ),
                    ));
                }
            }
            return Ok(Some(Line {
                raw,
                content,
                depth,
                number: self.line_no,
            }));
        }
        Ok(None)
    }

    /// The first blank line strictly between lines `start` and `end`, if any.
    pub(super) fn blank_between(&self, start: usize, end: usize) -> Option<&'a str> {
        let i = self.blanks.partition_point(|&(n, _)| n <= start);
        self.blanks
            .get(i)
            .filter(|&&(n, _)| n < end)
            .map(|&(_, raw)| raw)
    }
}
