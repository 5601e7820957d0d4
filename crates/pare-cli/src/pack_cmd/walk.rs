//! Finding and reading the source files `pare pack DIR` packs: a walk that sees the tree
//! as git does (`.gitignore`, `.ignore`, `.git/info/exclude`, hidden files skipped, in a git
//! repository or not), in sorted path order, skipping binary, non-UTF-8 and over-large
//! files — each skip named, never silent.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use ignore::WalkBuilder;
use pare::pack::source::SourceFile;
use rayon::prelude::*;
use serde_json::json;

/// A file not packed, and why.
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

impl Skipped {
    pub fn json(&self) -> serde_json::Value {
        json!({"path": self.path, "reason": self.reason})
    }
}

/// The files to pack (sorted by their shown path) and the files skipped.
pub struct Walked {
    pub files: Vec<SourceFile>,
    pub skipped: Vec<Skipped>,
}

/// A file is binary when its first this many bytes hold a NUL (as git decides).
const SNIFF_BYTES: usize = 8000;

/// Walks `paths` (files and directories). Paths are shown relative to the directory when
/// one directory is given, else as walked (`./` dropped), with `/` separators.
pub fn walk(paths: &[PathBuf], max_file_bytes: u64) -> Result<Walked> {
    for p in paths {
        if p.as_os_str() == "-" {
            bail!("`-` (stdin) can't be packed as source; give files or directories");
        }
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    let base: Option<&Path> = match paths {
        [dir] if dir.is_dir() => Some(dir),
        _ => None,
    };
    let mut builder = WalkBuilder::new(&paths[0]);
    for p in &paths[1..] {
        builder.add(p);
    }
    builder
        .standard_filters(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_path(|a, b| a.cmp(b));
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let mut skipped = Vec::new();
    for entry in builder.build() {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                // An unreadable directory or a broken ignore file: named, the walk goes on.
                skipped.push(Skipped {
                    path: String::new(),
                    reason: err.to_string(),
                });
                continue;
            }
        };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            continue;
        }
        let shown = shown_path(entry.path(), base);
        if kind.is_symlink() {
            skipped.push(Skipped {
                path: shown,
                reason: "a symbolic link (not followed)".into(),
            });
        } else if kind.is_file() {
            found.push((shown, entry.into_path()));
        }
    }
    found.sort();
    found.dedup_by(|a, b| a.0 == b.0);
    let read: Vec<Result<SourceFile, Skipped>> = found
        .into_par_iter()
        .map(|(shown, path)| read(shown, &path, max_file_bytes))
        .collect();
    let mut files = Vec::new();
    for r in read {
        match r {
            Ok(f) => files.push(f),
            Err(s) => skipped.push(s),
        }
    }
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Walked { files, skipped })
}

fn read(shown: String, path: &Path, max_file_bytes: u64) -> Result<SourceFile, Skipped> {
    let skip = |reason: String| Skipped {
        path: shown.clone(),
        reason,
    };
    let len = std::fs::metadata(path)
        .map_err(|e| skip(format!("unreadable: {e}")))?
        .len();
    if len > max_file_bytes {
        return Err(skip(format!(
            "{len} bytes, over --max-file-bytes {max_file_bytes}"
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| skip(format!("unreadable: {e}")))?;
    if bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0) {
        return Err(skip("binary".into()));
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| skip(format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to())))?;
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    };
    Ok(SourceFile { path: shown, text })
}

fn shown_path(path: &Path, base: Option<&Path>) -> String {
    use std::path::Component;
    let rel = base.and_then(|b| path.strip_prefix(b).ok()).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .filter(|c| matches!(c, Component::Normal(_) | Component::ParentDir))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let root = if rel.has_root() { "/" } else { "" };
    format!("{root}{}", parts.join("/"))
}

/// One stderr line naming the skipped files (the first ten), or nothing.
pub fn skipped_note(skipped: &[Skipped]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let listed: Vec<String> = skipped
        .iter()
        .take(10)
        .map(|s| {
            if s.path.is_empty() {
                s.reason.clone()
            } else {
                format!("{} ({})", s.path, s.reason)
            }
        })
        .collect();
    let more = if skipped.len() > 10 { ", …" } else { "" };
    let plural = if skipped.len() == 1 { "" } else { "s" };
    Some(format!(
        "pare pack: skipped {} file{plural}: {}{more}",
        skipped.len(),
        listed.join(", ")
    ))
}
