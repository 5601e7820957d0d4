//! `pare policy check FILE` and `pare policy schema`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Subcommand;
use pare::policy::Policy;

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
    match cmd {
        Command::Check { file } => {
            let policy = load(&file)?;
            println!("{}: ok", file.display());
            if let Some(d) = policy.description() {
                println!("  {}", d.lines().next().unwrap_or(""));
            }
            println!(
                "  levels: {} (default {})",
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
                println!("  {level:>10}: {ops}");
            }
            let params: Vec<String> = policy
                .options()
                .params
                .iter()
                .map(|(k, v)| format!("{k} = {}", serde_json::to_string(v).unwrap_or_default()))
                .collect();
            if !params.is_empty() {
                println!("  params: {}", params.join(", "));
            }
            Ok(())
        }
        Command::Schema => {
            print!("{}", pare::schema::json_schema());
            Ok(())
        }
    }
}

/// Read and compile a policy file, with the file name in any error.
pub fn load(path: &Path) -> Result<Policy> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading policy {}", path.display()))?;
    Policy::parse(&text).with_context(|| format!("in policy {}", path.display()))
}
