//! `planvault`: CI pre-flight and headless runs.

mod input;

use clap::{Args, Parser, Subcommand};
use input::{read_plan, FormatArg};
use planvault_core::diagnostic;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "planvault", version, about = "Validate, draw and run plans kept as markdown notes")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a plan before anything runs: exit 0 sound, 1 unsound, 2 unreadable.
    Validate(ValidateArgs),
}

#[derive(Args)]
struct PlanArgs {
    /// A vault folder, a PLAN.md file or a generated `.json` plan.
    path: PathBuf,
    /// Read PATH in this format instead of detecting it.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
}

#[derive(Args)]
struct ValidateArgs {
    #[command(flatten)]
    plan: PlanArgs,
    /// Print `{"diagnostics": [...]}`.
    #[arg(long)]
    json: bool,
    /// Print nothing; the exit code tells.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate(args) => validate(args),
    }
}

fn validate(args: ValidateArgs) -> ExitCode {
    let source = match read_plan(&args.plan.path, args.plan.format) {
        Ok(source) => source,
        Err(err) => {
            if !args.quiet {
                eprintln!("error: {err}");
            }
            return ExitCode::from(2);
        }
    };
    let checked = planvault_core::check(&source);
    if !args.quiet {
        if args.json {
            println!("{}", diagnostic::to_json(&checked.diagnostics));
        } else {
            for d in &checked.diagnostics {
                println!("{}", d.render_human());
            }
        }
    }
    if checked.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
