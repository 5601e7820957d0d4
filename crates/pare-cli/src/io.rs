//! Reading inputs, writing outputs atomically, choosing a tokenizer.

use std::fs;
use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result, bail};
use pare::Tokenizer;
use pare::tokens;

/// `--max-input-bytes`, on every command that reads a whole document.
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// The largest input read whole, in bytes (suffixes K, M, G, T: binary; KB, MB, GB:
    /// decimal). A larger file is refused before it is read, and a pipe when it passes the
    /// limit, with exit status 2. Default: an eighth of this machine's memory (or of the
    /// cgroup's memory limit, if lower), because shaping a whole document peaks at up to
    /// about 6.5 times its size. With --jsonl, which streams, it caps each line.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub max_input_bytes: Option<u64>,
}

impl InputArgs {
    /// Make the limit the one every read of this run checks.
    pub fn apply(&self) {
        let limit = self.max_input_bytes.unwrap_or_else(default_max_input);
        MAX_INPUT.store(limit.max(1), Ordering::Relaxed);
    }
}

/// The limit in force; unlimited until [`InputArgs::apply`].
static MAX_INPUT: AtomicU64 = AtomicU64::new(u64::MAX);

fn max_input() -> u64 {
    MAX_INPUT.load(Ordering::Relaxed)
}

/// An eighth of the memory this process may use: the machine's (`MemTotal`), or its
/// cgroup's limit when lower (`memory.max`, cgroup v2; `memory.limit_in_bytes`, v1).
/// 1 GiB when neither can be read.
pub fn default_max_input() -> u64 {
    let total = mem_total();
    let cgroup = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|p| fs::read_to_string(p).ok()?.trim().parse::<u64>().ok());
    match (total, cgroup) {
        (Some(t), Some(c)) => t.min(c) / 8,
        (Some(m), None) | (None, Some(m)) => m / 8,
        (None, None) => 1 << 30,
    }
}

/// The machine's memory in bytes (`MemTotal` in `/proc/meminfo`), if it can be read.
fn mem_total() -> Option<u64> {
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    let kb = meminfo.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    Some(
        kb.trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()?
            * 1024,
    )
}

/// `512M`, `2G`, `1.5GiB`, `3000000000`, `3GB`: bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "T" | "TiB" => 1 << 40,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        other => {
            return Err(format!(
                "`{other}` is not a size unit (allowed: K, M, G, T, KiB, MiB, GiB, TiB, KB, MB, GB, TB, or none for bytes)"
            ));
        }
    };
    let n: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a size (e.g. 512M, 2G, 3000000000)"))?;
    let bytes = n * scale as f64;
    if !(1.0..=u64::MAX as f64).contains(&bytes) {
        return Err(format!("`{text}` is not a size of at least one byte"));
    }
    Ok(bytes as u64)
}

/// The error for an input over the limit.
fn too_large(name: &str, size: Option<u64>) -> anyhow::Error {
    let limit = max_input();
    let is = match size {
        Some(n) => format!("is {} ({n} bytes)", human(n)),
        None => format!("passed {} while being read", human(limit)),
    };
    anyhow::anyhow!(
        "{name} {is}, over --max-input-bytes ({limit} bytes, {}); nothing was written. Raise it with --max-input-bytes SIZE if this machine has about 6.5 times that in memory, or give one JSON value per line with --jsonl, which streams",
        human(limit)
    )
}

fn human(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n => format!("{n} bytes"),
    }
}

/// The lines of `reader` as `BufRead::lines` gives them (no `\n` or `\r\n`, UTF-8 or an
/// error), but a line over `--max-input-bytes` is an error once it passes the limit, not
/// a buffer grown to the size of the file (`--jsonl` of one 2 GB line).
pub fn capped_lines(reader: Box<dyn io::BufRead>) -> impl Iterator<Item = io::Result<String>> {
    let limit = max_input();
    let mut reader = reader;
    std::iter::from_fn(move || {
        let mut line = Vec::new();
        match (&mut reader)
            .take(limit.saturating_add(1))
            .read_until(b'\n', &mut line)
        {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) => return Some(Err(e)),
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        } else if line.len() as u64 > limit {
            return Some(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the line passed --max-input-bytes ({limit} bytes, {}) while being read; stopped there",
                    human(limit)
                ),
            )));
        }
        Some(String::from_utf8(line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)))
    })
}

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

/// Read all of FILE, or stdin for `-` / no file, empty or not; text that is not UTF-8 is
/// an error naming the first bad byte's line and column.
pub fn read_text(file: Option<&Path>) -> Result<String> {
    let name = input_name(file);
    let regular = match file {
        Some(p) if p != Path::new("-") => fs::metadata(p).is_ok_and(|m| m.is_file()),
        _ => false,
    };
    let bytes = if regular {
        read_bytes(file)?
    } else {
        // A pipe or a device has no size to stop at (`/dev/zero` never ends): read it in
        // pieces and stop at the first byte no text of ours can hold.
        let source: Box<dyn Read> = match file {
            Some(p) if p != Path::new("-") => {
                Box::new(fs::File::open(p).with_context(|| format!("reading {}", p.display()))?)
            }
            _ => Box::new(io::stdin().lock()),
        };
        read_stopping(source, &name)?
    };
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        not_utf8(&name, e.as_bytes(), at)
    })
}

/// How much of a pipe or device is read before it is checked.
const PIECE_BYTES: u64 = 1 << 20;

/// Read `source` to its end in pieces, stopping at the first byte that makes it no JSON or
/// TOON text: a NUL, or bytes that are not UTF-8 (the error says where).
fn read_stopping(mut source: Box<dyn Read>, name: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut checked = 0; // bytes known to be whole UTF-8 characters without a NUL
    loop {
        // Straight into the buffer's spare room (no copy, no zeroing), a piece at a time.
        let n = (&mut source)
            .take(PIECE_BYTES)
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {name}"))?;
        if n == 0 {
            return Ok(bytes);
        }
        if bytes.len() as u64 > max_input() {
            return Err(too_large(name, None));
        }
        let fresh = &bytes[checked..];
        // `contains` on bytes is a memchr; the position is looked for only when there is one.
        if fresh.contains(&0)
            && let Some(nul) = fresh.iter().position(|&b| b == 0)
        {
            let at = checked + nul;
            let (line, column) = line_column(&bytes[..at]);
            bail!(
                "{name}: a NUL byte at line {line} column {column} (byte {at}): not JSON or TOON text; stopped reading there"
            );
        }
        match std::str::from_utf8(fresh) {
            Ok(_) => checked = bytes.len(),
            // Cut inside a character at the piece's end: the next piece finishes it.
            Err(e) if e.error_len().is_none() => checked += e.valid_up_to(),
            Err(e) => return Err(not_utf8(name, &bytes, checked + e.valid_up_to())),
        }
    }
}

/// The line and column (in characters) just after `text`, which is whole UTF-8.
fn line_column(text: &[u8]) -> (usize, usize) {
    let text = std::str::from_utf8(text).unwrap_or_default();
    let line = 1 + text.matches('\n').count();
    let start = text.rfind('\n').map_or(0, |nl| nl + 1);
    (line, 1 + text[start..].chars().count())
}

/// Read all of FILE, or stdin for `-` / no file, as bytes; more than `--max-input-bytes`
/// is an error (a file's before it is read).
pub fn read_bytes(file: Option<&Path>) -> Result<Vec<u8>> {
    let limit = max_input();
    match file {
        Some(p) if p != Path::new("-") => {
            let size = fs::metadata(p)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len());
            if size.is_some_and(|n| n > limit) {
                return Err(too_large(&p.display().to_string(), size));
            }
            let bytes = read_file(p).with_context(|| format!("reading {}", p.display()))?;
            if bytes.len() as u64 > limit {
                return Err(too_large(&p.display().to_string(), None));
            }
            Ok(bytes)
        }
        _ => {
            let mut bytes = Vec::new();
            io::stdin()
                .take(limit.saturating_add(1))
                .read_to_end(&mut bytes)
                .context("reading standard input")?;
            if bytes.len() as u64 > limit {
                return Err(too_large("<stdin>", None));
            }
            Ok(bytes)
        }
    }
}

/// The error for text whose first `at` bytes are UTF-8 and the next one is not: where it
/// is, as a line and column (in characters) like JSON errors, and as a byte offset.
fn not_utf8(name: &str, bytes: &[u8], at: usize) -> anyhow::Error {
    let (line, column) = line_column(&bytes[..at]);
    anyhow::anyhow!(
        "{name} is not UTF-8: byte 0x{:02X} at line {line} column {column} (byte {at})",
        bytes[at]
    )
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
/// The data goes to a temporary file beside the target (`.NAME.pare-tmp-PID`, the same
/// directory so the rename is atomic) and is renamed over it on [`AtomicFile::commit`].
/// A symlink is written through (its target is replaced, not the link), and a target that
/// is not a regular file (`/dev/stdout`, a FIFO) is written directly, since it cannot be
/// replaced atomically anyway.
///
/// An existing target's permission bits carry over to its replacement (a `0600` file stays
/// `0600`); they are set on the temporary file before any data goes in. Owner and group
/// are not carried over (that would need privileges).
///
/// A run that is killed (SIGKILL, Ctrl-C: anything that skips `Drop`) leaves its temporary
/// file behind, and large outputs add up. So creating one first removes the temporaries of
/// earlier runs for the same target: `.NAME.pare-tmp-PID[.N]` files whose PID is no running
/// process (`/proc/PID` tells, without `unsafe`; without `/proc` nothing is removed). A live
/// PID's file is left alone: another pare may be writing it. The temporary stays beside the
/// target rather than in a directory the system cleans (`/tmp`), because only a rename
/// within one file system is atomic. Limits: a dead run's PID, reused by another process,
/// keeps its file until a later run; a pare in another PID namespace writing the same file
/// (a shared volume) looks dead, so its temporary may be removed under it — its rename then
/// fails with an error, never a partial file.
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
        let prefix = format!(".{}.pare-tmp-", name.to_string_lossy());
        remove_stale_temporaries(dir, &prefix);
        let existing = fs::metadata(&real).ok();
        let (tmp, file) = create_temporary(dir, &prefix).with_context(open_err)?;
        temporaries::add(&tmp);
        let out = AtomicFile {
            tmp: Some(tmp),
            target: real,
            file: io::BufWriter::new(file),
        };
        #[cfg(unix)]
        if let Some(meta) = existing {
            use std::os::unix::fs::PermissionsExt;
            // fchmod, so the umask does not apply; only the rwx bits (no set-id bits
            // carried onto new content).
            let mode = meta.permissions().mode() & 0o777;
            out.file
                .get_ref()
                .set_permissions(fs::Permissions::from_mode(mode))
                .with_context(open_err)?;
        }
        #[cfg(not(unix))]
        let _ = existing;
        Ok(out)
    }

    pub fn commit(mut self) -> Result<()> {
        self.file
            .flush()
            .with_context(|| format!("writing {}", self.target.display()))?;
        if let Some(tmp) = self.tmp.take() {
            let renamed = fs::rename(&tmp, &self.target);
            temporaries::remove(&tmp);
            if renamed.is_err() {
                let _ = fs::remove_file(&tmp);
            }
            renamed.with_context(|| format!("writing {}", self.target.display()))?;
        }
        Ok(())
    }
}

impl AtomicFile {
    /// `e`, naming the file (a full disk said only "No space left on device").
    fn named(&self, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("writing {}: {e}", self.target.display()))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf).map_err(|e| self.named(e))
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush().map_err(|e| self.named(e))
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Not committed: remove the temporary file.
        if let Some(tmp) = &self.tmp {
            let _ = fs::remove_file(tmp);
            temporaries::remove(tmp);
        }
    }
}

/// The temporary files being written, removed if the process is stopped by SIGTERM, SIGINT
/// or SIGHUP before they are renamed into place (it used to leave them: 1 of 20 runs
/// stopped by SIGTERM). A SIGKILL cannot be caught: the next run for the same target
/// removes what a dead process left ([`remove_stale_temporaries`]).
mod temporaries {
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, Once};

    static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    static WATCH: Once = Once::new();

    pub fn add(path: &Path) {
        WATCH.call_once(watch);
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(path.to_owned());
    }

    pub fn remove(path: &Path) {
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p != path);
    }

    /// A thread that, on the first of these signals, removes the live temporaries and exits
    /// with 128 + the signal's number, as the shell reports a process the signal stopped.
    fn watch() {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else {
            return; // no watcher: the next run removes what is left
        };
        let _ = std::thread::Builder::new()
            .name("pare-temporaries".into())
            .spawn(move || {
                if let Some(signo) = signals.forever().next() {
                    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    for path in live {
                        let _ = std::fs::remove_file(path);
                    }
                    std::process::exit(128 + signo);
                }
            });
    }
}

/// A new file `PREFIX` + our PID in `dir` (`.N` added if that name is taken: another
/// AtomicFile of this process, or a dead run's file that had our PID). Created exclusively,
/// so nothing planted under the name (a symlink) is written through.
fn create_temporary(dir: &Path, prefix: &str) -> io::Result<(PathBuf, fs::File)> {
    let pid = std::process::id();
    let mut attempt = 0u32;
    loop {
        let name = match attempt {
            0 => format!("{prefix}{pid}"),
            n => format!("{prefix}{pid}.{n}"),
        };
        let path = dir.join(name);
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 64 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Remove the temporary files of killed runs for one target: regular files in `dir` named
/// `PREFIX` + `PID` or `PID.N` whose PID is no running process. Best effort: whatever
/// cannot be read or removed is left as it is.
fn remove_stale_temporaries(dir: &Path, prefix: &str) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return; // no way to tell a live PID from a dead one
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let own = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(temporary_pid)
        else {
            continue;
        };
        if pid == own || proc.join(pid.to_string()).exists() {
            continue;
        }
        if entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The PID of a temporary file's suffix, `PID` or `PID.N` (digits only).
fn temporary_pid(suffix: &str) -> Option<u32> {
    let (pid, seq) = suffix.split_once('.').unwrap_or((suffix, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(seq) {
        return None;
    }
    pid.parse().ok()
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

/// An address to listen on (`flag`'s value: `--listen`, `--metrics`) as `HOST:PORT`,
/// `[V6]:PORT` or `PORT` (on 127.0.0.1); a bad one exits 2.
pub fn listen_addr(cmd: &str, flag: &str, addr: &str) -> std::net::SocketAddr {
    use std::net::ToSocketAddrs;
    if let Ok(port) = addr.parse::<u16>() {
        return std::net::SocketAddr::from(([127, 0, 0, 1], port));
    }
    match addr.to_socket_addrs().map(|mut a| a.next()) {
        Ok(Some(a)) => a,
        Ok(None) => usage_error(
            cmd,
            &format!("{flag} {addr}: the name resolves to no address"),
        ),
        Err(e) => usage_error(
            cmd,
            &format!("{flag} {addr}: {e} (expected HOST:PORT, e.g. 127.0.0.1:8765, or a port)"),
        ),
    }
}

/// A bad flag value: the message and exit status 2, like clap's own usage errors.
pub fn usage_error(cmd: &str, message: &str) -> ! {
    eprintln!("pare {cmd}: error: {message}");
    std::process::exit(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_and_decimal_units() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("1K"), Ok(1024));
        assert_eq!(parse_size("2M"), Ok(2 << 20));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("3GB"), Ok(3_000_000_000));
        assert_eq!(parse_size(" 2 G "), Ok(2 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1G").is_err());
        assert!(parse_size("G").is_err());
        assert!(parse_size("1e9").unwrap_err().contains("not a size unit"));
    }

    #[test]
    fn the_default_limit_is_an_eighth_of_memory() {
        let limit = default_max_input();
        match mem_total() {
            Some(t) => assert!(limit <= t / 8 && limit > 0, "{limit} of {t}"),
            None => assert_eq!(limit, 1 << 30),
        }
    }
}
