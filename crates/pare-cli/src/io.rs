//! Reading inputs, writing outputs atomically, choosing a tokenizer.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use pare::tokens::{self, Tokenizer};

/// Read all of FILE, or stdin for `-` / no file: a JSON value, so an empty text (nothing
/// but whitespace and a byte order mark) is an error.
pub fn read_input(file: Option<&Path>) -> Result<String> {
    let text = read_text(file)?;
    if is_blank(&text) {
        bail!("{}: empty input (expected a JSON value)", input_name(file));
    }
    Ok(text)
}

/// Whether `text` holds nothing but whitespace, after a byte order mark.
fn is_blank(text: &str) -> bool {
    text.strip_prefix('\u{feff}')
        .unwrap_or(text)
        .trim()
        .is_empty()
}

/// Read all of FILE, or stdin for `-` / no file, empty or not.
pub fn read_text(file: Option<&Path>) -> Result<String> {
    let mut text = String::new();
    match file {
        None => {
            io::stdin()
                .read_to_string(&mut text)
                .context("reading standard input (is it UTF-8?)")?;
        }
        Some(p) if p == Path::new("-") => {
            io::stdin()
                .read_to_string(&mut text)
                .context("reading standard input (is it UTF-8?)")?;
        }
        Some(p) => {
            let bytes = read_file(p).with_context(|| format!("reading {}", p.display()))?;
            text = String::from_utf8(bytes).map_err(|e| {
                anyhow::anyhow!(
                    "{} is not UTF-8 (byte {})",
                    p.display(),
                    e.utf8_error().valid_up_to()
                )
            })?;
        }
    }
    Ok(text)
}

/// Files at least this large are read in two halves on two threads: for a payload of tens
/// of megabytes, copying it in from the page cache (and the page faults of the fresh
/// buffer) is a tenth of `pare encode`'s time.
const SPLIT_READ_BYTES: u64 = 8 << 20;

/// All of the file at `path`, as `fs::read` reads it.
fn read_file(path: &Path) -> io::Result<Vec<u8>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        let file = fs::File::open(path)?;
        let meta = file.metadata()?;
        if meta.is_file() && meta.len() >= SPLIT_READ_BYTES && pare::has_second_core() {
            let len = usize::try_from(meta.len()).map_err(io::Error::other)?;
            let mut bytes = vec![0u8; len];
            let (head, tail) = bytes.split_at_mut(len / 2);
            let at = head.len() as u64;
            let read = std::thread::scope(|s| {
                let second = s.spawn(|| file.read_exact_at(tail, at));
                file.read_exact_at(head, 0)?;
                second
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
            });
            // A file that shrank or grew meanwhile: read it again the ordinary way.
            if read.is_ok() && file.read_at(&mut [0], meta.len())? == 0 {
                return Ok(bytes);
            }
        }
    }
    fs::read(path)
}

/// The display name of an input for messages.
pub fn input_name(file: Option<&Path>) -> String {
    match file {
        None => "<stdin>".into(),
        Some(p) if p == Path::new("-") => "<stdin>".into(),
        Some(p) => p.display().to_string(),
    }
}

/// Write `text` to FILE atomically (a temporary file renamed into place), or to stdout.
pub fn write_output(out: Option<&Path>, text: &str) -> Result<()> {
    match out {
        None => {
            let mut stdout = io::stdout().lock();
            stdout.write_all(text.as_bytes())?;
            stdout.flush()?;
            Ok(())
        }
        Some(path) => {
            let mut w = AtomicFile::create(path)?;
            w.write_all(text.as_bytes())?;
            w.commit()
        }
    }
}

/// A file that appears under its name only when complete: never a partial write.
///
/// The data goes to a temporary file beside the target and is renamed over it on
/// [`AtomicFile::commit`]. A symlink is written through (its target is replaced, not the
/// link), and a target that is not a regular file (`/dev/stdout`, a FIFO) is written
/// directly, since it cannot be replaced atomically anyway.
pub struct AtomicFile {
    /// `None` when writing directly.
    tmp: Option<PathBuf>,
    target: PathBuf,
    file: io::BufWriter<fs::File>,
}

impl AtomicFile {
    pub fn create(target: &Path) -> Result<AtomicFile> {
        let open_err = || format!("cannot write {}", target.display());
        if let Ok(meta) = fs::metadata(target)
            && !meta.is_file()
        {
            let file = fs::OpenOptions::new()
                .write(true)
                .open(target)
                .with_context(open_err)?;
            return Ok(AtomicFile {
                tmp: None,
                target: target.to_owned(),
                file: io::BufWriter::new(file),
            });
        }
        // Through a symlink, replace what it points to.
        let real = match fs::symlink_metadata(target) {
            Ok(m) if m.file_type().is_symlink() => {
                fs::canonicalize(target).with_context(open_err)?
            }
            _ => target.to_owned(),
        };
        let dir = real
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = real
            .file_name()
            .with_context(|| format!("{}: not a file name", target.display()))?;
        let tmp = dir.join(format!(
            ".{}.pare-tmp-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = fs::File::create(&tmp).with_context(open_err)?;
        Ok(AtomicFile {
            tmp: Some(tmp),
            target: real,
            file: io::BufWriter::new(file),
        })
    }

    pub fn commit(mut self) -> Result<()> {
        self.file
            .flush()
            .with_context(|| format!("writing {}", self.target.display()))?;
        if let Some(tmp) = self.tmp.take() {
            fs::rename(&tmp, &self.target)
                .with_context(|| format!("writing {}", self.target.display()))?;
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not committed: remove the temporary file.
        if let Some(tmp) = &self.tmp {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// The tokenizer named on the command line: `--tokenizer-file` wins over `--tokenizer`.
pub fn tokenizer(name: &str, file: Option<&Path>) -> Result<&'static dyn Tokenizer> {
    if let Some(path) = file {
        let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let tok = tokens::from_tokenizer_json(&path.display().to_string(), &bytes)?;
        // Lives for the whole process, like the built-in ones.
        return Ok(Box::leak(tok));
    }
    match tokens::builtin(name) {
        Ok(t) => Ok(t),
        Err(e) => bail!("{e}"),
    }
}

/// True when the error is a closed pipe on stdout.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
