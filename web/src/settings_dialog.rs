//! The run settings dialog: who does the work (a person or LLM endpoints,
//! one per role), the MCP servers and their tests, and the limits. It edits
//! a draft of the saved [`Settings`]; Save keeps it in this browser.

use crate::on_demand;
use crate::run_client::{McpTest, RunClient};
use crate::settings::{ConfigServer, EndpointForm, McpForm, Secret, Settings, Source};
use crate::state::AppState;
use leptos::prelude::*;

#[component]
pub fn SettingsDialog() -> impl IntoView {
    let run = expect_context::<RunClient>();
    view! {
        <Show when=move || run.settings_open.get()>
            {on_demand::show("Settings", on_demand::settings)}
        </Show>
    }
}

/// The open dialog: each opening starts from what is saved, with a row per
/// role of the vault, and reads the vault's configured servers again.
#[component]
pub(crate) fn SettingsForm() -> impl IntoView {
    let state = expect_context::<AppState>();
    let run = state.run;
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
    let draft = RwSignal::new(
        run.settings
            .get_untracked()
            .with_roles(roles.iter().map(String::as_str)),
    );
    leptos::task::spawn_local(async move {
        let _ = run.load_config(state).await;
    });
    let close = move || run.settings_open.set(false);
    view! {
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
                    {who_does_the_work(draft)}
                    {mcp_servers(draft)}
                    {limits(draft)}
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
    }
}

/// A person, or the endpoints: the default and one per role of the vault.
fn who_does_the_work(draft: RwSignal<Settings>) -> impl IntoView {
    let role_names =
        Memo::new(move |_| draft.with(|s| s.roles.keys().cloned().collect::<Vec<_>>()));
    view! {
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
            {move || role_names.get().into_iter().map(|r| view! {
                {endpoint_fields(format!("ep-role-{r}"), format!("Role “{r}”"), draft, Some(r))}
            }).collect_view()}
        </Show>
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

/// Retries, timeouts, the run's size limits and whether people are asked.
fn limits(draft: RwSignal<Settings>) -> impl IntoView {
    let number = move |f: fn(&mut Settings, u32)| {
        move |ev: leptos::ev::Event| {
            if let Ok(n) = event_target_value(&ev).trim().parse::<u32>() {
                draft.update(|s| f(s, n));
            }
        }
    };
    view! {
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
            <label class="check" for="parallel" title="As Leopold's --parallel; otherwise one item at a time, in Leopold's order. A run keeps the order it began in: Resume goes on in it, Run starts over in this one">
                <input type="checkbox" id="parallel" prop:checked=move || draft.with(|s| s.parallel)
                    on:change=move |ev| draft.update(|s| s.parallel = event_target_checked(&ev)) />
                "Run a PLAN.md's independent items together"
            </label>
        </fieldset>
    }
}

/// What a Settings' test of server `name` found.
fn test_result(run: RunClient, id: String, name: String) -> impl IntoView {
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
fn test_named(run: RunClient, draft: RwSignal<Settings>, name: String) {
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
fn mcp_servers(draft: RwSignal<Settings>) -> impl IntoView {
    view! {
        <fieldset id="mcp-servers" class="mcp">
            <legend>"MCP servers (tools for the plan's nodes)"</legend>
            <p class="hint">"The browser reaches URL (Streamable HTTP) servers only; the server must allow this page's origin (CORS)."</p>
            {configured_servers(draft)}
            {added_servers(draft)}
            <button type="button" id="mcp-add" on:click=move |_| draft.update(|s| s.mcp.push(McpForm::default()))>"Add a server URL"</button>
        </fieldset>
    }
}

/// The servers the vault's `.planvault/config.toml` lists.
fn configured_servers(draft: RwSignal<Settings>) -> impl IntoView {
    let run = expect_context::<RunClient>();
    move || {
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
                    let (n3, key) = (name.clone(), crate::settings::token_key(&name, &url));
                    let (k1, k2) = (key.clone(), key);
                    view! {
                        <div class="mcp-server" id=format!("mcp-config-{name}") data-kind="url">
                            <strong>{name.clone()}</strong>" — "<code>{url}</code>
                            <label for=token_id.clone()>{match token_env {
                                Some(var) => format!("Token (the terminal reads {var}; kept in this browser only)"),
                                None => "Token, if it needs one (kept in this browser only)".to_string(),
                            }}</label>
                            <input id=token_id type="password" autocomplete="off"
                                prop:value=move || draft.with(|s| s.mcp_tokens.get(&k1).map(|t| t.0.clone()).unwrap_or_default())
                                on:input=move |ev| {
                                    let v = event_target_value(&ev);
                                    draft.update(|s| drop(s.mcp_tokens.insert(k2.clone(), Secret(v))));
                                } />
                            <button type="button" id=format!("mcp-config-{name}-test")
                                on:click=move |_| test_named(run, draft, n3.clone())>"Test"</button>
                            {test_result(run, format!("mcp-config-{name}-tools"), name.clone())}
                        </div>
                    }
                    .into_any()
                }
            })
            .collect_view()
            .into_any(),
    }
    }
}

/// The server URLs added in this browser, one row each.
fn added_servers(draft: RwSignal<Settings>) -> impl IntoView {
    let run = expect_context::<RunClient>();
    // Rows are made again when one is added or removed, not per keystroke.
    let rows = Memo::new(move |_| draft.with(|s| s.mcp.len()));
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
    move || {
        (0..rows.get())
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
                            on:click=move |_| test_named(run, draft, name_now())>"Test"</button>
                        <button type="button" id=format!("mcp-{i}-remove")
                            on:click=move |_| draft.update(|s| { if i < s.mcp.len() { s.mcp.remove(i); } })>"Remove"</button>
                        {move || test_result(run, format!("mcp-{i}-tools"), name_now())}
                    </div>
                }
            })
            .collect_view()
    }
}
