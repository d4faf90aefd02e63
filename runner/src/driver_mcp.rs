//! The driver's side of MCP servers as tools: the catalog listed once at
//! run start (a declared tool nothing offers stops the run before any model
//! call), each call journaled under `node#visit/tool.N` (as are the
//! built-in tools that write or fetch; so a resumed visit
//! serves a finished call from the journal instead of repeating it, and a
//! replay, whose work is served whole, makes none), and a person's approval
//! first where the tool asks for one under `autonomy: ask`, journaled under
//! `node#visit/tool.N:approve`. Neither key reads as a visit's answer to the
//! engine (`split_key` needs `#visit:kind`), so they never move its counters.
//!
//! An approval is of one call: before a person is asked, the call (tool and
//! arguments) is journaled as pending under its key; an approval counts
//! only after the latest pending entry of its key and only for a call with
//! those very arguments, so a model asking something else at that place
//! after a resume is asked about again.

use super::{Driver, Humans};
use crate::host::{Host, Progress};
use crate::settings::CONFIG_FILE;
use planvault_core::engine::{journal, Answer, Autonomy, JournalEntry, Request};
use planvault_llm::mcp::{self, Grant, Offer};
use planvault_protocol::{AskKind, ErrorCode, PersonReply, RunError};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Why a tool call ends the run (resumably): it waits for a person's
/// approval, or its journal entry could not be written.
pub(super) struct Halt {
    pub reason: String,
}

impl<H: Host> Driver<'_, H> {
    /// List every configured server's tools and check every node's
    /// declared tools against them, before anything is written or called.
    pub(super) async fn list_mcp_tools(&mut self) -> Result<(), RunError> {
        let Some(listed) = self.host.mcp_list().await else {
            return Ok(());
        };
        let catalog = listed.map_err(|e| {
            RunError::new(ErrorCode::ServerError, self.scrub(&e)).with_hint(
                "check the server's entry under [mcp.servers] in .planvault/config.toml; nothing ran",
            )
        })?;
        let problems = mcp::check(&self.plan, &catalog, &|f| self.seen.get(f).cloned());
        if !problems.is_empty() {
            let lines: Vec<String> = problems.iter().map(|d| d.render_human()).collect();
            return Err(RunError::new(
                ErrorCode::PlanInvalid,
                format!(
                    "a declared tool is not offered; nothing ran:\n{}",
                    lines.join("\n")
                ),
            )
            .with_hint(
                "name a tool as server.tool (or server.*), configure the server that offers it, or remove it from tools:",
            ));
        }
        self.catalog = Some(catalog);
        Ok(())
    }

    /// What a node is offered: its declared tools as the catalog resolves
    /// them (the built-ins only where no server is configured).
    pub(super) fn offers(
        &self,
        declared: &[String],
        review_only: bool,
    ) -> (Vec<Offer>, Vec<String>) {
        let empty = mcp::Catalog::default();
        let catalog = self.catalog.as_ref().unwrap_or(&empty);
        let (offers, missing) = mcp::resolve(declared, catalog, review_only);
        (offers, missing.into_iter().map(|m| m.declared).collect())
    }

    /// A generated step's capability as one server's tool, if it names one.
    pub(super) fn server_grant(&self, capability: &str) -> Option<Grant> {
        let catalog = self.catalog.as_ref()?;
        let (offers, _) = mcp::resolve(&[capability.to_string()], catalog, false);
        match offers.as_slice() {
            [Offer {
                grant: grant @ Grant::Server { .. },
                ..
            }] => Some(grant.clone()),
            _ => None,
        }
    }

    pub(super) fn schemas(&self, offers: &[Offer]) -> Vec<Value> {
        let empty = mcp::Catalog::default();
        let catalog = self.catalog.as_ref().unwrap_or(&empty);
        offers.iter().map(|o| mcp::schema(o, catalog)).collect()
    }

    /// Call one server's tool for the model: served from the journal when
    /// this visit already made the same call, else approved when it must
    /// be, called, and journaled. `Err`: the run stops
    /// resumably (a person's approval is needed, or the journal failed).
    pub(super) async fn mcp_tool(
        &mut self,
        request: &Request,
        grant: &Grant,
        arguments: &str,
    ) -> Result<Result<String, String>, Halt> {
        let Grant::Server { server, tool } = grant else {
            return Ok(Err("not a server's tool".into()));
        };
        let display = grant.display();
        let read_only = self
            .catalog
            .as_ref()
            .and_then(|c| c.tool(server, tool))
            .is_some_and(|t| t.read_only);
        if !read_only {
            if let Some(reason) = self.refusal(&format!("{display} (not marked readOnlyHint)")) {
                return Ok(Err(reason));
            }
        }
        let args = planvault_llm::tools::arguments(arguments);
        if !(args.is_object() || arguments.trim().is_empty()) {
            return Ok(Err(format!(
                "the arguments of {display} are not a JSON object: {arguments}"
            )));
        }
        let args = if args.is_null() { json!({}) } else { args };
        let key = self.next_tool_key(request, "tool");
        if let Some(served) = self.served_call(&key, &display, &args) {
            return Ok(served);
        }
        let recorded = self.recorded.get(&key);
        let pending_here = same_call(recorded, &display, &args) && recorded.is_some_and(is_pending);
        let asks = self
            .catalog
            .as_ref()
            .and_then(|c| c.tool(server, tool))
            .is_some_and(|t| t.ask);
        let mut approval = Value::Null;
        if asks && self.start.autonomy == Autonomy::Ask {
            let approve_key = format!("{key}:approve");
            let shown = self.scrub(&args.to_string());
            let decided = match self.recorded.get(&approve_key) {
                Some(Answer::Human { approved, .. }) if pending_here => Some(*approved),
                _ => None,
            };
            if decided.is_none() {
                // The call a person decides on, journaled before they are asked.
                let pending = JournalEntry {
                    key: key.clone(),
                    answer: Answer::Invoke {
                        value: Some(
                            json!({"tool": display, "arguments": args, "pending": "approval"}),
                        ),
                        error: None,
                    },
                    made_from: None,
                };
                self.record(pending).await?;
            }
            let approved = match decided {
                Some(approved) => approved,
                None if self.options.humans == Humans::Defer => {
                    self.host.progress(&Progress::McpApproval {
                        node: &request.node,
                        tool: &display,
                        arguments: &shown,
                        key: &key,
                    });
                    return Err(Halt {
                        reason: format!(
                            "{display} at {} waits for a person's approval ({key})",
                            request.node
                        ),
                    });
                }
                None => {
                    let ask = AskKind::Human {
                        question: format!("Allow {display} with {shown}?"),
                        choices: Vec::new(),
                    };
                    let reply = self.ask(&approve_key, request, ask, None).await;
                    let approved = match reply {
                        Some(PersonReply::Human { approved, .. }) => approved,
                        Some(_) => false,
                        None => {
                            return Err(Halt {
                                reason: self.options.stop_reason.clone(),
                            })
                        }
                    };
                    let entry = JournalEntry {
                        key: approve_key.clone(),
                        answer: super::human_answer(approved, String::new(), None),
                        made_from: None,
                    };
                    self.record(entry).await?;
                    approved
                }
            };
            if !approved {
                return Ok(Err(format!("a person refused this call to {display}")));
            }
            approval = json!("a person");
        } else if asks {
            approval = json!("autonomy full");
        }
        // The vault's config says which servers start and where requests
        // may go: a tool that writes may not change it (a model told by a
        // page to add a server would run it on the next run).
        // Compared only where both reads are whole: a read that failed
        // (a passing fault) is no sign of a change, and never puts back.
        let mut config_before = match read_only || !self.host.guards_settings() {
            true => None,
            false => self.host.read(CONFIG_FILE).await.ok(),
        };
        // Nor the plan's own notes: the next start or resume would run
        // what it wrote there as a step (instructions and tools of the
        // model's choosing), and the run would take it for a person's edit.
        let mut notes_before = match read_only || !self.host.guards_plan_notes() {
            true => None,
            false => Some(self.plan_notes_now().await),
        };
        // Nor a PLAN.md beside its run vault: the resume reads its items.
        let mut plan_file_before = match notes_before.is_some() {
            true => self.host.plan_file_now().await,
            false => None,
        };
        // Kept where a run killed during the call finds it (the terminal's
        // host): its next start puts back what the call changed.
        if let Some(notes) = &notes_before {
            let mut snapshot = json!({"tool": display, "notes": notes});
            if let Some(config) = &config_before {
                snapshot["config"] = json!(config);
            }
            if let Some(text) = &plan_file_before {
                snapshot["plan_file"] = json!(text);
            }
            let _ = self
                .host
                .keep_call_snapshot(Some(&snapshot.to_string()))
                .await;
        }
        let started = self.host.now_ms();
        let result = self.host.mcp_call(server, tool, &args).await;
        // What the call changed is undone whatever became of it: a call cut
        // off by Stop or by its server's death wrote all the same. (A
        // Temporal run begun before undid the config's change only after.)
        let undo_first = self.host.guards_plan_notes();
        let mut undone = Vec::new();
        if undo_first {
            undone = self
                .undo_tool_changes(
                    &display,
                    config_before.take(),
                    notes_before.take(),
                    plan_file_before.take(),
                )
                .await?;
            // Put back: nothing is left for a next start to.
            let _ = self.host.keep_call_snapshot(None).await;
        }
        // A call cut off by Stop is not the tool's answer: nothing is
        // journaled, and the resumed run makes the call again.
        if result.is_err() && self.inbox.stop_requested() {
            return Err(Halt {
                reason: self.options.stop_reason.clone(),
            });
        }
        // A server that died again after its restart fails the node
        // resumably, with the reason, instead of the model reading errors;
        // the call is not journaled, so the next run makes it again.
        if result.is_err() {
            if let Some(reason) = self.host.mcp_down(server) {
                return Err(Halt {
                    reason: self.scrub(&reason),
                });
            }
        }
        if !undo_first {
            undone = self
                .undo_tool_changes(&display, config_before, notes_before, plan_file_before)
                .await?;
            let _ = self.host.keep_call_snapshot(None).await;
        }
        let mut result = result.map(|t| self.scrub(&t)).map_err(|e| self.scrub(&e));
        for note in undone {
            result = match result {
                Ok(text) => Ok(format!("{text}\n\n[{note}]")),
                Err(e) => Err(format!("{e}\n\n[{note}]")),
            };
        }
        let ms = (self.host.now_ms() - started).max(0.0) as u64;
        self.host.progress(&Progress::McpCall {
            node: &request.node,
            server,
            tool,
            ms,
            error: result.as_ref().err().map(String::as_str),
        });
        let mut value = json!({"tool": display, "arguments": args});
        if !approval.is_null() {
            value["approved_by"] = approval;
        }
        let entry = answered(key, value, &result);
        self.record(entry).await?;
        // A tool that may write may have written into the vault.
        if !read_only {
            self.judge_new_notes(&display)
                .await
                .map_err(|reason| Halt {
                    reason: self.scrub(&reason),
                })?;
        }
        Ok(result)
    }

    /// After a writing tool's call: its change of the vault's config
    /// (`config_before`, as read before it), of the plan's own notes and
    /// of what would make a folder of the plan a vault (`notes_before`),
    /// and of a PLAN.md beside the run's vault (`plan_file_before`) put
    /// back, what it left kept aside, and what the model is told of each;
    /// a host that cannot put back stops the run.
    async fn undo_tool_changes(
        &self,
        display: &str,
        config_before: Option<Option<String>>,
        notes_before: Option<BTreeMap<String, Option<String>>>,
        plan_file_before: Option<String>,
    ) -> Result<Vec<String>, Halt> {
        let mut told = Vec::new();
        if let Some(before) = config_before {
            let after = self.host.read(CONFIG_FILE).await;
            if after.is_ok_and(|after| after != before) {
                let aside = match self.host.put_back(CONFIG_FILE, before.as_deref()).await {
                    Ok(aside) => aside,
                    Err(e) => {
                        return Err(Halt {
                            reason: self.scrub(&format!(
                                "{display} changed {CONFIG_FILE} while it ran, and it could not be put back ({e}): a tool may not change which servers start or where requests go; look at the file before running again"
                            )),
                        })
                    }
                };
                told.push(format!(
                    "planvault undid this call's change to {}: a tool may not change which servers start or where requests go",
                    put_back_told(CONFIG_FILE, aside.as_deref())
                ));
            }
        }
        if let Some(before) = plan_file_before {
            let now = self.host.plan_file_now().await;
            if now.is_some_and(|now| now != before) {
                let aside = self.host.put_back_plan_file(&before).await.map_err(|e| Halt {
                    reason: self.scrub(&format!(
                        "the plan file changed while {display} ran, and it could not be put back ({e}): a tool may not change the plan (the next run would read its items); look at the file before running again"
                    )),
                })?;
                told.push(format!(
                    "planvault undid this call's change to {}: a tool may not change the plan",
                    put_back_told("the plan file", aside.as_deref())
                ));
            }
        }
        let Some(before) = notes_before else {
            return Ok(told);
        };
        let markers = super::vault_markers(self.files.folder());
        let mut made_vault = Vec::new();
        let mut undone = Vec::new();
        let paths: Vec<String> = before.keys().cloned().collect();
        let now = self.host.read_each(&paths).await;
        for ((path, was), now) in before.into_iter().zip(now) {
            match now {
                Ok(now) if now == was => continue,
                // A read that failed (a passing fault) is no sign of a
                // change; one refused (a link out of the vault now) is.
                Err(e) if e.failed => continue,
                _ => {}
            }
            let aside = match self.host.put_back(&path, was.as_deref()).await {
                Ok(aside) => aside,
                Err(e) => {
                    return Err(Halt {
                        reason: self.scrub(&format!(
                            "the plan's note {path} changed while {display} ran, and it could not be put back ({e}): a tool may not change the plan's notes (the next run would read what it wrote as a step); look at the note before running again (a change of a person's made meanwhile can stay)"
                        )),
                    })
                }
            };
            let told = put_back_told(&path, aside.as_deref());
            match markers.contains(&path) {
                true => made_vault.push(told),
                false => undone.push(told),
            }
        }
        if !made_vault.is_empty() {
            told.push(format!(
                "planvault moved aside what this call made at {}: a tool may not make a folder of the plan a vault of its own, whose config the next run would read",
                made_vault.join(", ")
            ));
        }
        if !undone.is_empty() {
            told.push(format!(
                "planvault undid this call's change to the plan's {}: a tool may not change the plan's notes",
                undone.join(", ")
            ));
        }
        Ok(told)
    }

    /// A model round of a node's work that called tools, as the journal
    /// holds it under `key` (`node#visit/round.N`).
    pub(super) fn served_round(&self, key: &str) -> Option<planvault_llm::Completion> {
        let Some(Answer::Invoke { value: Some(v), .. }) = self.recorded.get(key) else {
            return None;
        };
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        Some(planvault_llm::Completion {
            content: text(&v["content"]),
            tool_calls: v["tool_calls"]
                .as_array()?
                .iter()
                .map(|c| planvault_llm::ToolCall {
                    id: text(&c["id"]),
                    name: text(&c["name"]),
                    arguments: text(&c["arguments"]),
                    extra: c.get("extra_content").cloned(),
                })
                .collect(),
            reasoning: v["reasoning_content"].as_str().map(str::to_string),
        })
    }

    /// Journal a model round that called tools under `key`.
    pub(super) async fn record_round(
        &mut self,
        key: String,
        completion: &planvault_llm::Completion,
    ) -> Result<(), Halt> {
        // What the server attached for itself goes back with the round on
        // a resume too: Gemini 3 and DeepSeek refuse the request without it.
        let calls: Vec<Value> = completion
            .tool_calls
            .iter()
            .map(|c| {
                let mut call = json!({"id": c.id, "name": c.name, "arguments": c.arguments});
                if let Some(extra) = &c.extra {
                    call["extra_content"] = extra.clone();
                }
                call
            })
            .collect();
        let mut round = json!({"content": completion.content, "tool_calls": calls});
        if let Some(reasoning) = &completion.reasoning {
            round["reasoning_content"] = Value::String(reasoning.clone());
        }
        let entry = JournalEntry {
            key,
            answer: Answer::Invoke {
                value: Some(round),
                error: None,
            },
            made_from: None,
        };
        self.record(entry).await
    }

    /// The journal key of the visit's next call of a `kind`:
    /// `node#visit/tool.N` for a server's tool, `node#visit/builtin.N` for a
    /// built-in one, numbered apart (so a server's calls keep the keys the
    /// run printed for approval, whatever built-ins a model adds or drops
    /// after a resume).
    fn next_tool_key(&mut self, request: &Request, kind: &str) -> String {
        let count = self
            .tool_counts
            .entry(format!("{}#{}/{kind}", request.node, request.visit))
            .or_insert(0);
        *count += 1;
        format!("{}#{}/{kind}.{}", request.node, request.visit, count)
    }

    /// The line written ahead of a `write_note` under `key`, once every
    /// check passed: a run stopped between the write and its answer's line
    /// still knows the note is the tool's.
    pub(super) async fn write_ahead(&mut self, key: &str, args: &Value) -> Result<(), Halt> {
        let ahead = JournalEntry {
            key: key.to_string(),
            answer: Answer::Invoke {
                value: Some(json!({"tool": "write_note", "arguments": args, "pending": "write"})),
                error: None,
            },
            made_from: None,
        };
        self.record(ahead).await
    }

    /// What the journal answered for `key` when it holds this very call
    /// (the tool `display` with `args`), made and not waiting for approval:
    /// a resumed visit is served it instead of making the call again.
    fn served_call(
        &self,
        key: &str,
        display: &str,
        args: &Value,
    ) -> Option<Result<String, String>> {
        let recorded = self.recorded.get(key);
        if !same_call(recorded, display, args) || recorded.is_some_and(is_pending) {
            return None;
        }
        let Some(Answer::Invoke { value, error }) = recorded else {
            return None;
        };
        Some(match error {
            Some(e) => Err(e.clone()),
            None => Ok(value
                .as_ref()
                .and_then(|v| v["result"].as_str())
                .unwrap_or_default()
                .to_string()),
        })
    }

    /// A built-in tool for the model. One that changes the vault or reads
    /// the network (`write_note`, `fetch_url`) is journaled under the
    /// visit's next `builtin.N`, as a server's call is, and a resumed visit
    /// making the same call is served its answer instead of making it
    /// again; reading the vault is simply done again. `Err`: the vault
    /// failed under the tool (or the journal did): the run stops resumably.
    pub(super) async fn builtin_tool(
        &mut self,
        request: &Request,
        name: &str,
        arguments: &str,
    ) -> Result<Result<String, String>, Halt> {
        let run = |result: Result<String, super::ToolError>| match result {
            Ok(text) => Ok(Ok(text)),
            Err(super::ToolError::Said(error)) => Ok(Err(error)),
            Err(super::ToolError::Vault(reason)) => Err(Halt {
                reason: format!("{name}: {reason}"),
            }),
        };
        if !matches!(name, "write_note" | "fetch_url") {
            return run(self.tool(name, arguments, None).await);
        }
        let args = planvault_llm::tools::arguments(arguments);
        let args = if args.is_null() { json!({}) } else { args };
        let key = self.next_tool_key(request, "builtin");
        if let Some(served) = self.served_call(&key, name, &args) {
            return Ok(served);
        }
        let result = run(self.tool(name, arguments, Some(&key)).await)?;
        let entry = answered(key, json!({"tool": name, "arguments": args}), &result);
        self.record(entry).await?;
        Ok(result)
    }

    /// The notes a tool wrote, or was writing, in the run a resume picks up
    /// (its journaled `write_note` calls), as the vault holds them now:
    /// still the tool's, though read as notes of the plan, while each holds
    /// what one of those calls wrote. A person's edit since, or a note a
    /// person made where a call cut off before its write never landed, is
    /// theirs: no write resumed or made later goes over it (as in a run
    /// going on, where the write finds the note changed).
    pub(super) fn remember_tool_notes(&mut self, journal: &[JournalEntry]) {
        let mut written: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for entry in journal {
            // The call's latest line says how it ended (a refusal is no note
            // of the tool's).
            if self
                .recorded
                .get(&entry.key)
                .is_some_and(|latest| matches!(latest, Answer::Invoke { error: Some(_), .. }))
            {
                continue;
            }
            let Answer::Invoke {
                value: Some(v),
                error: None,
            } = &entry.answer
            else {
                continue;
            };
            if v["tool"] != "write_note" {
                continue;
            }
            let Ok(path) = planvault_llm::tools::safe_path(v["arguments"]["path"].as_str()) else {
                continue;
            };
            let text = self.tool_note_text(&v["arguments"]);
            written.entry(path).or_default().push(text);
        }
        for (path, texts) in written {
            if let Some(text) = self.seen.get(&path).filter(|now| texts.contains(now)) {
                self.tool_notes.insert(path, text.clone());
            }
        }
    }

    /// Index one journal entry: later entries win, and a pending call
    /// voids an earlier approval under its key.
    pub(super) fn remember(&mut self, entry: JournalEntry) {
        if is_pending(&entry.answer) {
            self.recorded.remove(&format!("{}:approve", entry.key));
        }
        self.recorded.insert(entry.key, entry.answer);
    }

    /// Append an entry of the driver's own (a visit's call, or a person's
    /// approval of one) to the journal and remember it, with what its note
    /// was made from: a resume finds the visit by that when the note was
    /// renamed since.
    pub(super) async fn record(&mut self, mut entry: JournalEntry) -> Result<(), Halt> {
        if entry.made_from.is_none() && self.options.adopt_renamed_active {
            let node = journal::node_of_key(&entry.key)
                .and_then(|id| self.plan.nodes.iter().find(|n| n.id == id));
            entry.made_from = node.map(journal::made_from);
        }
        self.journal(&entry).await.map_err(|error| {
            let reason = error.message.clone();
            self.last_error = Some(error);
            Halt { reason }
        })?;
        self.remember(entry);
        Ok(())
    }
}

/// A call's journal entry: `value` (the tool and its arguments) with the
/// result, or the error.
fn answered(key: String, mut value: Value, result: &Result<String, String>) -> JournalEntry {
    if let Ok(text) = result {
        value["result"] = json!(text);
    }
    JournalEntry {
        key,
        answer: Answer::Invoke {
            value: Some(value),
            error: result.as_ref().err().cloned(),
        },
        made_from: None,
    }
}

/// Whether a journaled answer is of the tool `display` called with `args`.
fn same_call(answer: Option<&Answer>, display: &str, args: &Value) -> bool {
    matches!(answer, Some(Answer::Invoke { value: Some(v), .. })
        if v["tool"] == Value::String(display.to_string()) && v["arguments"] == *args)
}

/// A call journaled while it waits for a person's approval.
pub(super) fn is_pending(answer: &Answer) -> bool {
    matches!(answer, Answer::Invoke { value: Some(v), .. } if v.get("pending").is_some())
}

/// Put back what a writing tool's call changed of the vault's notes and
/// config, as the snapshot taken before the call (`keep_call_snapshot`)
/// holds them, where the run was cut off during the call (a kill, a tab
/// closed): as it would have been put back once the call returned, what
/// the tool left kept beside it (an edit a person made since is taken for
/// the tool's and kept so too). The paths put back, for the person to be
/// told ([`put_back_told`]). Call it holding the vault's lock, before
/// anything reads the plan.
pub async fn put_back_snapshot<H: Host>(
    host: &H,
    snapshot: &Value,
) -> Result<Vec<PutBack>, crate::HostError> {
    let mut files: Vec<(String, Option<String>)> = Vec::new();
    if let Some(notes) = snapshot["notes"].as_object() {
        files.extend(
            notes
                .iter()
                .map(|(path, was)| (path.clone(), was.as_str().map(str::to_string))),
        );
    }
    if let Some(config) = snapshot.get("config") {
        files.push((CONFIG_FILE.to_string(), config.as_str().map(str::to_string)));
    }
    let mut put_back = Vec::new();
    for (path, was) in files {
        let changed = match host.read(&path).await {
            Ok(now) => now != was,
            Err(e) => !e.failed,
        };
        if changed {
            let aside = host.put_back(&path, was.as_deref()).await?;
            put_back.push(PutBack { path, aside });
        }
    }
    Ok(put_back)
}

/// A file [`put_back_snapshot`] put back, and where what the tool left is
/// kept; shown as the person is told of it ([`put_back_told`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutBack {
    /// Vault-relative.
    pub path: String,
    pub aside: Option<String>,
}

impl std::fmt::Display for PutBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&put_back_told(&self.path, self.aside.as_deref()))
    }
}

/// A file put back after a tool's change, as the person and the model are
/// told of it: where what the tool left was kept, if it left anything.
pub fn put_back_told(path: &str, aside: Option<&str>) -> String {
    match aside {
        Some(aside) => format!("{path} (kept aside as {aside})"),
        None => path.to_string(),
    }
}
