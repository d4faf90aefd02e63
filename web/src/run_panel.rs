//! Running a plan from the app: the run panel (the open question, query,
//! Run / Resume / Pause / Step / Stop, run-to, breakpoints, the streamed
//! trace and outputs) and the offer to resume an interrupted run.
//! Questions are asked in the panel (`ask`), settings in their dialog
//! (`settings_dialog`).
//!
//! Each part reads only what it shows, through memos over the run's view:
//! a streamed token changes the live reply's text node and nothing else
//! (the trace, outputs and breakpoints are keyed `<For>` lists).

use crate::ask::Question;
use crate::run::{hint, Live, Phase, WorkerState};
use crate::run_client::RunClient;
use crate::settings::Settings;
use crate::state::AppState;
use leptos::prelude::*;
use planvault_core::engine::FinishReason;
use planvault_protocol::{ErrorCode, ToWorker};

/// A keyed list's key: the row's hash. One key type for every list keeps
/// one copy of `<For>`'s key set in the wasm.
pub(crate) fn row_key<T: std::hash::Hash>(row: &T) -> u64 {
    use std::hash::Hasher;
    let mut hasher = std::hash::DefaultHasher::new();
    row.hash(&mut hasher);
    hasher.finish()
}

/// How many of the newest outputs the panel lists.
const OUTPUTS_SHOWN: usize = 30;

fn origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

/// The node ids and titles of the open plan, in plan order (changes only
/// when a node is added, removed or renamed).
fn plan_nodes(state: AppState) -> Memo<Vec<(String, String)>> {
    Memo::new(move |_| {
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
    })
}

/// The run's phase, as its own memo (not every streamed token).
fn phase(run: RunClient) -> Memo<Phase> {
    Memo::new(move |_| run.view.with(|v| v.phase.clone()))
}

#[component]
pub fn RunPanel() -> impl IntoView {
    let run = expect_context::<RunClient>();
    view! {
        <aside id="run-panel" class="run-panel" aria-label="Run">
            <div class="run-head">
                <h2>"Run"</h2>
                <button id="run-settings" on:click=move |_| run.settings_open.set(true)>"Settings…"</button>
            </div>
            <Question />
            <p id="run-source" class="hint">{move || run.settings.with(Settings::summary)}</p>
            <RunControls />
            <RunTo />
            <Breakpoints />
            <RunStatus />
            <Attempts />
            <LiveReply />
            <Tools />
            <Answer />
            <Outputs />
            <Trace />
        </aside>
    }
}

/// The query and the buttons that start, pause, step and stop a run.
#[component]
fn RunControls() -> impl IntoView {
    let state = expect_context::<AppState>();
    let run = state.run;
    let phase = phase(run);
    let ready = Memo::new(move |_| run.view.with(|v| v.worker == WorkerState::Ready));
    let live = move || phase.with(Phase::live);
    let paused = move || matches!(phase.get(), Phase::Paused(_));
    let resumable = move || {
        run.offer.with(Option::is_some)
            || matches!(phase.get(), Phase::Finished { ref reason, .. } if *reason != FinishReason::Completed)
    };
    view! {
        <label for="run-query">"Query"</label>
        <textarea id="run-query" rows="2" placeholder="What is this run for?"
            prop:value=move || run.query.get()
            on:input=move |ev| run.query.set(event_target_value(&ev))
            disabled=live></textarea>
        <div class="row wrap">
            <button id="run-start" class="primary" disabled=move || live() || !ready.get()
                title="Start over: every note back to pending; the trace, the journal and the output notes (with any edits to them) are removed"
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
    }
}

/// "Run to": one option per node, keyed by node.
#[component]
fn RunTo() -> impl IntoView {
    let state = expect_context::<AppState>();
    let run = state.run;
    let nodes = plan_nodes(state);
    view! {
        <label for="run-to">"Run to (pause when this node is reached)"</label>
        <select id="run-to" on:change=move |ev| {
            let v = event_target_value(&ev);
            run.set_run_to((!v.is_empty()).then_some(v));
        }>
            <option value="" selected=move || run.run_to.with(Option::is_none)>"(the end)"</option>
            // Made again only when the plan's nodes change (a memo).
            {move || nodes.get().into_iter().map(|(id, title)| {
                let selected = { let id = id.clone(); move || run.run_to.with(|r| r.as_deref() == Some(id.as_str())) };
                view! { <option value=id.clone() selected=selected>{format!("{title} ({id})")}</option> }
            }).collect_view()}
        </select>
    }
}

/// The breakpoints: a check box per node, keyed by node.
#[component]
fn Breakpoints() -> impl IntoView {
    let state = expect_context::<AppState>();
    let run = state.run;
    let nodes = plan_nodes(state);
    view! {
        <details class="breakpoints">
            <summary>{move || format!("Breakpoints ({})", run.breakpoints.with(|b| b.len()))}</summary>
            <p class="hint">"Pause after the node's work, before its edge is judged, to read or change the output."</p>
            <For each=move || nodes.get() key=row_key let:node>
                {
                    let (id, title) = node;
                    let field = format!("bp-{id}");
                    let checked = { let id = id.clone(); move || run.breakpoints.with(|b| b.contains(&id)) };
                    view! {
                        <label class="check" for=field.clone()>
                            <input type="checkbox" id=field.clone() prop:checked=checked
                                on:change=move |_| run.toggle_breakpoint(&id) />
                            {title}
                        </label>
                    }
                }
            </For>
        </details>
    }
}

/// Where the run is, why it could not start, its last error and retry.
#[component]
fn RunStatus() -> impl IntoView {
    let run = expect_context::<RunClient>();
    let state = expect_context::<AppState>();
    let phase = phase(run);
    let error = Memo::new(move |_| run.view.with(|v| v.error.clone()));
    let retry = Memo::new(move |_| run.view.with(|v| v.retry.clone()));
    view! {
        <p id="run-phase" data-phase=move || phase.with(|p| p.code()) role="status" aria-live="polite">
            {move || phase.with(Phase::describe)}
        </p>
        <Show when=move || run.refused.with(Option::is_some)>
            <p id="run-refused" class="run-error">{move || run.refused.get().unwrap_or_default()}</p>
        </Show>
        <TrustAskBar/>
        {move || phase.with(Phase::next_step).map(|text| view! { <p id="run-next" class="hint">{text}</p> })}
        {move || error.get().map(|e| view! {
            <div id="run-error" class="run-error" data-code=format!("{:?}", e.code)>
                {error_lines(&e.message)}
                <p id="run-error-hint" class="hint">{hint(&e, &origin())}</p>
                {(e.code == ErrorCode::DecisionsElsewhere).then(|| {
                    let listing = e.message.clone();
                    view! {
                        <button id="decisions-take" on:click=move |_| {
                            run.take_decisions_and_resume(state, listing.clone())
                        }>"Take them as given and resume"</button>
                    }
                })}
            </div>
        })}
        {move || retry.get().map(|r| view! {
            <p id="run-retry" class="run-retry">
                {format!("{}: {} — trying again in {:.1} s", r.node, r.error.message, f64::from(r.wait_ms) / 1000.0)}
            </p>
        })}
    }
}

/// A judgment's earlier, unreadable replies, each on its own.
#[component]
fn Attempts() -> impl IntoView {
    let run = expect_context::<RunClient>();
    let attempts = Memo::new(move |_| run.view.with(|v| v.attempts.clone()));
    move || {
        attempts
            .get()
            .into_iter()
            .map(|l| {
                view! {
                    <h3>{format!("{}: could not be read", l.label())}</h3>
                    <pre class="run-text run-attempt">{l.text}</pre>
                }
            })
            .collect_view()
    }
}

/// The reply streaming in: a token changes only its text node.
#[component]
fn LiveReply() -> impl IntoView {
    let run = expect_context::<RunClient>();
    let label = Memo::new(move |_| run.view.with(|v| v.live.as_ref().map(Live::label)));
    let text = Memo::new(move |_| {
        run.view
            .with(|v| v.live.as_ref().map(|l| l.text.clone()).unwrap_or_default())
    });
    view! {
        <Show when=move || label.with(Option::is_some)>
            <h3>{move || format!("{}: receiving…", label.get().unwrap_or_default())}</h3>
            <pre id="run-live" class="run-text">{move || text.get()}</pre>
        </Show>
    }
}

/// The tools the run's nodes used, newest first, each failure with why
/// (what the model was told).
#[component]
fn Tools() -> impl IntoView {
    let run = expect_context::<RunClient>();
    let count = Memo::new(move |_| run.view.with(|v| v.tools.len()));
    let failed = Memo::new(move |_| {
        run.view
            .with(|v| v.tools.iter().filter(|t| t.error.is_some()).count())
    });
    let each = move || {
        count.track();
        run.view.with_untracked(|v| newest(&v.tools))
    };
    let used = move || count.get() > 0;
    view! {
        <Show when=used>
            <details id="run-tools-box" open>
                <summary>{move || match failed.get() {
                    0 => format!("Tools ({})", count.get()),
                    n => format!("Tools ({}, {n} failed)", count.get()),
                }}</summary>
                <ul id="run-tools">
                    <For each=each key=row_key let:((_, t))>
                        <li class=if t.error.is_some() { "tool-failed" } else { "tool-ok" } data-node=t.node.clone()>
                            <strong>{format!("{} · {}", t.node, t.name)}</strong>
                            {match &t.error {
                                Some(e) => format!(" failed: {e}"),
                                None => " worked".to_string(),
                            }}
                        </li>
                    </For>
                </ul>
            </details>
        </Show>
    }
}

/// The last [`OUTPUTS_SHOWN`] of `items`, newest first, each keyed by its
/// place in the run.
fn newest<T: Clone>(items: &[T]) -> Vec<(usize, T)> {
    items
        .iter()
        .cloned()
        .enumerate()
        .rev()
        .take(OUTPUTS_SHOWN)
        .collect()
}

/// The finished run's answer.
#[component]
fn Answer() -> impl IntoView {
    let run = expect_context::<RunClient>();
    let answer = Memo::new(move |_| {
        run.view.with(|v| match &v.phase {
            Phase::Finished { answer, .. } => answer.clone(),
            _ => None,
        })
    });
    move || {
        answer.get().map(|a| {
            view! {
                <h3>"Answer"</h3>
                <pre id="run-answer" class="run-text">{a}</pre>
            }
        })
    }
}

/// The kept outputs, newest first, keyed by their place in the run.
#[component]
fn Outputs() -> impl IntoView {
    let run = expect_context::<RunClient>();
    let count = Memo::new(move |_| run.view.with(|v| v.outputs.len()));
    // Read again only when one is added (or the run starts over).
    let each = move || {
        count.track();
        run.view.with_untracked(|v| newest(&v.outputs))
    };
    view! {
        <details id="run-outputs-box" open>
            <summary>{move || format!("Outputs ({})", count.get())}</summary>
            <ul id="run-outputs">
                <For each=each key=row_key let:((_, o))>
                    <li data-node=o.node.clone() data-visit=o.visit>
                        <strong>{format!("{} · visit {}", o.node, o.visit)}</strong>
                        <pre class="run-text">{o.text}</pre>
                    </li>
                </For>
            </ul>
        </details>
    }
}

/// `trace.md` as it is appended, one keyed row per entry.
#[component]
fn Trace() -> impl IntoView {
    let run = expect_context::<RunClient>();
    let count = Memo::new(move |_| run.view.with(|v| v.trace.len()));
    let each = move || {
        count.track();
        run.view.with_untracked(|v| {
            let rows: Vec<(usize, String)> = v.trace.iter().cloned().enumerate().collect();
            rows
        })
    };
    view! {
        <details id="run-trace-box" open>
            <summary>{move || format!("Trace ({} entries)", count.get())}</summary>
            <div id="run-trace">
                <For each=each key=row_key let:((_, t))>
                    <pre class="run-text trace-entry">{t.trim().to_string()}</pre>
                </For>
            </div>
        </details>
    }
}

/// A Run held until the person trusts what the vault's config reaches
/// beyond the vault (Obsidian does not show `.planvault/`).
#[component]
fn TrustAskBar() -> impl IntoView {
    let state = expect_context::<AppState>();
    let run = state.run;
    view! {
        {move || run.trust_ask.get().map(|ask| view! {
            <section id="trust-ask" class="trust-ask" aria-label="Trust the vault's config">
                <p>"This vault's .planvault/config.toml has the run reach beyond the vault:"</p>
                <pre id="trust-ask-reach">{ask.reach.join("\n")}</pre>
                <p class="hint">
                    "Its author chose these. Nothing of them is reached until you trust them \
                     (this browser keeps that until they change)."
                </p>
                <button id="trust-accept" class="primary" on:click=move |_| run.trust_and_run(state)>
                    "Trust and run"
                </button>
                <button id="trust-dismiss" on:click=move |_| run.trust_ask.set(None)>"Cancel"</button>
            </section>
        })}
    }
}

/// The offer to resume a run the vault left unfinished.
#[component]
pub fn ResumeOfferBar() -> impl IntoView {
    let state = expect_context::<AppState>();
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

/// A run error's message: its first line, then any lines after it (a
/// plan's diagnostics) one per line.
fn error_lines(message: &str) -> impl IntoView {
    let mut lines = message.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or_default().to_string();
    // A listed line's own dash would stand beside its bullet.
    let rest: Vec<String> = lines
        .map(|l| l.trim_start().trim_start_matches("- ").to_string())
        .collect();
    view! {
        <p class="message">{first}</p>
        {(!rest.is_empty()).then(|| view! {
            <ul id="run-error-lines" class="run-error-lines">
                {rest.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
            </ul>
        })}
    }
}
