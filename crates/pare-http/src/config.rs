//! The `[http]` section of a policy file, read for `pare http`: the file and the policy
//! files its `[[http.routes]]` entries name (relative to it), resolved once at start-up
//! into the engine's routes (`pare::rest::routes`).

use std::path::{Path, PathBuf};

use pare::rest::routes::{Routes, RoutesError};
use pare::{LoadError, Policy};

/// A policy file `pare http` cannot use: it refuses to start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file, or one a `policy = …` entry names, cannot be read or is no valid policy.
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("in policy {path}: {message}")]
    Routes { path: PathBuf, message: String },
}

/// Read a policy file and the policy files its `[[http.routes]]` entries name.
pub fn load(path: &Path) -> Result<Routes, ConfigError> {
    let policy = read_policy(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    Routes::from_policy(policy, &mut |rel: &str| read_policy(&dir.join(rel))).map_err(|e| match e {
        // The error of the file the entry names, with that file's path.
        RoutesError::Resolve { source, .. } => source,
        other => ConfigError::Routes {
            path: path.to_owned(),
            message: other.to_string(),
        },
    })
}

fn read_policy(path: &Path) -> Result<Policy, ConfigError> {
    Ok(Policy::load(path)?)
}
