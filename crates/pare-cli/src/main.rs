//! `pare`: shape structured tool and API responses so language models read them cheaply.
//!
//! A thin door over the `pare` engine: it reads input, picks the policy, tokenizer and
//! format, and writes the result. Exit codes: 0 ok, 2 error (bad input, bad policy, I/O).
//! A closed stdout (`pare … | head`) is not an error.

mod compact;
mod count;
mod encode_cmd;
mod http_cmd;
mod huge_pages;
mod io;
mod mcp_cmd;
mod pack_cmd;
mod policy_cmd;
mod stats;

use std::process::ExitCode;

// Shaping builds and frees many small strings and vectors; mimalloc does that about a third
// faster than the system allocator on large payloads.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "pare",
    version,
    about = "Shape JSON tool responses so language models read them cheaply",
    long_about = "pare shapes structured tool and API responses for language models: a declarative \
policy strips what a model does not need (nulls, internal fields, verbose triples), detail levels \
keep the caller in control, and every count is made with a real tokenizer.\n\n\
Examples:\n  pare compact response.json --policy examples/policies/entities.toml --report\n  \
pare compact response.json --policy examples/policies/entities.toml --format auto\n  \
pare encode response.json --format toon\n  pare expand response.auto.txt\n  \
pare stats response.json --top 15\n  pare count response.json src/*.rs\n  pare policy ops\n  pare policy ops limit\n  \
pare policy check examples/policies/narrative.toml --sample response.json"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Shape JSON with a policy and print it (the report goes to stderr).
    Compact(compact::Args),
    /// Re-encode JSON without a policy: json, pretty, toon or auto (lossless).
    Encode(encode_cmd::EncodeArgs),
    /// Read JSON, TOON or pare auto text back as JSON.
    Expand(encode_cmd::ExpandArgs),
    /// Pack a source tree, files, search results or code chunks under a hard token budget.
    Pack(pack_cmd::Args),
    /// Show where a payload's tokens go, per path.
    Stats(stats::Args),
    /// Count the exact tokens of any text, per file (and a total for several).
    Count(count::Args),
    /// Run an MCP server behind pare: its tool results shaped, paged under a token budget.
    Mcp(mcp_cmd::Args),
    /// Put pare in front of a REST API: its JSON responses shaped per route, paged under a
    /// budget; everything else passes through exactly.
    Http(http_cmd::Args),
    /// Check a policy (and try it on a sample), list and explain the ops, or print the
    /// policy JSON Schema.
    Policy {
        #[command(subcommand)]
        command: policy_cmd::Command,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Done before the runtime started where glibc allows ([`huge_pages`]); again here, by
    // the same rule, for the platforms where it does not.
    let first = std::env::args_os().nth(1);
    if !first.is_some_and(|a| huge_pages::long_lived(a.as_encoded_bytes())) {
        huge_pages::one_shot();
    }
    let result = match cli.command {
        Command::Compact(args) => compact::run(args),
        Command::Encode(args) => encode_cmd::encode(args),
        Command::Expand(args) => encode_cmd::expand_cmd(args),
        Command::Pack(args) => pack_cmd::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Count(args) => count::run(args),
        Command::Mcp(args) => mcp_cmd::run(args),
        Command::Http(args) => http_cmd::run(args),
        Command::Policy { command } => policy_cmd::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if io::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("pare: error: {err:#}");
            ExitCode::from(2)
        }
    }
}
