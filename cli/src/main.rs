//! `planvault`: CI pre-flight and headless runs.

#![forbid(unsafe_code)]
// A program: its output is the point.
#![allow(clippy::print_stdout, clippy::print_stderr)]

/// `println!` for what the command answers on stdout: a reader that stops
/// early (`planvault validate --json | head`) ends the writing, not the
/// program with a panic; the exit code still says what was found.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` as [`outln!`] writes.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

mod input;
mod mcp_config;
mod receipt;
mod run;
mod trust;
// Without the `temporal` feature the commands parse their flags only to
// say how to get a build that runs them.
#[cfg_attr(not(feature = "temporal"), allow(dead_code))]
mod temporal;

use clap::{Args, Parser, Subcommand};
use input::{read_plan, FormatArg};
use planvault_core::diagnostic;
use planvault_core::export::{self, GraphFormat};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "planvault",
    version,
    about = "Validate, draw and run plans kept as markdown notes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a plan before anything runs: exit 0 sound, 1 unsound, 2 unreadable.
    Validate(ValidateArgs),
    /// Draw a plan (ASCII tree by default); diagnostics go to stderr.
    Graph(GraphArgs),
    /// Run a plan against an OpenAI-compatible endpoint; run again to resume.
    Run(run::RunArgs),
    /// Check a run's receipt against its journal, plan, verifiers and commit.
    #[command(subcommand)]
    Receipt(receipt::ReceiptCommand),
    /// Run planvault workflows and activities for a Temporal cluster (feature `temporal`).
    Worker(temporal::WorkerArgs),
    /// Start a vault's run on a Temporal cluster (once per vault and run name).
    Submit(temporal::SubmitArgs),
    /// List the runs on a Temporal cluster: state, and who they wait for.
    Runs(temporal::RunsArgs),
    /// Answer a Temporal run's human gate: `ITEM=approve|reject` with an optional `:note`.
    Decide(temporal::DecideArgs),
    /// Stop a Temporal run resumably.
    Cancel(temporal::CancelArgs),
    /// Show what a vault's `.planvault/config.toml` reaches beyond the vault
    /// (commands, hosts, keys) and trust it, until that changes; and take as
    /// given the decisions its run's journal holds that no run here took.
    Trust(TrustArgs),
}

#[derive(Args)]
struct TrustArgs {
    /// A vault folder, a plan folder in one, or a PLAN.md or `.json` plan
    /// (whose run vault `<name>.run/` holds its config).
    path: PathBuf,
    /// The vault a plan folder lies in, when it has no `.obsidian/` folder.
    #[arg(long = "vault-root", value_name = "FOLDER")]
    vault_root: Option<PathBuf>,
    /// Take the trust back: the config's, and the decisions its run's
    /// journal holds (a resume past them asks again).
    #[arg(long)]
    forget: bool,
}

#[derive(Args)]
struct PlanArgs {
    /// A vault folder, a PLAN.md file or a generated `.json` plan.
    path: PathBuf,
    /// Exit 1 on any diagnostic, a warning too, as `leopold graph` does
    /// (without it a plan whose diagnostics are all warnings is sound, as
    /// Leopold's run pre-flight has it).
    #[arg(long)]
    strict: bool,
    /// Read PATH in this format instead of detecting it.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// A generated plan may use only these tools (repeatable); any other tool
    /// is refused as `tool-not-permitted` before anything runs.
    #[arg(long = "allow-tool", value_name = "TOOL")]
    allow_tool: Vec<String>,
    /// The vault a plan folder lies in, when it has no `.obsidian/` folder
    /// (nor SilverBullet's `CONFIG.md`) to be found by: PATH's notes are the
    /// plan, links resolve in the vault.
    #[arg(long = "vault-root", value_name = "FOLDER")]
    vault_root: Option<PathBuf>,
    /// Also warn where SilverBullet would open another page for a link (a
    /// wikilink there is a path from the space's root, case-sensitive; a
    /// markdown link is relative to its note), with the link both read alike.
    /// On unasked in a SilverBullet space (its root's `CONFIG.md` has a
    /// `space-lua` block).
    #[arg(long)]
    silverbullet: bool,
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
    /// Check every node's declared tools against the built-ins and the
    /// configured MCP servers (each is started to list its tools).
    #[arg(long)]
    check_tools: bool,
    /// The config naming the MCP servers (default: the vault's
    /// `.planvault/config.toml`).
    #[arg(long, value_name = "FILE", requires = "check_tools")]
    config: Option<PathBuf>,
    /// Trust the vault's config for this check (the servers it starts), as
    /// `planvault trust` does for good; a config given by --config is yours.
    #[arg(long, requires = "check_tools")]
    trust_config: bool,
}

#[derive(Args)]
#[group(id = "output", multiple = false)]
struct GraphOutput {
    /// `{"format", "start", "nodes": [...], "edges": [...], "diagnostics": [...]}`.
    #[arg(long)]
    json: bool,
    /// A Mermaid flowchart.
    #[arg(long)]
    mermaid: bool,
    /// A tree for the terminal (the default).
    #[arg(long)]
    ascii: bool,
    /// A JSON Canvas 1.0 document for Obsidian.
    #[arg(long)]
    canvas: bool,
}

#[derive(Args)]
struct GraphArgs {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    output: GraphOutput,
    /// Print nothing; exit non-zero when the plan is unsound (CI pre-flight).
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    keep_environment_private();
    let cli = Cli::parse();
    match cli.command {
        Command::Validate(args) => validate(args),
        Command::Graph(args) => graph(args),
        Command::Run(args) => run::run(args),
        Command::Receipt(command) => receipt::run(command),
        Command::Worker(args) => temporal::run(temporal::Temporal::Worker(args)),
        Command::Submit(args) => temporal::run(temporal::Temporal::Submit(args)),
        Command::Runs(args) => temporal::run(temporal::Temporal::Runs(args)),
        Command::Decide(args) => temporal::run(temporal::Temporal::Decide(args)),
        Command::Cancel(args) => temporal::run(temporal::Temporal::Cancel(args)),
        Command::Trust(args) => trust(args),
    }
}

fn trust(args: TrustArgs) -> ExitCode {
    let enclosing = match &args.vault_root {
        Some(root) => input::Enclosing::Given(root),
        None => input::Enclosing::Detect,
    };
    let told = (|| -> anyhow::Result<String> {
        let (_, vault) = mcp_config::default_config(&input::vault_home(&args.path, enclosing))?;
        // The run's journal: in the plan's folder, or a plan file's run vault.
        let run_dir = match args.path.is_file() {
            true => run::run_vault_dir(&args.path)?,
            false => args.path.clone(),
        };
        let told = trust::trust(&vault, args.forget)?;
        let journal = match args.forget {
            true => trust::forget_journal(&run_dir)?,
            false => trust::take_journal(&run_dir)?,
        };
        Ok(match journal {
            Some(taken) => format!("{told}\n{taken}"),
            None => told,
        })
    })();
    match told {
        Ok(told) => {
            outln!("{told}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!(
                "error: {}",
                planvault_core::terminal::escape_controls(&format!("{err:#}"), true)
            );
            ExitCode::from(2)
        }
    }
}

/// A child (an MCP server, a `@tool` command, the guard's verifier) starts
/// from an environment without the API key, but on Linux a process of the
/// same user can read this one's from `/proc/<pid>/environ`. A process that
/// is not dumpable keeps that file, its memory and ptrace to root; its
/// children are dumpable again once they exec. It also writes no core dump.
fn keep_environment_private() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{set_dumpable_behavior, DumpableBehavior};
        let _ = set_dumpable_behavior(DumpableBehavior::NotDumpable);
    }
}

/// Read and check a plan; `Err` is exit code 2 with the reason printed.
fn load(plan: &PlanArgs, quiet: bool) -> Result<planvault_core::Checked, ExitCode> {
    let enclosing = match &plan.vault_root {
        Some(root) => input::Enclosing::Given(root),
        None => input::Enclosing::Detect,
    };
    match read_plan(&plan.path, plan.format, enclosing) {
        Ok(input::ReadPlan {
            mut source,
            problems,
            unread,
            plan_folder,
            vault_root,
        }) => {
            if let planvault_core::PlanSource::Generated { options, .. } = &mut source {
                if !plan.allow_tool.is_empty() {
                    options.allowed_tools = Some(plan.allow_tool.clone());
                }
            }
            let mut checked = match (&source, plan_folder) {
                (planvault_core::PlanSource::Vault(files), folder) => {
                    planvault_core::vault::check_in_folder_read(
                        files,
                        folder.as_deref().unwrap_or(""),
                        &unread,
                    )
                }
                _ => planvault_core::check(&source),
            };
            // Proposal mode, asked by the plan or by `[run] proposal` in the
            // vault's config: nothing may mutate before the approval gate.
            let asked = planvault_core::proposal::requested(&source, &checked.plan);
            // The vault's config: a plan folder's run reads its vault's.
            let by_config = mcp_config::default_config(vault_root.as_deref().unwrap_or(&plan.path))
                .and_then(|(_, vault)| run::VaultConfig::read(&vault))
                .ok()
                .and_then(|config| config.text)
                .and_then(|text| planvault_runner::settings::parse(&text).ok())
                .is_some_and(|s| s.proposal);
            if asked.is_some() || by_config {
                checked.diagnostics.extend(planvault_core::proposal::check(
                    &checked.plan,
                    asked.as_ref(),
                ));
            }
            if let planvault_core::PlanSource::Vault(files) = &source {
                use planvault_core::vault::silverbullet;
                if plan.silverbullet || silverbullet::is_space(files) {
                    let read_otherwise = silverbullet::check(files, &checked.plan);
                    checked.diagnostics.extend(read_otherwise);
                }
            }
            // What could not be read comes first: it may explain the rest.
            if !problems.is_empty() {
                checked.diagnostics.splice(0..0, problems);
            }
            // Editors count columns in UTF-16 units: the JSON gives both.
            source.fill_utf16_columns(&mut checked.diagnostics);
            Ok(checked)
        }
        Err(err) => {
            if !quiet {
                // The reason may quote a path from the plan's folder.
                let reason = err.to_string();
                eprintln!(
                    "error: {}",
                    planvault_core::terminal::escape_controls(&reason, false)
                );
            }
            Err(ExitCode::from(2))
        }
    }
}

fn exit_code(checked: &planvault_core::Checked, strict: bool) -> ExitCode {
    if checked.has_errors() || (strict && !checked.diagnostics.is_empty()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The configured MCP servers' tools, listed by starting each.
fn check_tools(args: &ValidateArgs) -> anyhow::Result<planvault_llm::mcp::Catalog> {
    // A plan folder's tools are its vault's, as a run of it gets them.
    let enclosing = match &args.plan.vault_root {
        Some(root) => input::Enclosing::Given(root),
        None => input::Enclosing::Detect,
    };
    let home = input::vault_home(&args.plan.path, enclosing);
    let (_, vault) = mcp_config::default_config(&home)?;
    let keys = ["PLANVAULT_API_KEY", "OPENAI_API_KEY"];
    let servers = match &args.config {
        Some(config) => mcp_config::read(config, &vault, &keys)?,
        None => {
            let config = run::VaultConfig::read(&vault)?;
            trust::require(
                &config,
                trust::Source::Path(&args.plan.path),
                args.trust_config,
            )?;
            config.servers(&keys)?
        }
    };
    if servers.is_empty() {
        return Ok(planvault_llm::mcp::Catalog::default());
    }
    mcp_config::clients(servers)?
        .list()
        .map_err(|e| anyhow::anyhow!("{e}"))
}

fn graph(args: GraphArgs) -> ExitCode {
    let checked = match load(&args.plan, args.quiet) {
        Ok(checked) => checked,
        Err(code) => return code,
    };
    if !args.quiet {
        let out = &args.output;
        let format = if out.json {
            GraphFormat::Json
        } else if out.mermaid {
            GraphFormat::Mermaid
        } else if out.canvas {
            GraphFormat::Canvas
        } else {
            GraphFormat::Ascii
        };
        let mut drawing = export::export(&checked.plan, format);
        if format == GraphFormat::Json {
            drawing = with_diagnostics(&drawing, &checked.diagnostics);
        }
        out!("{drawing}");
        if !drawing.ends_with('\n') {
            outln!();
        }
        for d in &checked.diagnostics {
            eprintln!("{}", d.render_human());
        }
    }
    exit_code(&checked, args.plan.strict)
}

/// The graph's JSON object with a last key, `diagnostics`: the same list
/// `validate --json` prints.
fn with_diagnostics(json: &str, diagnostics: &[planvault_core::Diagnostic]) -> String {
    let Some(head) = json.trim_end().strip_suffix('}') else {
        return json.to_string();
    };
    let list = serde_json::to_string_pretty(diagnostics)
        .expect("diagnostics serialize")
        .replace('\n', "\n  ");
    format!("{},\n  \"diagnostics\": {list}\n}}\n", head.trim_end())
}

fn validate(args: ValidateArgs) -> ExitCode {
    let mut checked = match load(&args.plan, args.quiet) {
        Ok(checked) => checked,
        Err(code) => return code,
    };
    // A run cut off during a writing tool's call may have left the config
    // as the tool wrote it: its servers are not started until `planvault
    // run` has put back what the call changed.
    if args.check_tools && planvault_runner::native::cut_off_call(&args.plan.path).is_some() {
        eprintln!(
            "error: the last run of {} was cut off during a tool's call that may write; `planvault run` it first, which puts back what the call changed, before --check-tools starts the servers its config names",
            args.plan.path.display()
        );
        return ExitCode::from(2);
    }
    if args.check_tools {
        match check_tools(&args) {
            Ok(catalog) => {
                // A note's text, to point at its `tools:` entry.
                let root = if args.plan.path.is_dir() {
                    args.plan.path.clone()
                } else {
                    args.plan
                        .path
                        .parent()
                        .map(PathBuf::from)
                        .unwrap_or_default()
                };
                let text = |file: &str| input::regular_file_text(&root.join(file));
                checked.diagnostics.extend(planvault_llm::mcp::check(
                    &checked.plan,
                    &catalog,
                    &text,
                ));
            }
            Err(err) => {
                eprintln!(
                    "error: {}",
                    planvault_core::terminal::escape_controls(&format!("{err:#}"), true)
                );
                return ExitCode::from(2);
            }
        }
    }
    if !args.quiet {
        if args.json {
            outln!("{}", diagnostic::to_json(&checked.diagnostics));
        } else {
            for d in &checked.diagnostics {
                outln!("{}", d.render_human());
            }
        }
    }
    exit_code(&checked, args.plan.strict)
}
