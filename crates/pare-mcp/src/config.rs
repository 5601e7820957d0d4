//! The `[mcp]` section of a policy file, read for `pare mcp`: the file and the policy files
//! its `[[mcp.tools]]` entries name (relative to it), resolved once at start-up into the
//! engine's per-tool configuration (`pare::mcp::config`).

use std::path::{Path, PathBuf};

use pare::{LoadError, Policy};

pub use pare::mcp::config::ToolPolicy;

/// The proxy's shaping configuration (the engine's, read from files).
pub type Config = pare::mcp::config::Config;

/// A bad policy file: the proxy refuses to start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file, or one a `policy = …` entry names, cannot be read or is no valid policy.
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("in policy {path}: `mcp.tools[{index}].level`: {message}")]
    Level {
        path: PathBuf,
        index: usize,
        message: String,
    },
    #[error("in policy {path}: `mcp.tools[{index}].params`: {message}")]
    Params {
        path: PathBuf,
        index: usize,
        message: String,
    },
}

/// Read a policy file and the policy files its `[[mcp.tools]]` entries name.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let policy = read_policy(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    Config::from_policy(policy, &mut |rel: &str| read_policy(&dir.join(rel))).map_err(|e| {
        use pare::mcp::config::ConfigError as E;
        match e {
            // The error of the file the entry names, with that file's path.
            E::Resolve { source, .. } => source,
            E::Level { index, message } => ConfigError::Level {
                path: path.to_owned(),
                index,
                message,
            },
            E::Params { index, message } => ConfigError::Params {
                path: path.to_owned(),
                index,
                message,
            },
            other => ConfigError::Level {
                path: path.to_owned(),
                index: 0,
                message: other.to_string(),
            },
        }
    })
}

fn read_policy(path: &Path) -> Result<Policy, ConfigError> {
    Ok(Policy::load(path)?)
}
