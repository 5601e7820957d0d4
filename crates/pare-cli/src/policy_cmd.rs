//! `pare policy check FILE` and `pare policy schema`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Subcommand;
use pare::policy::Policy;
use pare_mcp::ConfigError;

use crate::io;

#[derive(Subcommand)]
pub enum Command {
    /// Validate a policy (TOML or JSON) and summarise it.
    Check {
        /// The policy file.
        file: PathBuf,
    },
    /// Print the JSON Schema of policy files (for editors).
    Schema,
}

pub fn run(cmd: Command) -> Result<()> {
    // Written at once through `write_output`: a closed stdout (`| head -0`) is then an
    // error `main` treats as a quiet exit, where `println!` would panic.
    match cmd {
        Command::Check { file } => {
            let policy = load(&file)?;
            // What `pare mcp --policy FILE` would refuse, refused here too.
            pare_mcp::config::load(&file).map_err(|e| anyhow::anyhow!(mcp_error(&file, &e)))?;
            // What `pare http --policy FILE` would refuse in `[http]`.
            pare_http::config::load(&file)?;
            io::write_output(None, &summary(&file, &policy))
        }
        Command::Schema => io::write_output(None, &pare::schema::json_schema()),
    }
}

fn summary(file: &Path, policy: &Policy) -> String {
    let mut out = format!("{}: ok\n", file.display());
    if let Some(d) = policy.description() {
        out += &format!("  {}\n", d.lines().next().unwrap_or(""));
    }
    out += &format!(
        "  levels: {} (default {})\n",
        policy.levels().join(", "),
        policy.default_level()
    );
    for (i, level) in policy.levels().iter().enumerate() {
        let ops = policy.ops_at(i);
        let ops = if ops.is_empty() {
            "(input unchanged)".to_owned()
        } else {
            ops.join(" → ")
        };
        out += &format!("  {level:>10}: {ops}\n");
    }
    let params: Vec<String> = policy
        .options()
        .params
        .iter()
        .map(|(k, v)| format!("{k} = {}", serde_json::to_string(v).unwrap_or_default()))
        .collect();
    if !params.is_empty() {
        out += &format!("  params: {}\n", params.join(", "));
    }
    out
}

/// The proxy's refusal of `file`'s `[mcp]` section, naming the entry's key when the error
/// is about a policy file an entry names.
fn mcp_error(file: &Path, e: &ConfigError) -> String {
    if let ConfigError::Read { path, .. } = e
        && path != file
        && let Ok(policy) = load(file)
        && let Some(mcp) = &policy.options().mcp
        && let Some(i) = mcp.tools.iter().position(|t| {
            t.policy
                .as_ref()
                .is_some_and(|rel| file.parent().unwrap_or(Path::new(".")).join(rel) == *path)
        })
    {
        return format!(
            "`mcp.tools[{i}].policy` = {:?}: {e}",
            path.display().to_string()
        );
    }
    e.to_string()
}

/// Read and compile a policy file, with the file name in any error.
pub fn load(path: &Path) -> Result<Policy> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading policy {}", path.display()))?;
    Policy::parse(&text).with_context(|| format!("in policy {}", path.display()))
}
