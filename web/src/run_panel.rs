//! Running a plan from the app: the run panel (the open question, query,
//! Run / Resume / Pause / Step / Stop, run-to, breakpoints, the streamed
//! trace and outputs), the settings dialog and the offer to resume an
//! interrupted run. Questions are asked in the panel (`ask`).

use crate::ask::Question;
use crate::run::{hint, Phase, WorkerState};
use crate::run_client::McpTest;
use crate::settings::{ConfigServer, EndpointForm, McpForm, Secret, Settings, Source};
use crate::state::AppState;
use leptos::prelude::*;
use planvault_core::engine::FinishReason;
use planvault_protocol::ToWorker;

fn origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

/// The node ids and titles of the open plan, in plan order.
fn nodes(state: AppState) -> Vec<(String, String)> {
    state.open.with(|o| {
        o.as_ref()
            .map(|o| {
                o.doc
                    .checked
                    .plan
                    .nodes
                    .iter()
                    .map(|n| (n.id.clone(), n.title.clone()))
                    .collect()
            })
            .unwrap_or_default()
    })
}

#[component]
pub fn RunPanel(state: AppState) -> impl IntoView {
    let run = state.run;
    let phase = Memo::new(move |_| run.view.with(|v| v.phase.clone()));
    let ready = Memo::new(move |_| run.view.with(|v| v.worker == WorkerState::Ready));
    let live = move || phase.with(Phase::live);
    let paused = move || matches!(phase.get(), Phase::Paused(_));
    let resumable = move || {
        run.offer.with(Option::is_some)
            || matches!(phase.get(), Phase::Finished { ref reason, .. } if *reason != FinishReason::Completed)
    };

    let error = Memo::new(move |_| run.view.with(|v| v.error.clone()));
    let retry = Memo::new(move |_| run.view.with(|v| v.retry.clone()));
    let live_text = Memo::new(move |_| run.view.with(|v| v.live.clone()));
    let attempts = Memo::new(move |_| run.view.with(|v| v.attempts.clone()));
    let trace_len = Memo::new(move |_| run.view.with(|v| v.trace.len()));
    let outputs_len = Memo::new(move |_| run.view.with(|v| v.outputs.len()));
    let answer = Memo::new(move |_| match phase.get() {
        Phase::Finished { answer, .. } => answer,
        _ => None,
    });

    view! {
        <aside id="run-panel" class="run-panel" aria-label="Run">
            <div class="run-head">
                <h2>"Run"</h2>
                <button id="run-settings" on:click=move |_| run.settings_open.set(true)>"Settings…"</button>
            </div>
            <Question state=state />
            <p id="run-source" class="hint">{move || run.settings.with(Settings::summary)}</p>
            <label for="run-query">"Query"</label>
            <textarea id="run-query" rows="2" placeholder="What is this run for?"
                prop:value=move || run.query.get()
                on:input=move |ev| run.query.set(event_target_value(&ev))
                disabled=live></textarea>
            <div class="row wrap">
                <button id="run-start" class="primary" disabled=move || live() || !ready.get()
                    title="Start over: every note back to pending"
                    on:click=move |_| run.run(state, true, false)>"Run"</button>
                <Show when=move || resumable() && !live()>
                    <button id="run-continue" disabled=move || !ready.get()
                        title="Continue where the run stopped, keeping the work already done"
                        on:click=move |_| run.run(state, false, false)>"Resume run"</button>
                </Show>
                <button id="run-pause" disabled=move || !matches!(phase.get(), Phase::Running)
                    on:click=move |_| run.send(ToWorker::Pause, None)>"Pause"</button>
                <button id="run-resume" disabled=move || !paused()
                    on:click=move |_| run.send(ToWorker::Resume, None)>"Resume"</button>
                <button id="run-step" disabled=move || !(paused() || (!live() && ready.get()))
                    title="Run one node's work, then pause"
                    on:click=move |_| {
                        if paused() { run.send(ToWorker::Step, None) } else { run.run(state, true, true) }
                    }>"Step"</button>
                <button id="run-stop" class="danger" disabled=move || !live()
                    on:click=move |_| run.send(ToWorker::Stop, None)>"Stop"</button>
            </div>
            <label for="run-to">"Run to (pause when this node is reached)"</label>
            <select id="run-to" on:change=move |ev| {
                let v = event_target_value(&ev);
                run.set_run_to((!v.is_empty()).then_some(v));
            }>
                <option value="" selected=move || run.run_to.with(Option::is_none)>"(the end)"</option>
                {move || nodes(state).into_iter().map(|(id, title)| {
                    let selected = { let id = id.clone(); move || run.run_to.with(|r| r.as_deref() == Some(id.as_str())) };
                    view! { <option value=id.clone() selected=selected>{format!("{title} ({id})")}</option> }
                }).collect_view()}
            </select>
            <details class="breakpoints">
                <summary>{move || format!("Breakpoints ({})", run.breakpoints.with(|b| b.len()))}</summary>
                <p class="hint">"Pause after the node's work, before its edge is judged, to read or change the output."</p>
                {move || nodes(state).into_iter().map(|(id, title)| {
                    let (field, label_for) = (format!("bp-{id}"), format!("bp-{id}"));
                    let checked = { let id = id.clone(); move || run.breakpoints.with(|b| b.contains(&id)) };
                    view! {
                        <label class="check" for=label_for>
                            <input type="checkbox" id=field prop:checked=checked
                                on:change=move |_| run.toggle_breakpoint(&id) />
                            {title}
                        </label>
                    }
                }).collect_view()}
            </details>
            <p id="run-phase" data-phase=move || phase.with(|p| p.code()) role="status" aria-live="polite">
                {move || phase.with(Phase::describe)}
            </p>
            <Show when=move || run.refused.with(Option::is_some)>
                <p id="run-refused" class="run-error">{move || run.refused.get().unwrap_or_default()}</p>
            </Show>
            {move || phase.with(Phase::next_step).map(|text| view! { <p id="run-next" class="hint">{text}</p> })}
            {move || error.get().map(|e| view! {
                <div id="run-error" class="run-error" data-code=format!("{:?}", e.code)>
                    {error_lines(&e.message)}
                    <p id="run-error-hint" class="hint">{hint(&e, &origin())}</p>
                </div>
            })}
            {move || retry.get().map(|r| view! {
                <p id="run-retry" class="run-retry">
                    {format!("{}: {} — trying again in {:.1} s", r.node, r.error.message, f64::from(r.wait_ms) / 1000.0)}
                </p>
            })}
            {move || attempts.get().into_iter().map(|l| view! {
                <h3>{format!("{}: could not be read", l.label())}</h3>
                <pre class="run-text run-attempt">{l.text}</pre>
            }).collect_view()}
            {move || live_text.get().map(|l| view! {
                <h3>{format!("{}: receiving…", l.label())}</h3>
                <pre id="run-live" class="run-text">{l.text}</pre>
            })}
            {move || answer.get().map(|a| view! {
                <h3>"Answer"</h3>
                <pre id="run-answer" class="run-text">{a}</pre>
            })}
            <details id="run-outputs-box" open>
                <summary>{move || format!("Outputs ({})", outputs_len.get())}</summary>
                <ul id="run-outputs">
                    {move || run.view.with(|v| v.outputs.iter().rev().take(30).map(|o| view! {
                        <li data-node=o.node.clone() data-visit=o.visit>
                            <strong>{format!("{} · visit {}", o.node, o.visit)}</strong>
                            <pre class="run-text">{o.text.clone()}</pre>
                        </li>
                    }).collect_view())}
                </ul>
            </details>
            <details id="run-trace-box" open>
                <summary>{move || format!("Trace ({} entries)", trace_len.get())}</summary>
                <div id="run-trace">
                    {move || run.view.with(|v| v.trace.iter().map(|t| view! {
                        <pre class="run-text trace-entry">{t.trim().to_string()}</pre>
                    }).collect_view())}
                </div>
            </details>
        </aside>
    }
}

/// The offer to resume a run the vault left unfinished.
#[component]
pub fn ResumeOfferBar(state: AppState) -> impl IntoView {
    let run = state.run;
    // Always one element, so the page grid keeps its rows.
    view! {
        <div class="resume-slot">
        <Show when=move || run.offer.with(Option::is_some) && !run.view.with(|v| v.phase.live())>
            <section id="resume-offer" class="resume-offer" aria-label="Interrupted run">
                <span>
                    {move || match run.offer.get().and_then(|o| o.query) {
                        Some(q) => format!("This vault holds an interrupted run (query: “{q}”)."),
                        None => "This vault holds an interrupted run.".to_string(),
                    }}
                </span>
                <button id="resume-offer-accept" class="primary" on:click=move |_| {
                    run.panel_open.set(true);
                    run.run(state, false, false);
                }>"Resume the interrupted run"</button>
                <button id="resume-offer-dismiss" on:click=move |_| run.offer.set(None)>"Dismiss"</button>
            </section>
        </Show>
        </div>
    }
}

/// One endpoint's three fields.
fn endpoint_fields(
    prefix: String,
    title: String,
    draft: RwSignal<Settings>,
    role: Option<String>,
) -> impl IntoView {
    let get = {
        let role = role.clone();
        move |f: fn(&EndpointForm) -> String| {
            let role = role.clone();
            move || {
                draft.with(|s| match &role {
                    None => f(&s.default),
                    Some(r) => s.roles.get(r).map(f).unwrap_or_default(),
                })
            }
        }
    };
    let set = move |f: fn(&mut EndpointForm, String)| {
        let role = role.clone();
        move |ev: leptos::ev::Event| {
            let value = event_target_value(&ev);
            draft.update(|s| match &role {
                None => f(&mut s.default, value),
                Some(r) => f(s.roles.entry(r.clone()).or_default(), value),
            })
        }
    };
    let (url, model, key) = (
        format!("{prefix}-url"),
        format!("{prefix}-model"),
        format!("{prefix}-key"),
    );
    view! {
        <fieldset class="endpoint">
            <legend>{title}</legend>
            <label for=url.clone()>"Base URL"</label>
            <input id=url type="url" placeholder="http://127.0.0.1:11434/v1" autocomplete="off"
                prop:value=get(|e| e.base_url.clone()) on:input=set(|e, v| e.base_url = v) />
            <label for=model.clone()>"Model"</label>
            <input id=model type="text" autocomplete="off"
                prop:value=get(|e| e.model.clone()) on:input=set(|e, v| e.model = v) />
            <label for=key.clone()>"API key (kept in this browser only)"</label>
            <input id=key type="password" autocomplete="off"
                prop:value=get(|e| e.api_key.clone()) on:input=set(|e, v| e.api_key = v) />
        </fieldset>
    }
}

#[component]
pub fn SettingsDialog(state: AppState) -> impl IntoView {
    let run = state.run;
    let draft = RwSignal::new(Settings::default());
    // Each opening starts from what is saved, with a row per role of the vault.
    Effect::new(move |_| {
        if run.settings_open.get() {
            let roles: Vec<String> = state
                .with_doc(|d| {
                    d.checked
                        .plan
                        .nodes
                        .iter()
                        .filter_map(|n| n.role.clone())
                        .collect()
                })
                .unwrap_or_default();
            draft.set(
                run.settings
                    .get_untracked()
                    .with_roles(roles.iter().map(String::as_str)),
            );
            leptos::task::spawn_local(async move {
                let _ = run.load_config(state).await;
            });
        }
    });
    let number = move |f: fn(&mut Settings, u32)| {
        move |ev: leptos::ev::Event| {
            if let Ok(n) = event_target_value(&ev).trim().parse::<u32>() {
                draft.update(|s| f(s, n));
            }
        }
    };
    let role_names = move || draft.with(|s| s.roles.keys().cloned().collect::<Vec<_>>());
    let close = move || run.settings_open.set(false);
    view! {
        <Show when=move || run.settings_open.get()>
            // A form cannot take the dialog role (axe-core): its backdrop does.
            <div class="backdrop" role="dialog" aria-modal="true" aria-labelledby="settings-title">
                <form id="settings" class="dialog wide"
                    on:submit=move |ev| {
                        ev.prevent_default();
                        run.save_settings(draft.get_untracked());
                        close();
                    }
                    on:keydown=move |ev| if ev.key() == "Escape" { close() }>
                    <h2 id="settings-title">"Run settings"</h2>
                    <fieldset>
                        <legend>"Who does the work"</legend>
                        <label class="check" for="source-manual">
                            <input type="radio" name="source" id="source-manual"
                                prop:checked=move || draft.with(|s| s.source == Source::Manual)
                                on:change=move |_| draft.update(|s| s.source = Source::Manual) />
                            "Manual: I answer each step and each YES/NO judgment (needs nothing)"
                        </label>
                        <label class="check" for="source-model">
                            <input type="radio" name="source" id="source-model"
                                prop:checked=move || draft.with(|s| s.source == Source::Model)
                                on:change=move |_| draft.update(|s| s.source = Source::Model) />
                            "LLM endpoints (OpenAI-compatible: Ollama, llama.cpp, vLLM, hosted)"
                        </label>
                    </fieldset>
                    <Show when=move || draft.with(|s| s.source == Source::Model)>
                        {endpoint_fields("ep-default".into(), "Default endpoint".into(), draft, None)}
                        <p class="hint">"A role left empty uses the default endpoint."</p>
                        {move || role_names().into_iter().map(|r| {
                            endpoint_fields(format!("ep-role-{r}"), format!("Role “{r}”"), draft, Some(r))
                        }).collect_view()}
                    </Show>
                    {mcp_fields(state, draft)}
                    <fieldset class="numbers">
                        <legend>"Limits"</legend>
                        <label for="retry-attempts">"Attempts per model call"</label>
                        <input id="retry-attempts" type="number" min="1" max="10"
                            prop:value=move || draft.with(|s| s.retry.attempts.to_string())
                            on:change=number(|s, n| s.retry.attempts = n.clamp(1, 10)) />
                        <label for="retry-delay">"First retry after (ms, doubling)"</label>
                        <input id="retry-delay" type="number" min="0"
                            prop:value=move || draft.with(|s| s.retry.base_delay_ms.to_string())
                            on:change=number(|s, n| s.retry.base_delay_ms = n) />
                        <label for="retry-timeout">"Timeout per attempt (s)"</label>
                        <input id="retry-timeout" type="number" min="1"
                            prop:value=move || draft.with(|s| (s.retry.timeout_ms / 1000).to_string())
                            on:change=number(|s, n| s.retry.timeout_ms = n.max(1).saturating_mul(1000)) />
                        <label for="max-steps">"Most steps in one run"</label>
                        <input id="max-steps" type="number" min="1"
                            prop:value=move || draft.with(|s| s.max_steps.to_string())
                            on:change=number(|s, n| s.max_steps = n.max(1)) />
                        <label for="max-prompt-bytes" title="A vault's .planvault/config.toml ([run] max_prompt_bytes) wins">
                            "Most bytes in one model request"
                        </label>
                        <input id="max-prompt-bytes" type="number" min="1000"
                            prop:value=move || draft.with(|s| s.max_prompt_bytes.to_string())
                            on:change=number(|s, n| s.max_prompt_bytes = n.max(1_000)) />
                        <label class="check" for="ask-humans">
                            <input type="checkbox" id="ask-humans" prop:checked=move || draft.with(|s| s.ask_humans)
                                on:change=move |ev| draft.update(|s| s.ask_humans = event_target_checked(&ev)) />
                            "Ask me at human / approval nodes"
                        </label>
                    </fieldset>
                    <div class="buttons">
                        <button type="button" id="settings-forget-keys" class="danger"
                            title="Remove every API key from this browser"
                            on:click=move |_| {
                                draft.update(Settings::forget_keys);
                                let mut saved = run.settings.get_untracked();
                                saved.forget_keys();
                                run.save_settings(saved);
                                state.message.set("API keys forgotten: none is kept in this browser now".into());
                            }>"Forget keys"</button>
                        <span class="grow"></span>
                        <button type="button" on:click=move |_| close()>"Cancel"</button>
                        <button type="submit" id="settings-save" class="primary">"Save"</button>
                    </div>
                </form>
            </div>
        </Show>
    }
}

/// What a Settings' test of server `name` found.
fn test_result(state: AppState, id: String, name: String) -> impl IntoView {
    let run = state.run;
    move || {
        let test = run.mcp_tests.with(|t| t.get(&name).cloned());
        let id = id.clone();
        match test {
            None => None,
            Some(McpTest::Listing) => Some(
                view! { <p id=id class="hint" data-state="listing">"Listing its tools…"</p> }
                    .into_any(),
            ),
            Some(McpTest::Failed(e)) => {
                Some(view! { <p id=id class="error" data-state="failed">{e}</p> }.into_any())
            }
            Some(McpTest::Tools(tools)) => Some(
                view! {
                    <ul id=id class="mcp-tools" data-state="listed">
                        {tools.into_iter().map(|t| view! { <li>{t}</li> }).collect_view()}
                    </ul>
                }
                .into_any(),
            ),
        }
    }
}

/// Test one server as the draft settings describe it.
fn test_named(state: AppState, draft: RwSignal<Settings>, name: String) {
    let run = state.run;
    let config = run.config.get_untracked().unwrap_or_default();
    match draft.with_untracked(|s| s.mcp_servers(&config)) {
        Ok(servers) => {
            if let Some(server) = servers.into_iter().find(|s| s.name == name) {
                run.test_server(server);
            }
        }
        Err(e) => run
            .mcp_tests
            .update(|t| drop(t.insert(name, McpTest::Failed(e.to_string())))),
    }
}

/// MCP servers: the vault config's (a command one is the terminal's) and
/// URLs added here, each with its token (kept in this browser only) and a
/// test that lists its tools.
fn mcp_fields(state: AppState, draft: RwSignal<Settings>) -> impl IntoView {
    let run = state.run;
    let configured = move || {
        match run.config.get() {
        Err(e) => view! { <p id="mcp-config-error" class="error">{e}</p> }.into_any(),
        Ok(servers) if servers.is_empty() => view! {
            <p class="hint">"The vault's .planvault/config.toml lists no MCP server."</p>
        }
        .into_any(),
        Ok(servers) => servers
            .into_iter()
            .map(|server| match server {
                ConfigServer::Command { name, command } => view! {
                    <div class="mcp-server" id=format!("mcp-config-{name}") data-kind="command">
                        <strong>{name.clone()}</strong>
                        " — "<code>{command}</code>
                        " — terminal only: the browser cannot start a command (run with planvault run)"
                    </div>
                }
                .into_any(),
                ConfigServer::Url { name, url, token_env, .. } => {
                    let token_id = format!("mcp-config-{name}-token");
                    let (n1, n2, n3) = (name.clone(), name.clone(), name.clone());
                    view! {
                        <div class="mcp-server" id=format!("mcp-config-{name}") data-kind="url">
                            <strong>{name.clone()}</strong>" — "<code>{url}</code>
                            <label for=token_id.clone()>{match token_env {
                                Some(var) => format!("Token (the terminal reads {var}; kept in this browser only)"),
                                None => "Token, if it needs one (kept in this browser only)".to_string(),
                            }}</label>
                            <input id=token_id type="password" autocomplete="off"
                                prop:value=move || draft.with(|s| s.mcp_tokens.get(&n1).map(|t| t.0.clone()).unwrap_or_default())
                                on:input=move |ev| {
                                    let v = event_target_value(&ev);
                                    draft.update(|s| drop(s.mcp_tokens.insert(n2.clone(), Secret(v))));
                                } />
                            <button type="button" id=format!("mcp-config-{name}-test")
                                on:click=move |_| test_named(state, draft, n3.clone())>"Test"</button>
                            {test_result(state, format!("mcp-config-{name}-tools"), name.clone())}
                        </div>
                    }
                    .into_any()
                }
            })
            .collect_view()
            .into_any(),
    }
    };
    let rows = move || draft.with(|s| s.mcp.len());
    let field = move |i: usize, get: fn(&McpForm) -> String, set: fn(&mut McpForm, String)| {
        (
            move || draft.with(|s| s.mcp.get(i).map(get).unwrap_or_default()),
            move |ev: leptos::ev::Event| {
                let v = event_target_value(&ev);
                draft.update(|s| {
                    if let Some(f) = s.mcp.get_mut(i) {
                        set(f, v)
                    }
                })
            },
        )
    };
    let added = move || {
        (0..rows())
            .map(|i| {
                let (name_get, name_set) = field(i, |f| f.name.clone(), |f, v| f.name = v);
                let (url_get, url_set) = field(i, |f| f.url.clone(), |f, v| f.url = v);
                let (token_get, token_set) = field(i, |f| f.token.clone(), |f, v| f.token = v);
                let name_now = move || draft.with(|s| s.mcp.get(i).map(|f| f.name.trim().to_string()).unwrap_or_default());
                view! {
                    <div class="mcp-server" id=format!("mcp-{i}") data-kind="added">
                        <label for=format!("mcp-{i}-name")>"Name (tools are name.tool)"</label>
                        <input id=format!("mcp-{i}-name") type="text" autocomplete="off" prop:value=name_get on:input=name_set />
                        <label for=format!("mcp-{i}-url")>"Streamable HTTP URL"</label>
                        <input id=format!("mcp-{i}-url") type="url" placeholder="http://127.0.0.1:3001/mcp" autocomplete="off" prop:value=url_get on:input=url_set />
                        <label for=format!("mcp-{i}-token")>"Token, if it needs one (kept in this browser only)"</label>
                        <input id=format!("mcp-{i}-token") type="password" autocomplete="off" prop:value=token_get on:input=token_set />
                        <button type="button" id=format!("mcp-{i}-test")
                            on:click=move |_| test_named(state, draft, name_now())>"Test"</button>
                        <button type="button" id=format!("mcp-{i}-remove")
                            on:click=move |_| draft.update(|s| { if i < s.mcp.len() { s.mcp.remove(i); } })>"Remove"</button>
                        {move || test_result(state, format!("mcp-{i}-tools"), name_now())}
                    </div>
                }
            })
            .collect_view()
    };
    view! {
        <fieldset id="mcp-servers" class="mcp">
            <legend>"MCP servers (tools for the plan's nodes)"</legend>
            <p class="hint">"The browser reaches URL (Streamable HTTP) servers only; the server must allow this page's origin (CORS)."</p>
            {configured}
            {added}
            <button type="button" id="mcp-add" on:click=move |_| draft.update(|s| s.mcp.push(McpForm::default()))>"Add a server URL"</button>
        </fieldset>
    }
}

/// A run error's message: its first line, then any lines after it (a
/// plan's diagnostics) one per line.
fn error_lines(message: &str) -> impl IntoView {
    let mut lines = message.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or_default().to_string();
    let rest: Vec<String> = lines.map(str::to_string).collect();
    view! {
        <p class="message">{first}</p>
        {(!rest.is_empty()).then(|| view! {
            <ul id="run-error-lines" class="run-error-lines">
                {rest.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
            </ul>
        })}
    }
}
