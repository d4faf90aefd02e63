//! Repairing a note whose frontmatter cannot be read: the whole note's text
//! in an editor with the offending line marked (opened from its diagnostic,
//! the list view or the side panel), and the side panel's knob fields
//! saying they cannot be read instead of showing defaults. A save is one
//! checked change through [`AppState::submit`]: refused here when the note
//! changed since it was opened, refused by the writer when the disk did.

use crate::repair;
use crate::state::{AppState, Origin};
use leptos::html::{Pre, Textarea};
use leptos::prelude::*;

/// The note being repaired (provided as context by the app).
#[derive(Clone, Copy)]
pub struct NoteEditing {
    /// Its file, and its text when opened (or last saved).
    target: RwSignal<Option<(String, String)>>,
    text: RwSignal<String>,
    refused: RwSignal<Option<String>>,
}

impl NoteEditing {
    pub fn new() -> NoteEditing {
        NoteEditing {
            target: RwSignal::new(None),
            text: RwSignal::new(String::new()),
            refused: RwSignal::new(None),
        }
    }

    pub fn is_open(&self) -> bool {
        self.target.with(Option::is_some)
    }

    /// Opens node `index`'s note, as it is now, in the editor.
    pub fn open(&self, state: AppState, index: usize) {
        let Some(Some((file, text))) = state.with_doc(|d| {
            let file = d.file_of(index)?;
            Some((file.to_string(), d.files.get(file)?.clone()))
        }) else {
            return;
        };
        self.text.set(text.clone());
        self.refused.set(None);
        self.target.set(Some((file, text)));
    }

    fn close(&self) {
        self.target.set(None);
    }
}

/// Whether node `index`'s knob fields are replaced by [`UnreadableKnobs`].
pub fn knobs_unreadable(state: AppState, index: usize) -> bool {
    state.open.with(|o| {
        o.as_ref()
            .is_some_and(|o| repair::unreadable(&o.doc, index).is_some())
    })
}

/// The knobs of a note whose frontmatter cannot be read: each says so (or
/// its value, when only another one is wrong), with the way to fix it.
#[component]
pub fn UnreadableKnobs(index: usize) -> impl IntoView {
    let state = expect_context::<AppState>();
    let editing = expect_context::<NoteEditing>();
    move || {
        let knobs = state
            .open
            .with(|o| repair::knobs(&o.as_ref()?.doc, index))?;
        let knobs = knobs
            .into_iter()
            .map(|(name, text)| view! { <dt>{name}</dt><dd>{text}</dd> })
            .collect_view();
        Some(view! {
            <div id="knobs-unreadable" class="knobs-unreadable">
                <p>"The frontmatter cannot be read, so these are not shown as if they were set."</p>
                <dl>{knobs}</dl>
                <button id="fix-frontmatter" on:click=move |_| editing.open(state, index)>"Fix the frontmatter…"</button>
            </div>
        })
    }
}

/// The note's text with line `bad` (1-based) marked, for the layer drawn
/// under the text field.
fn marked(text: &str, bad: Option<u32>) -> impl IntoView {
    let lines: Vec<&str> = text.split('\n').collect();
    let bad = bad.map(|b| (b as usize).clamp(1, lines.len()) - 1);
    let (before, line, after) = match bad {
        Some(b) => (
            lines[..b]
                .iter()
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
            lines[b].to_string(),
            lines[b + 1..]
                .iter()
                .map(|l| format!("\n{l}"))
                .collect::<String>(),
        ),
        None => (text.to_string(), String::new(), String::new()),
    };
    // A trailing line break shows as an empty line in the field too.
    (
        before,
        view! { <mark class="bad-line">{line}</mark> },
        format!("{after} "),
    )
}

/// The repair editor: the whole note, the offending line marked.
#[component]
pub fn NoteEditor() -> impl IntoView {
    let state = expect_context::<AppState>();
    let editing = expect_context::<NoteEditing>();
    let field = NodeRef::<Textarea>::new();
    let under = NodeRef::<Pre>::new();
    let file = Memo::new(move |_| editing.target.with(|t| t.as_ref().map(|t| t.0.clone())));
    let problem = Memo::new(move |_| {
        let file = file.get()?;
        state
            .open
            .with(|o| repair::problem(&o.as_ref()?.doc, &file))
    });
    // Opened: the caret at the start of the offending line, in view.
    Effect::new(move |_| {
        let (Some(el), Some((line, _))) = (field.get(), problem.get_untracked()) else {
            return;
        };
        let text = editing.text.get_untracked();
        let start: usize = text
            .split('\n')
            .take(line as usize - 1)
            .map(|l| l.len() + 1)
            .sum();
        let at = text[..start.min(text.len())].encode_utf16().count() as u32;
        let _ = el.focus();
        let _ = el.set_selection_range(at, at);
        let lines = text.split('\n').count().max(1) as f64;
        let above = (f64::from(line) - 3.0).max(0.0);
        el.set_scroll_top(f64::from(el.scroll_height()) * above / lines);
    });
    let save = move || {
        let Some((path, opened)) = editing.target.get_untracked() else {
            return;
        };
        let text = editing.text.get_untracked();
        match state.with_doc(|d| repair::save(d, &path, &opened, &text)) {
            Some(Ok(None)) => {
                state.message.set(format!("{path} is unchanged"));
                editing.close();
            }
            Some(Ok(Some(change))) => {
                state.submit(change, Origin::Edit);
                editing.refused.set(None);
                let still = state.with_doc(|d| repair::problem(d, &path).is_some());
                if still == Some(true) {
                    // The plan was checked again: the next problem is marked.
                    editing.target.set(Some((path, text)));
                } else {
                    editing.close();
                    let node = state.with_doc(|d| {
                        (0..d.checked.plan.nodes.len())
                            .find(|&i| d.file_of(i) == Some(path.as_str()))
                    });
                    if let Some(Some(i)) = node {
                        state.focus_node(i);
                    }
                }
            }
            Some(Err(e)) => {
                state.message.set(format!("Not written: {e}"));
                editing.refused.set(Some(e.to_string()));
            }
            None => {}
        }
    };
    view! {
        {move || editing.is_open().then(|| view! {
            <div class="backdrop">
                <section id="note-editor" class="dialog wide note-editor" role="dialog" aria-modal="true"
                    aria-labelledby="note-editor-title"
                    on:keydown=move |ev| if ev.key() == "Escape" { ev.prevent_default(); editing.close() }>
                    <h2 id="note-editor-title">{move || format!("Edit {}", file.get().unwrap_or_default())}</h2>
                    <p id="note-editor-problem">
                        {move || match problem.get() {
                            Some((line, message)) => format!("Line {line}: {message}"),
                            None => "The frontmatter can be read.".to_string(),
                        }}
                    </p>
                    {move || editing.refused.get().map(|why| view! {
                        <p id="note-editor-refused" class="error" role="alert">{why}</p>
                    })}
                    <label for="note-editor-text">"The whole note, frontmatter included"</label>
                    <div class="note-editor-area">
                        <pre class="note-editor-under" aria-hidden="true" node_ref=under>
                            {move || editing.text.with(|t| marked(t, problem.get().map(|p| p.0)))}
                        </pre>
                        <textarea id="note-editor-text" node_ref=field wrap="off" spellcheck="false" rows="16"
                            aria-describedby="note-editor-problem"
                            prop:value=move || editing.text.get()
                            on:input=move |ev| editing.text.set(event_target_value(&ev))
                            on:scroll=move |_| {
                                if let (Some(f), Some(u)) = (field.get_untracked(), under.get_untracked()) {
                                    u.set_scroll_top(f.scroll_top());
                                    u.set_scroll_left(f.scroll_left());
                                }
                            }></textarea>
                    </div>
                    <div class="buttons">
                        <button type="button" on:click=move |_| editing.close()>"Cancel"</button>
                        <button type="button" id="note-editor-save" class="primary" on:click=move |_| save()>"Save"</button>
                    </div>
                </section>
            </div>
        })}
    }
}
