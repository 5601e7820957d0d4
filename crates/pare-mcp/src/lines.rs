//! Newline-delimited messages in bounded memory.
//!
//! MCP's stdio transport is one JSON-RPC message per line. A line longer than the cap is not
//! held in memory: the reader hands out its first `cap` bytes and the caller streams the rest
//! ([`LineReader::copy_rest`]) straight to its destination (or discards it), such as a
//! [`Spool`] that keeps it out of memory until the whole line has been seen.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, Seek, Write};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many bytes of an oversized line's end [`LineReader::copy_rest`] keeps (enough for the
/// `"id":…}` a JSON-RPC message usually ends with).
pub const TAIL: usize = 256;

/// One read from a [`LineReader`].
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A whole line, without its `\n` (or `\r\n`).
    Whole(Vec<u8>),
    /// The first `cap` bytes of a longer line; the rest is still unread.
    Oversize(Vec<u8>),
    /// End of input.
    Eof,
}

/// The end of an oversized line, from [`LineReader::copy_rest`].
#[derive(Debug, PartialEq)]
pub struct Rest {
    /// The line's last [`TAIL`] bytes (without `\r`).
    pub tail: Vec<u8>,
    /// The line ended with a newline, not with the end of the input (a writer that died
    /// mid-message).
    pub newline: bool,
}

/// Reads lines of at most `cap` bytes.
pub struct LineReader<R> {
    inner: R,
    cap: usize,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R, cap: usize) -> Self {
        LineReader { inner, cap }
    }

    /// The next line. A last line without a newline is a whole line.
    pub fn next_line(&mut self) -> io::Result<Line> {
        let mut buf = Vec::new();
        loop {
            let avail = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                return Ok(if buf.is_empty() {
                    Line::Eof
                } else {
                    Line::Whole(trim_cr(buf))
                });
            }
            let room = self.cap - buf.len();
            match memchr::memchr(b'\n', avail) {
                Some(i) if i <= room => {
                    buf.extend_from_slice(&avail[..i]);
                    self.inner.consume(i + 1);
                    return Ok(Line::Whole(trim_cr(buf)));
                }
                _ => {
                    let take = avail.len().min(room);
                    buf.extend_from_slice(&avail[..take]);
                    self.inner.consume(take);
                    if buf.len() == self.cap {
                        return Ok(Line::Oversize(buf));
                    }
                }
            }
        }
    }

    /// Copy the rest of an oversized line to `out` (or drop it when `None`), without its
    /// newline, in bounded memory.
    pub fn copy_rest(&mut self, mut out: Option<&mut dyn Write>) -> io::Result<Rest> {
        let mut tail: Vec<u8> = Vec::with_capacity(2 * TAIL);
        loop {
            let avail = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                return Ok(Rest {
                    tail,
                    newline: false,
                });
            }
            let (chunk, done) = match memchr::memchr(b'\n', avail) {
                Some(i) => (&avail[..i], Some(i + 1)),
                None => (avail, None),
            };
            if let Some(w) = out.as_mut() {
                w.write_all(chunk)?;
            }
            tail.extend_from_slice(chunk);
            if tail.len() > TAIL {
                tail.drain(..tail.len() - TAIL);
            }
            let used = done.unwrap_or(chunk.len());
            self.inner.consume(used);
            if done.is_some() {
                if tail.last() == Some(&b'\r') {
                    tail.pop();
                }
                return Ok(Rest {
                    tail,
                    newline: true,
                });
            }
        }
    }
}

/// An unnamed temporary file: a message too large to hold waits here until its end has
/// been seen (page cache and disk, not pare's memory). Removed from the directory as soon
/// as it is created, so nothing is left behind however pare ends.
pub struct Spool {
    file: File,
}

impl Spool {
    /// In `std::env::temp_dir()` (`$TMPDIR`, else /tmp).
    pub fn new() -> io::Result<Spool> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("pare-spool-{}-{n}", std::process::id()));
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    std::fs::remove_file(&path)?;
                    return Ok(Spool { file });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Where the bytes go (buffered: flush it before [`Spool::copy_to`]).
    pub fn writer(&mut self) -> io::BufWriter<&mut File> {
        io::BufWriter::with_capacity(1 << 16, &mut self.file)
    }

    /// Copy everything written to `out`.
    pub fn copy_to(&mut self, out: &mut dyn Write) -> io::Result<u64> {
        io::copy(
            &mut io::BufReader::with_capacity(1 << 16, self.read_back()?),
            out,
        )
    }

    /// Everything written, from the start.
    pub fn read_back(&mut self) -> io::Result<&mut File> {
        self.file.rewind()?;
        Ok(&mut self.file)
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

fn trim_cr(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_crlf_and_a_last_line_without_newline() {
        let mut r = LineReader::new(&b"ab\r\ncd\nef"[..], 10);
        assert_eq!(r.next_line().unwrap(), Line::Whole(b"ab".to_vec()));
        assert_eq!(r.next_line().unwrap(), Line::Whole(b"cd".to_vec()));
        assert_eq!(r.next_line().unwrap(), Line::Whole(b"ef".to_vec()));
        assert_eq!(r.next_line().unwrap(), Line::Eof);
    }

    #[test]
    fn an_oversized_line_is_cut_at_the_cap_and_its_rest_streamed() {
        let long = format!("{}\nnext\n", "x".repeat(1000));
        let mut r = LineReader::new(io::BufReader::with_capacity(7, long.as_bytes()), 10);
        assert_eq!(
            r.next_line().unwrap(),
            Line::Oversize(b"xxxxxxxxxx".to_vec())
        );
        let mut out = Vec::new();
        let rest = r.copy_rest(Some(&mut out)).unwrap();
        assert_eq!(out.len(), 990);
        assert_eq!(rest.tail.len(), TAIL);
        assert!(rest.newline);
        assert_eq!(r.next_line().unwrap(), Line::Whole(b"next".to_vec()));
    }

    #[test]
    fn an_oversized_line_cut_by_the_end_of_input_says_so_and_a_spool_gives_it_back() {
        let mut r = LineReader::new(&b"0123456789abc"[..], 10);
        assert!(matches!(r.next_line().unwrap(), Line::Oversize(_)));
        let mut spool = Spool::new().unwrap();
        let mut w = spool.writer();
        let rest = r.copy_rest(Some(&mut w)).unwrap();
        w.flush().unwrap();
        drop(w);
        assert_eq!((rest.tail.as_slice(), rest.newline), (&b"abc"[..], false));
        let mut back = Vec::new();
        spool.copy_to(&mut back).unwrap();
        assert_eq!(back, b"abc");
    }

    #[test]
    fn a_line_of_exactly_the_cap_is_whole() {
        let mut r = LineReader::new(&b"0123456789\nz\n"[..], 10);
        assert_eq!(r.next_line().unwrap(), Line::Whole(b"0123456789".to_vec()));
        assert_eq!(r.next_line().unwrap(), Line::Whole(b"z".to_vec()));
    }
}
