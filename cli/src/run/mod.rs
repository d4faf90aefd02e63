//! `planvault run`: the native runner. It does every bit of I/O the engine
//! asks for (notes, trace, journal, model calls, commands) and nothing else;
//! every decision is the engine's.

mod config;
mod llm;
mod store;
mod tools;

use crate::input::{read_plan, FormatArg};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use config::Endpoints;
use llm::{Client, LlmError};
use planvault_core::engine::trace::resume_marker;
use planvault_core::engine::{
    Answer, Autonomy, Effect, Engine, Event, Finish, FinishReason, Journal, Message, Request, RequestBody, Role, RunConfig,
};
use planvault_core::{NodeExt, Plan, PlanSource, Status};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use store::RunVault;

/// Rounds of tool calls one node's work may take before it must answer.
const MAX_TOOL_ROUNDS: usize = 8;

#[derive(Args)]
pub struct RunArgs {
    /// A vault folder.
    path: PathBuf,
    /// What the run is for; handed to every node.
    #[arg(long)]
    query: String,
    /// OpenAI-compatible API base, e.g. http://127.0.0.1:11434/v1 (calls BASE_URL/chat/completions).
    #[arg(long, value_name = "BASE_URL")]
    endpoint: Option<String>,
    /// The model name sent to the default endpoint.
    #[arg(long)]
    model: Option<String>,
    /// Route a role's calls elsewhere: ROLE=URL,MODEL (repeatable).
    #[arg(long = "role", value_name = "ROLE=URL,MODEL")]
    roles: Vec<String>,
    /// The global step budget.
    #[arg(long, default_value_t = 100)]
    max_steps: u32,
    /// Who decides `@human` nodes.
    #[arg(long, value_enum, default_value = "full")]
    autonomy: AutonomyArg,
    /// Start over: every note back to pending, the previous trace removed.
    #[arg(long)]
    fresh: bool,
    /// Re-run from a recorded journal without calling any model.
    #[arg(long, value_name = "JOURNAL")]
    replay: Option<PathBuf>,
    /// Read PATH in this format instead of detecting it.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum AutonomyArg {
    Ask,
    Full,
}

pub fn run(args: RunArgs) -> ExitCode {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    // First Ctrl-C: finish the current write and stop resumably. Second: leave now
    // (every note write is atomic, so the vault is still resumable).
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!("\nstopping… (Ctrl-C again to quit at once)");
    });
    match Runner::prepare(args, stop).and_then(|runner| runner.run()) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

struct Runner {
    args: RunArgs,
    vault: RunVault,
    plan: Plan,
    endpoints: Endpoints,
    client: Client,
    stop: Arc<AtomicBool>,
    progress: Progress,
}

impl Runner {
    fn prepare(args: RunArgs, stop: Arc<AtomicBool>) -> Result<Runner> {
        let source = read_plan(&args.path, args.format).map_err(|e| anyhow::anyhow!("{e}"))?;
        let PlanSource::Vault(files) = source else {
            bail!("planvault run takes a vault folder; {} is not one", args.path.display());
        };
        let checked = planvault_core::check(&PlanSource::Vault(files.clone()));
        if checked.has_errors() {
            for d in &checked.diagnostics {
                eprintln!("{}", d.render_human());
            }
            bail!("the plan is unsound; nothing ran");
        }
        let endpoints = config::resolve(&args.path, args.endpoint.as_deref(), args.model.as_deref(), &args.roles)?;
        let client = Client::new(endpoints.http.clone(), stop.clone());
        let vault = RunVault::new(&args.path, files);
        Ok(Runner { progress: Progress::new(), args, vault, plan: checked.plan, endpoints, client, stop })
    }

    fn note_files(&self) -> Vec<String> {
        self.plan.nodes.iter().filter_map(note_file).collect()
    }

    fn run(mut self) -> Result<ExitCode> {
        let replay = match &self.args.replay {
            Some(path) => Some(RunVault::read_journal(path).with_context(|| format!("cannot replay {}", path.display()))?),
            None => None,
        };
        let resuming = !self.args.fresh && replay.is_none() && self.plan.nodes.iter().any(|n| n.status != Status::Pending);
        if self.args.fresh || replay.is_some() {
            let files = self.note_files();
            self.vault.reset(&files)?;
            for node in &mut self.plan.nodes {
                node.status = Status::Pending;
            }
        }
        let journal = match &replay {
            Some(j) => j.clone(),
            None if resuming => RunVault::read_journal(&self.vault.journal_path())?,
            None => Journal::new(),
        };
        if replay.is_none() {
            self.check_endpoints()?;
        }
        let config = RunConfig {
            query: self.args.query.clone(),
            max_steps: self.args.max_steps,
            autonomy: match self.args.autonomy {
                AutonomyArg::Ask => Autonomy::Ask,
                AutonomyArg::Full => Autonomy::Full,
            },
            replay_only: replay.is_some(),
            ..RunConfig::default()
        };
        let ids: Vec<String> = self.plan.nodes.iter().map(|n| n.id.clone()).collect();
        let prior = if resuming { self.vault.prior_outputs(&ids) } else { Vec::new() };
        if resuming {
            let done = self.plan.nodes.iter().filter(|n| n.status == Status::Done).count();
            let active: Vec<&str> = self.plan.nodes.iter().filter(|n| n.status == Status::Active).map(|n| n.id.as_str()).collect();
            let at = if active.is_empty() { String::new() } else { format!(", continuing at {}", active.join(", ")) };
            self.progress.line(&format!(
                "resuming: {done} node(s) done, {} answer(s) recorded{at}",
                journal.entries.len()
            ));
            if self.vault.has_trace() {
                self.vault.append_trace(&self.args.query, &resume_marker("resumed by a new run"))?;
            }
        }
        let mut engine = Engine::new(self.plan.clone(), config, &journal)?;
        for (node, text) in prior {
            engine.set_prior_output(&node, text);
        }
        let mut queue: VecDeque<Effect> = engine.start().into();
        while let Some(effect) = queue.pop_front() {
            match effect {
                Effect::WriteStatus { node, status } => {
                    let file = self.plan.node_index(&node).and_then(|i| note_file(&self.plan.nodes[i])).context("node without a note")?;
                    if let Err(err) = self.vault.write_status(&file, status) {
                        self.progress.line(&format!("■ stopped: {err}"));
                        return Ok(ExitCode::from(5));
                    }
                }
                Effect::Record(entry) => self.vault.append_journal(&entry)?,
                Effect::Trace(entry) => {
                    self.vault.append_trace(&self.args.query, &entry.to_markdown())?;
                    self.progress.hop(&entry);
                }
                Effect::Output { node, title, visit, text } => self.vault.write_output(&node, &title, visit, &text)?,
                Effect::Amend { text } => self.progress.line(&format!("amendment proposed (not applied to a vault): {text}")),
                Effect::Request(request) => {
                    let event = self.serve(&request);
                    queue.extend(engine.handle(event));
                }
                Effect::Finish(finish) => return Ok(self.finish(&finish)),
            }
        }
        bail!("the engine stopped without finishing")
    }

    fn check_endpoints(&self) -> Result<()> {
        if self.endpoints.default.is_some() {
            return Ok(());
        }
        let missing: Vec<String> = self
            .plan
            .nodes
            .iter()
            .filter(|n| self.endpoints.for_role(n.role.as_deref()).is_none())
            .map(|n| n.id.clone())
            .collect();
        if !missing.is_empty() {
            bail!(
                "no model endpoint for {}: pass --endpoint BASE_URL --model NAME or configure .planvault/config.toml",
                missing.join(", ")
            );
        }
        Ok(())
    }

    fn finish(&mut self, finish: &Finish) -> ExitCode {
        self.progress.line(&format!("■ {}", finish.reason.describe()));
        if let Some(answer) = &finish.answer {
            println!("{answer}");
        }
        ExitCode::from(match &finish.reason {
            FinishReason::Completed => 0,
            FinishReason::NodeFailed { .. } | FinishReason::PlanFailed { .. } | FinishReason::ReplayDiverged { .. } => 1,
            FinishReason::VisitBudget { .. } | FinishReason::StepBudget { .. } => 3,
            FinishReason::AwaitingHuman { .. } => 4,
            FinishReason::Stopped { .. } if self.stop.load(Ordering::SeqCst) => 130,
            FinishReason::Interrupted { .. } | FinishReason::Stopped { .. } => 5,
        })
    }

    /// Answer one request by doing its I/O.
    fn serve(&mut self, request: &Request) -> Event {
        let id = request.id.clone();
        if self.stop.load(Ordering::SeqCst) {
            return Event::Stop { reason: "interrupted by Ctrl-C".into() };
        }
        let result = match &request.body {
            RequestBody::Work { messages, tools, role, review_only } => {
                self.progress.line(&format!("→ {} · visit {}", request.node, request.visit));
                self.work(role.as_deref(), messages, tools, *review_only).map(|output| Answer::Work { output })
            }
            RequestBody::Judge { messages, labels, role, attempt } => {
                let again = if *attempt > 1 { format!(" (attempt {attempt})") } else { String::new() };
                self.progress.line(&format!("  judging {} condition(s){again}", labels.len()));
                self.chat(role.as_deref(), &to_json(messages), &[]).map(|c| Answer::Judgment { raw: c.content })
            }
            RequestBody::Replan { messages, role } => {
                self.chat(role.as_deref(), &to_json(messages), &[]).map(|c| Answer::Revision { text: c.content })
            }
            RequestBody::Command { command } => return run_command(&id, command),
            RequestBody::Human { question } => {
                return Event::Refused { id, reason: format!("a person must decide ({question}); the terminal runner does not ask") }
            }
            RequestBody::Invoke { capability, .. } => {
                return Event::Refused { id, reason: format!("the terminal runner cannot invoke {capability}") }
            }
        };
        match result {
            Ok(answer) => Event::Answered { id, answer },
            Err(LlmError::Interrupted) => Event::Stop { reason: "interrupted by Ctrl-C".into() },
            Err(err) => {
                let hint = err.hint().map(|h| format!(" ({h})")).unwrap_or_default();
                Event::Unavailable { id, error: format!("{err}{hint}") }
            }
        }
    }

    fn work(&mut self, role: Option<&str>, messages: &[Message], declared: &[String], review_only: bool) -> Result<String, LlmError> {
        let (offered, missing) = tools::offer(declared, review_only);
        if !missing.is_empty() {
            self.progress.line(&format!("  (not available in the terminal runner: {})", missing.join(", ")));
        }
        let schemas: Vec<Value> = offered.iter().map(|t| tools::schema(t)).collect();
        let mut conversation = to_json(messages);
        let notes = self.note_files();
        for _ in 0..MAX_TOOL_ROUNDS {
            let completion = self.chat(role, &conversation, &schemas)?;
            if completion.tool_calls.is_empty() {
                return Ok(completion.content);
            }
            let calls: Vec<Value> = completion
                .tool_calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
                .collect();
            conversation.push(json!({"role": "assistant", "content": completion.content, "tool_calls": calls}));
            for call in &completion.tool_calls {
                let result = if offered.contains(&call.name) {
                    self.progress.line(&format!("  tool {}", call.name));
                    tools::call(self.vault.root(), &notes, &call.name, &call.arguments)
                } else {
                    format!("error: tool {} is not offered at this step", call.name)
                };
                conversation.push(json!({"role": "tool", "tool_call_id": call.id, "content": result}));
            }
        }
        Err(LlmError::Malformed { url: "the model".into(), reason: format!("still calling tools after {MAX_TOOL_ROUNDS} rounds") })
    }

    fn chat(&mut self, role: Option<&str>, messages: &[Value], tools: &[Value]) -> Result<llm::Completion, LlmError> {
        let endpoint = self.endpoints.for_role(role).cloned().ok_or_else(|| LlmError::Connect {
            url: "(none)".into(),
            reason: format!("no endpoint configured for role {}", role.unwrap_or("default")),
        })?;
        let progress = std::cell::RefCell::new(&mut self.progress);
        let mut received = 0usize;
        let result = self.client.chat(
            &endpoint,
            messages,
            tools,
            &mut |delta| {
                received += delta.chars().count();
                progress.borrow_mut().receiving(received);
            },
            &mut |err, wait| progress.borrow_mut().line(&format!("  ! {err}; retrying in {:.1}s", wait.as_secs_f32())),
        );
        self.progress.end_receiving();
        result
    }
}

/// The note a vault node lives in.
fn note_file(node: &planvault_core::Node) -> Option<String> {
    match &node.ext {
        NodeExt::Vault(v) => Some(v.file.clone()),
        _ => None,
    }
}

fn to_json(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": m.content})
        })
        .collect()
}

/// Run a `@tool` command through the shell, killed after 30 minutes (exit 124).
fn run_command(id: &str, command: &str) -> Event {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let child = Command::new("sh").arg("-c").arg(command).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Event::Answered { id: id.into(), answer: Answer::Command { exit: 127, output: e.to_string() } },
    };
    let deadline = Instant::now() + Duration::from_secs(30 * 60);
    let exit = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code().unwrap_or(128),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break 124;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break 128,
        }
    };
    let mut output = String::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = std::io::Read::read_to_string(&mut out, &mut output);
    }
    if let Some(mut err) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut err, &mut output);
    }
    let output: String = output.chars().take(4000).collect();
    Event::Answered { id: id.into(), answer: Answer::Command { exit, output } }
}

/// Progress on stderr: one line per event, and a live character count while
/// a reply streams in (on a terminal only).
struct Progress {
    live: bool,
    receiving: bool,
}

impl Progress {
    fn new() -> Self {
        Progress { live: std::io::stderr().is_terminal(), receiving: false }
    }

    fn line(&mut self, text: &str) {
        self.end_receiving();
        eprintln!("{text}");
    }

    fn hop(&mut self, entry: &planvault_core::engine::TraceEntry) {
        self.line(&format!("  ↳ {} (decided by {})", entry.what, entry.decided_by.as_str()));
    }

    fn receiving(&mut self, chars: usize) {
        if self.live {
            self.receiving = true;
            eprint!("\r  … {chars} characters");
            let _ = std::io::stderr().flush();
        }
    }

    fn end_receiving(&mut self) {
        if self.receiving {
            eprintln!();
            self.receiving = false;
        }
    }
}
