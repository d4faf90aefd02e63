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
    Answer, Autonomy, Effect, Engine, Event, Finish, FinishReason, Journal, Message, Request,
    RequestBody, RunConfig,
};
use planvault_core::{NodeExt, Plan, PlanSource, Status};
use planvault_llm::{
    assistant_turn, messages_json as to_json, tool_turn, Surface, MAX_TOOL_ROUNDS,
};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use store::RunVault;

#[derive(Args)]
pub struct RunArgs {
    /// A vault folder, a PLAN.md or a generated `.json` plan (the last two run
    /// in a run vault beside them, `<name>.run/`, so they can resume).
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
    /// Answer a `@human` item or `type: human` note that paused the run:
    /// ITEM=approve|reject|LABEL[:NOTE] (repeatable).
    #[arg(long = "decide", value_name = "ITEM=approve|reject|LABEL[:NOTE]")]
    decide: Vec<String>,
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
    /// A PLAN.md run: the file and its text as last read or written, so
    /// accepted amendments are appended to it (never over an unseen edit).
    plan_md: Option<(PathBuf, String)>,
    endpoints: Endpoints,
    client: Client,
    stop: Arc<AtomicBool>,
    progress: Progress,
}

impl Runner {
    fn prepare(args: RunArgs, stop: Arc<AtomicBool>) -> Result<Runner> {
        let read = read_plan(&args.path, args.format, crate::input::Enclosing::Itself)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let source = read.source;
        let mut checked = planvault_core::check(&source);
        checked.diagnostics.splice(0..0, read.problems);
        if checked.has_errors() {
            for d in &checked.diagnostics {
                eprintln!("{}", d.render_human());
            }
            bail!("the plan is unsound; nothing ran");
        }
        let mut plan = checked.plan;
        let (root, files, plan_md) = match source {
            PlanSource::Vault(files) => (args.path.clone(), files, None),
            PlanSource::PlanMd { text, .. } => {
                let root = run_vault_dir(&args.path);
                let files = materialize(&root, &mut plan, args.fresh || args.replay.is_some())?;
                (root, files, Some((args.path.clone(), text)))
            }
            PlanSource::Generated { .. } => {
                let root = run_vault_dir(&args.path);
                let files = materialize(&root, &mut plan, args.fresh || args.replay.is_some())?;
                (root, files, None)
            }
        };
        let config_root = if plan.format == planvault_core::PlanFormat::Vault {
            args.path.clone()
        } else {
            root.clone()
        };
        let endpoints = config::resolve(
            &config_root,
            args.endpoint.as_deref(),
            args.model.as_deref(),
            &args.roles,
        )?;
        let client = Client::new(endpoints.http.clone(), stop.clone());
        let vault = RunVault::new(&root, files);
        Ok(Runner {
            progress: Progress::new(),
            args,
            vault,
            plan,
            plan_md,
            endpoints,
            client,
            stop,
        })
    }

    fn note_files(&self) -> Vec<String> {
        self.plan.nodes.iter().filter_map(note_file).collect()
    }

    fn run(mut self) -> Result<ExitCode> {
        let replay = match &self.args.replay {
            Some(path) => Some(
                RunVault::read_journal(path)
                    .with_context(|| format!("cannot replay {}", path.display()))?,
            ),
            None => None,
        };
        let resuming = !self.args.fresh
            && replay.is_none()
            && self.plan.nodes.iter().any(|n| n.status != Status::Pending);
        if self.args.fresh || replay.is_some() {
            // A vault starts over from pending; a PLAN.md's notes were just
            // rewritten from the file, where `[x]` items stay done.
            let files = if self.plan.format == planvault_core::PlanFormat::Vault {
                self.note_files()
            } else {
                Vec::new()
            };
            self.vault.reset(&files)?;
            if self.plan.format == planvault_core::PlanFormat::Vault {
                for node in &mut self.plan.nodes {
                    node.status = Status::Pending;
                }
            }
        }
        let mut journal = match &replay {
            Some(j) => j.clone(),
            None if resuming => RunVault::read_journal(&self.vault.journal_path())?,
            None => Journal::new(),
        };
        if let Some(replayed) = &replay {
            // The vault keeps the journal of the run it now holds.
            for entry in &replayed.entries {
                self.vault.append_journal(entry)?;
            }
        }
        for decision in &self.args.decide {
            let entry = parse_decision(decision)?;
            self.vault.append_journal(&entry)?;
            journal.entries.push(entry);
        }
        if replay.is_none() && self.plan.format == planvault_core::PlanFormat::Vault {
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
        let prior = if resuming {
            self.vault.prior_outputs(&ids)
        } else {
            Vec::new()
        };
        if resuming {
            let done = self
                .plan
                .nodes
                .iter()
                .filter(|n| n.status == Status::Done)
                .count();
            let active: Vec<&str> = self
                .plan
                .nodes
                .iter()
                .filter(|n| n.status == Status::Active)
                .map(|n| n.id.as_str())
                .collect();
            let at = if active.is_empty() {
                String::new()
            } else {
                format!(", continuing at {}", active.join(", "))
            };
            self.progress.line(&format!(
                "resuming: {done} node(s) done, {} answer(s) recorded{at}",
                journal.entries.len()
            ));
            if self.vault.has_trace() {
                self.vault
                    .append_trace(&self.args.query, &resume_marker("resumed by a new run"))?;
            }
        }
        let mut engine = Engine::new(self.plan.clone(), config, &journal)?;
        for (node, text) in prior {
            engine.set_prior_output(&node, text);
        }
        if let Some((_, text)) = &self.plan_md {
            engine.set_plan_text(text.clone());
        }
        let mut queue: VecDeque<Effect> = engine.start().into();
        while let Some(effect) = queue.pop_front() {
            match effect {
                Effect::WriteStatus { node, status } => {
                    let file = self
                        .plan
                        .node_index(&node)
                        .and_then(|i| note_file(&self.plan.nodes[i]))
                        .context("node without a note")?;
                    if let Err(err) = self.vault.write_status(&file, status) {
                        self.progress.line(&format!("■ stopped: {err}"));
                        return Ok(ExitCode::from(5));
                    }
                }
                Effect::Record(entry) => self.vault.append_journal(&entry)?,
                Effect::Trace(entry) => {
                    self.vault
                        .append_trace(&self.args.query, &entry.to_markdown())?;
                    self.progress.hop(&entry);
                }
                Effect::Output {
                    node,
                    title,
                    visit,
                    text,
                } => self.vault.write_output(&node, &title, visit, &text)?,
                Effect::Amend { text } => {
                    if let Err(err) = self.amend(&text, engine.plan()) {
                        self.progress.line(&format!("■ stopped: {err:#}"));
                        return Ok(ExitCode::from(5));
                    }
                }
                Effect::Request(request) => {
                    let event = self.serve(&request);
                    queue.extend(engine.handle(event));
                }
                Effect::Finish(finish) => return Ok(self.finish(&finish)),
            }
        }
        bail!("the engine stopped without finishing")
    }

    /// Append accepted items to the PLAN.md (refusing to overwrite an edit
    /// made since the run read it) and give each new item its note.
    fn amend(&mut self, text: &str, plan: &Plan) -> Result<()> {
        let Some((path, seen)) = &mut self.plan_md else {
            return Ok(());
        };
        let current = std::fs::read_to_string(&*path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if current != *seen {
            bail!(
                "{} changed on disk since the run read it; the amendment was not written",
                path.display()
            );
        }
        std::fs::write(&*path, text).with_context(|| format!("cannot write {}", path.display()))?;
        *seen = text.to_string();
        for i in 0..plan.nodes.len() {
            let file = format!("{}.md", plan.nodes[i].id);
            self.vault
                .ensure_note(&file, &planvault_core::vault::render_note(plan, i))?;
        }
        self.progress.line(&format!("  amended {}", path.display()));
        Ok(())
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
        self.progress
            .line(&format!("■ {}", finish.reason.describe()));
        // The answer of a finished (or safety-stopped) run; a paused or
        // interrupted run has none yet.
        let answers = matches!(
            finish.reason,
            FinishReason::Completed
                | FinishReason::VisitBudget { .. }
                | FinishReason::StepBudget { .. }
        );
        if let (true, Some(answer)) = (answers, &finish.answer) {
            println!("{answer}");
        }
        ExitCode::from(match &finish.reason {
            FinishReason::Completed => 0,
            FinishReason::NodeFailed { .. }
            | FinishReason::PlanFailed { .. }
            | FinishReason::ReplayDiverged { .. } => 1,
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
            return Event::Stop {
                reason: "interrupted by Ctrl-C".into(),
            };
        }
        let result = match &request.body {
            RequestBody::Work {
                messages,
                tools,
                role,
                review_only,
            } => {
                self.progress
                    .line(&format!("→ {} · visit {}", request.node, request.visit));
                self.work(role.as_deref(), messages, tools, *review_only)
                    .map(|output| Answer::Work { output })
            }
            RequestBody::Judge {
                messages,
                labels,
                role,
                attempt,
            } => {
                let again = if *attempt > 1 {
                    format!(" (attempt {attempt})")
                } else {
                    String::new()
                };
                self.progress
                    .line(&format!("  judging {} condition(s){again}", labels.len()));
                self.chat(role.as_deref(), &to_json(messages), &[])
                    .map(|c| Answer::Judgment { raw: c.content })
            }
            RequestBody::Replan { messages, role } => self
                .chat(role.as_deref(), &to_json(messages), &[])
                .map(|c| Answer::Revision { text: c.content }),
            RequestBody::Command { command } => {
                self.progress
                    .line(&format!("→ item {} · $ {command}", request.node));
                let dir = self
                    .plan_md
                    .as_ref()
                    .and_then(|(p, _)| p.parent().map(PathBuf::from));
                return run_command(&id, command, dir.as_deref());
            }
            RequestBody::Human { question, choices } => {
                let verdicts = if choices.is_empty() {
                    "approve|reject".to_string()
                } else {
                    choices.join("|")
                };
                self.progress.line(&format!(
                    "? {question}\n  answer with: planvault run {} --query … --decide {}={verdicts}[:note]",
                    self.args.path.display(),
                    request.node
                ));
                return Event::Deferred { id };
            }
            RequestBody::Invoke { capability, args } => {
                self.progress
                    .line(&format!("→ {} · {capability}", request.node));
                return self.invoke(&id, capability, args);
            }
        };
        match result {
            Ok(answer) => Event::Answered { id, answer },
            Err(LlmError::Interrupted) => Event::Stop {
                reason: "interrupted by Ctrl-C".into(),
            },
            Err(err) => {
                let hint = err
                    .hint(Surface::Cli)
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                Event::Unavailable {
                    id,
                    error: format!("{err}{hint}"),
                }
            }
        }
    }

    /// A generated step: a native tool, or `llm` (a model call on `prompt`).
    fn invoke(&mut self, id: &str, capability: &str, args: &Value) -> Event {
        let id = id.to_string();
        if capability == "llm" {
            let prompt = args["prompt"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| args.to_string());
            let messages = vec![json!({"role": "user", "content": prompt})];
            return match self.chat(None, &messages, &[]) {
                Ok(c) => Event::Answered {
                    id,
                    answer: Answer::Invoke {
                        value: Some(Value::String(c.content)),
                        error: None,
                    },
                },
                Err(LlmError::Interrupted) => Event::Stop {
                    reason: "interrupted by Ctrl-C".into(),
                },
                Err(err) => Event::Unavailable {
                    id,
                    error: err.to_string(),
                },
            };
        }
        if !tools::NATIVE_TOOLS.contains(&capability) {
            return Event::Refused {
                id,
                reason: format!("the terminal runner has no tool {capability}"),
            };
        }
        let result = tools::call(
            self.vault.root(),
            &self.note_files(),
            capability,
            &args.to_string(),
        );
        let answer = match result.strip_prefix("error: ") {
            Some(error) => Answer::Invoke {
                value: None,
                error: Some(error.to_string()),
            },
            None => Answer::Invoke {
                value: Some(Value::String(result)),
                error: None,
            },
        };
        Event::Answered { id, answer }
    }

    fn work(
        &mut self,
        role: Option<&str>,
        messages: &[Message],
        declared: &[String],
        review_only: bool,
    ) -> Result<String, LlmError> {
        let (offered, missing) = tools::offer(declared, review_only);
        if !missing.is_empty() {
            self.progress.line(&format!(
                "  (not available in the terminal runner: {})",
                missing.join(", ")
            ));
        }
        let schemas: Vec<Value> = offered.iter().map(|t| tools::schema(t)).collect();
        let mut conversation = to_json(messages);
        let notes = self.note_files();
        for _ in 0..MAX_TOOL_ROUNDS {
            let completion = self.chat(role, &conversation, &schemas)?;
            if completion.tool_calls.is_empty() {
                return Ok(completion.content);
            }
            conversation.push(assistant_turn(&completion));
            for call in &completion.tool_calls {
                let result = if offered.contains(&call.name) {
                    self.progress.line(&format!("  tool {}", call.name));
                    tools::call(self.vault.root(), &notes, &call.name, &call.arguments)
                } else {
                    format!("error: tool {} is not offered at this step", call.name)
                };
                conversation.push(tool_turn(&call.id, &result));
            }
        }
        Err(LlmError::Malformed {
            url: "the model".into(),
            reason: format!("still calling tools after {MAX_TOOL_ROUNDS} rounds"),
        })
    }

    fn chat(
        &mut self,
        role: Option<&str>,
        messages: &[Value],
        tools: &[Value],
    ) -> Result<llm::Completion, LlmError> {
        let endpoint =
            self.endpoints
                .for_role(role)
                .cloned()
                .ok_or_else(|| LlmError::NoEndpoint {
                    role: role.unwrap_or("default").to_string(),
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
            &mut |err, wait| {
                progress.borrow_mut().line(&format!(
                    "  ! {err}; retrying in {:.1}s",
                    wait.as_secs_f32()
                ))
            },
        );
        self.progress.end_receiving();
        result
    }
}

/// The note a node lives in: a vault note, or `<id>.md` in the run vault of
/// an in-memory plan (the name `vault::save_plan` gives it).
fn note_file(node: &planvault_core::Node) -> Option<String> {
    match &node.ext {
        NodeExt::Vault(v) if !v.file.is_empty() => Some(v.file.clone()),
        _ => Some(format!("{}.md", node.id)),
    }
}

/// `PLAN.md` → `PLAN.run/` beside it.
fn run_vault_dir(plan_file: &std::path::Path) -> PathBuf {
    let stem = plan_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plan".into());
    plan_file.with_file_name(format!("{stem}.run"))
}

/// Write an in-memory plan into its run vault (`vault::save_plan`) unless it
/// is already there, then read the statuses back: the notes are the
/// checkpoint, and an item marked `[x]` in the plan itself counts as done.
fn materialize(
    root: &std::path::Path,
    plan: &mut Plan,
    fresh: bool,
) -> Result<std::collections::BTreeMap<String, String>> {
    std::fs::create_dir_all(root).with_context(|| format!("cannot create {}", root.display()))?;
    for (file, text) in planvault_core::vault::save_plan(plan) {
        let path = root.join(&file);
        if fresh || !path.exists() {
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    let files = crate::input::read_vault(root).map_err(|e| anyhow::anyhow!("{e}"))?;
    let (saved, _) = planvault_core::vault::load(&files);
    for node in &mut plan.nodes {
        if let Some(note) = saved.nodes.iter().find(|n| n.id == node.id) {
            if node.status != Status::Done {
                node.status = note.status;
            }
        }
    }
    Ok(files)
}

/// `7=approve`, `7=reject:not today`, `gate=ship:looks right` (a condition
/// of a `type: human` note) → the person's recorded answer.
fn parse_decision(spec: &str) -> Result<planvault_core::engine::JournalEntry> {
    let (item, rest) = spec
        .split_once('=')
        .with_context(|| format!("--decide {spec}: expected ITEM=approve|reject|LABEL[:NOTE]"))?;
    let (verdict, note) = rest
        .split_once(':')
        .map_or((rest, None), |(v, n)| (v, Some(n.trim())));
    let (approved, choice) = match verdict.trim() {
        "approve" | "approved" | "yes" => (true, None),
        "reject" | "rejected" | "no" => (false, None),
        "" => bail!("--decide {spec}: say approve, reject or the condition to take"),
        label => (true, Some(label.to_string())),
    };
    let decision = note
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| match &choice {
            Some(label) => label.clone(),
            None if approved => "approved".into(),
            None => "rejected".into(),
        });
    Ok(planvault_core::engine::JournalEntry {
        key: format!("{}#1:human", item.trim()),
        answer: Answer::Human {
            decision,
            approved,
            choice,
        },
    })
}

/// Run a `@tool` command through the shell, killed after 30 minutes (exit 124).
fn run_command(id: &str, command: &str, dir: Option<&std::path::Path>) -> Event {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir.filter(|d| !d.as_os_str().is_empty()) {
        cmd.current_dir(dir);
    }
    let child = cmd.spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Event::Answered {
                id: id.into(),
                answer: Answer::Command {
                    exit: 127,
                    output: e.to_string(),
                },
            }
        }
    };
    // Drain both pipes while the command runs, so a chatty command never
    // blocks on a full pipe.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    );
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
    let mut output = out.join().unwrap_or_default();
    output.push_str(&err.join().unwrap_or_default());
    let output: String = output.chars().take(4000).collect();
    Event::Answered {
        id: id.into(),
        answer: Answer::Command { exit, output },
    }
}

/// Progress on stderr: one line per event, and a live character count while
/// a reply streams in (on a terminal only).
struct Progress {
    live: bool,
    receiving: bool,
}

impl Progress {
    fn new() -> Self {
        Progress {
            live: std::io::stderr().is_terminal(),
            receiving: false,
        }
    }

    fn line(&mut self, text: &str) {
        self.end_receiving();
        eprintln!("{text}");
    }

    fn hop(&mut self, entry: &planvault_core::engine::TraceEntry) {
        self.line(&format!(
            "  ↳ {} (decided by {})",
            entry.what,
            entry.decided_by.as_str()
        ));
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
