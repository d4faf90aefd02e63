//! The question the run is waiting on (a step's work, a YES/NO judgment, a
//! person's decision, a breakpoint), asked in the run panel beside the
//! canvas, never over it: the node it concerns is ringed on the canvas and
//! scrolled into view, and the focus moves to the answer. Ctrl+Enter (or
//! Enter outside a text box) answers; Escape goes back to the canvas,
//! leaving the question open.

use crate::dock::DockState;
use crate::state::AppState;
use leptos::prelude::*;
use planvault_protocol::{AskKind, PersonReply, ToWorker};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// After the next two frames (the panel is laid out and the canvas has
/// taken its new size by then).
fn after_layout(f: impl FnOnce() + 'static) {
    let Some(w) = web_sys::window() else { return };
    let second = Closure::once_into_js(move || {
        if let Some(w) = web_sys::window() {
            let _ = w.request_animation_frame(Closure::once_into_js(f).unchecked_ref());
        }
    });
    let _ = w.request_animation_frame(second.unchecked_ref());
}

fn focus(selector: &str) {
    let el = document().query_selector(selector).ok().flatten();
    if let Some(el) = el.and_then(|el| el.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = el.focus();
    }
}

/// Pans the canvas (no zoom change) so `node`'s card is in view.
fn reveal(state: AppState, node: &str) {
    let rect = state.open.with_untracked(|o| {
        let o = o.as_ref()?;
        o.scene.nodes.get(o.doc.node_index(node)?).copied()
    });
    if let Some(r) = rect {
        state.viewport.update(|v| v.reveal(r, 40.0));
    }
}

/// The answer as the primary button would send it (when it is enabled).
fn submit() {
    let button = document()
        .query_selector("#run-ask .ask-primary")
        .ok()
        .flatten()
        .and_then(|b| b.dyn_into::<web_sys::HtmlButtonElement>().ok());
    if let Some(b) = button.filter(|b| !b.disabled()) {
        b.click();
    }
}

fn on_key(ev: web_sys::KeyboardEvent) {
    let tag = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .map(|el| el.tag_name())
        .unwrap_or_default();
    match ev.key().as_str() {
        "Escape" => {
            ev.prevent_default();
            focus("#plan-canvas");
        }
        "Enter" if ev.ctrl_key() || ev.meta_key() => {
            ev.prevent_default();
            submit();
        }
        "Enter" if !ev.shift_key() && tag != "TEXTAREA" && tag != "BUTTON" => {
            ev.prevent_default();
            submit();
        }
        _ => {}
    }
}

/// What a person is filling in for the open question.
#[derive(Clone, Copy)]
struct Draft {
    text: RwSignal<String>,
    verdicts: RwSignal<Vec<Option<bool>>>,
    choice: RwSignal<Option<String>>,
}

impl Draft {
    fn new(ask: &AskKind) -> Draft {
        Draft {
            text: RwSignal::new(match ask {
                AskKind::Breakpoint { output, .. } => output.clone(),
                _ => String::new(),
            }),
            verdicts: RwSignal::new(match ask {
                AskKind::Judge { labels, .. } => vec![None; labels.len()],
                _ => Vec::new(),
            }),
            choice: RwSignal::new(None),
        }
    }
}

#[component]
pub fn Question() -> impl IntoView {
    let state = expect_context::<AppState>();
    let run = state.run;
    let dock = expect_context::<DockState>();
    let ask = Memo::new(move |_| run.view.with(|v| v.ask.clone()));
    // A new question shows in the open run panel, its node in view and the
    // focus on its answer.
    Effect::new(move |_| {
        let Some(a) = ask.get() else { return };
        dock.show(state, true);
        after_layout(move || {
            reveal(state, &a.node);
            focus("#run-ask [data-focus]");
        });
    });
    let reply = move |r: PersonReply| {
        if let Some(message) = run.view.with_untracked(|v| v.reply(r)) {
            run.send(message, None);
        }
    };
    let body = move || {
        let a = ask.get()?;
        // Each question starts from its own defaults.
        let draft = Draft::new(&a.ask);
        Some(match a.ask {
            AskKind::Work { title, prompt } => work(
                format!("{} · visit {}", a.node, a.visit),
                title,
                prompt,
                draft,
                reply,
            ),
            AskKind::Judge {
                title,
                output,
                labels,
            } => judge(title, output, labels, draft, reply),
            AskKind::Human { question, choices } => human(a.node, question, choices, draft, reply),
            AskKind::Breakpoint { title, .. } => breakpoint(title, draft, reply),
        })
    };
    let kind = move || {
        ask.with(|a| match a.as_ref().map(|a| &a.ask) {
            Some(AskKind::Work { .. }) => "work",
            Some(AskKind::Judge { .. }) => "judge",
            Some(AskKind::Human { .. }) => "human",
            Some(AskKind::Breakpoint { .. }) => "breakpoint",
            None => "",
        })
    };
    view! {
        <Show when=move || ask.with(Option::is_some)>
            <section id="run-ask" class="run-ask" role="region" aria-labelledby="ask-title"
                data-kind=kind data-node=move || ask.with(|a| a.as_ref().map(|a| a.node.clone()))
                on:keydown=on_key>
                {body}
                <p class="hint">"Ctrl+Enter answers · Esc goes back to the canvas (the question waits here)"</p>
                <p class="hint">
                    <button type="button" id="ask-stop" class="link" on:click=move |_| run.send(ToWorker::Stop, None)>
                        "Stop the run (it stays resumable)"</button>
                </p>
            </section>
        </Show>
    }
}

fn work(
    place: String,
    title: String,
    prompt: String,
    draft: Draft,
    reply: impl Fn(PersonReply) + Copy + 'static,
) -> AnyView {
    let text = draft.text;
    view! {
        <h2 id="ask-title">{format!("Do the work: {title}")}</h2>
        <p class="hint">{format!("{place}. This is what a model would read:")}</p>
        <pre id="ask-prompt" class="run-text">{prompt}</pre>
        <label for="ask-answer">"Your output for this step"</label>
        <textarea id="ask-answer" data-focus="" rows="6" prop:value=move || text.get()
            on:input=move |ev| text.set(event_target_value(&ev))></textarea>
        <div class="buttons">
            <button type="button" id="ask-submit" class="primary ask-primary" disabled=move || text.with(|t| t.trim().is_empty())
                on:click=move |_| reply(PersonReply::Work { output: text.get_untracked() })>"Submit"</button>
        </div>
    }
    .into_any()
}

fn judge(
    title: String,
    output: String,
    labels: Vec<String>,
    draft: Draft,
    reply: impl Fn(PersonReply) + Copy + 'static,
) -> AnyView {
    let verdicts = draft.verdicts;
    let rows = labels.into_iter().enumerate().map(|(i, label)| {
        let pick = move |yes: bool| {
            verdicts.update(|v| {
                if let Some(x) = v.get_mut(i) {
                    *x = Some(yes)
                }
            })
        };
        view! {
            <fieldset class="verdict">
                <legend>{label}</legend>
                <label class="check" for=format!("judge-{i}-yes")>
                    <input type="radio" name=format!("judge-{i}") id=format!("judge-{i}-yes")
                        data-focus=(i == 0).then_some("") on:change=move |_| pick(true) />"YES"
                </label>
                <label class="check" for=format!("judge-{i}-no")>
                    <input type="radio" name=format!("judge-{i}") id=format!("judge-{i}-no")
                        on:change=move |_| pick(false) />"NO"
                </label>
            </fieldset>
        }
    });
    view! {
        <h2 id="ask-title">{format!("Judge: {title}")}</h2>
        <p class="hint">"The step's output:"</p>
        <pre id="ask-output" class="run-text">{output}</pre>
        <p>"Does each condition hold?"</p>
        {rows.collect_view()}
        <div class="buttons">
            <button type="button" id="ask-submit" class="primary ask-primary"
                disabled=move || verdicts.with(|v| v.iter().any(Option::is_none))
                on:click=move |_| {
                    let v = verdicts.get_untracked().into_iter().map(|x| x.unwrap_or(false)).collect();
                    reply(PersonReply::Judge { verdicts: v });
                }>"Submit"</button>
        </div>
    }
    .into_any()
}

fn human(
    node: String,
    question: String,
    choices: Vec<String>,
    draft: Draft,
    reply: impl Fn(PersonReply) + Copy + 'static,
) -> AnyView {
    let Draft { text, choice, .. } = draft;
    let has_choices = !choices.is_empty();
    let answer = move |approved: bool| PersonReply::Human {
        approved,
        note: text.get_untracked(),
        choice: choice.get_untracked(),
    };
    let options = choices.into_iter().enumerate().map(|(i, c)| {
        let value = c.clone();
        view! {
            <label class="check" for=format!("human-choice-{i}")>
                <input type="radio" name="human-choice" id=format!("human-choice-{i}")
                    data-focus=(i == 0).then_some("") on:change=move |_| choice.set(Some(value.clone())) />{c}
            </label>
        }
    });
    view! {
        <h2 id="ask-title">{format!("Decide: {node}")}</h2>
        <p id="ask-question">{question}</p>
        {options.collect_view()}
        <label for="human-note">"Note (kept in the trace)"</label>
        <textarea id="human-note" rows="3" data-focus=(!has_choices).then_some("") prop:value=move || text.get()
            on:input=move |ev| text.set(event_target_value(&ev))></textarea>
        <div class="buttons">
            <button type="button" id="human-reject" class="danger" on:click=move |_| reply(answer(false))>"Reject"</button>
            <button type="button" id="human-approve" class="primary ask-primary"
                disabled=move || has_choices && choice.with(Option::is_none)
                on:click=move |_| reply(answer(true))>
                {if has_choices { "Take this way" } else { "Approve" }}</button>
        </div>
    }
    .into_any()
}

fn breakpoint(
    title: String,
    draft: Draft,
    reply: impl Fn(PersonReply) + Copy + 'static,
) -> AnyView {
    let text = draft.text;
    view! {
        <h2 id="ask-title">{format!("Breakpoint after: {title}")}</h2>
        <p class="hint">"Read or change the output; the run judges its edges once you continue."</p>
        <label for="breakpoint-output">"Output"</label>
        <textarea id="breakpoint-output" data-focus="" rows="10" prop:value=move || text.get()
            on:input=move |ev| text.set(event_target_value(&ev))></textarea>
        <div class="buttons">
            <button type="button" id="breakpoint-continue" class="primary ask-primary"
                on:click=move |_| reply(PersonReply::Continue { output: text.get_untracked() })>"Continue"</button>
        </div>
    }
    .into_any()
}
