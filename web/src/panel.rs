//! The side panel: the selected node's knobs and body, or the selected
//! edge's label; and the live diagnostics list (click one to focus its node).

use crate::canvas_keys::delete_selected;
use crate::commands;
use crate::state::{AppState, Dialog};
use leptos::prelude::*;
use planvault_core::vault::edit::KnobValue;
use planvault_core::{Code, NodeKind, Severity};

/// What the panel shows for one node, read from the doc.
#[derive(Debug, Clone, PartialEq)]
struct NodeFacts {
    index: usize,
    id: String,
    file: String,
    title: String,
    start: bool,
    /// A `type: human` note: a person decides at it.
    human: bool,
    status: String,
    tools: String,
    role: String,
    max_visits: u32,
    body: String,
    outgoing: Vec<(usize, String)>,
}

fn node_facts(state: AppState) -> Option<NodeFacts> {
    let selection = state.selection.get();
    state.open.with(|o| {
        let o = o.as_ref()?;
        let nodes = selection.node_indices(&o.doc);
        let [index] = nodes.as_slice() else {
            return None;
        };
        let index = *index;
        let node = &o.doc.checked.plan.nodes[index];
        let plan = &o.doc.checked.plan;
        Some(NodeFacts {
            index,
            id: node.id.clone(),
            file: o.doc.file_of(index).unwrap_or_default().to_string(),
            title: node.title.clone(),
            start: node.kind == NodeKind::Start,
            human: node.kind == NodeKind::Human,
            status: node.status.as_str().to_string(),
            tools: node.tools.join(", "),
            role: node.role.clone().unwrap_or_default(),
            max_visits: node.max_visits,
            body: commands::body_of(&o.doc, index).unwrap_or_default(),
            outgoing: plan
                .outgoing_indexed(index)
                .map(|(i, e)| {
                    let to = e.to.map_or(format!("{} (missing)", e.target), |t| {
                        plan.nodes[t].id.clone()
                    });
                    (
                        i,
                        match &e.label {
                            Some(l) => format!("{l} → {to}"),
                            None => format!("→ {to}"),
                        },
                    )
                })
                .collect(),
        })
    })
}

/// The selected edge: its index, ends, label and whether it is conditional.
type EdgeFacts = (usize, String, String, String, bool);

fn edge_facts(state: AppState) -> Option<EdgeFacts> {
    let selection = state.selection.get();
    state.open.with(|o| {
        let o = o.as_ref()?;
        let e = selection.edge_index(&o.doc)?;
        let edge = &o.doc.checked.plan.edges[e];
        let plan = &o.doc.checked.plan;
        Some((
            e,
            plan.nodes[edge.from].id.clone(),
            edge.to
                .map_or(edge.target.clone(), |t| plan.nodes[t].id.clone()),
            edge.label.clone().unwrap_or_default(),
            edge.is_conditional(),
        ))
    })
}

#[component]
pub fn SidePanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let facts = Memo::new(move |_| node_facts(state));
    let edge = Memo::new(move |_| edge_facts(state));
    // The node panel is built again only when another node is selected: a
    // status the run writes redraws its facts, not the text being typed.
    let node_id = Memo::new(move |_| facts.with(|f| f.as_ref().map(|f| f.id.clone())));
    view! {
        <aside class="side" aria-label="Selection">
            {move || node_id.get().map(|_| view! { <NodePanel facts=facts /> })}
            // Built again whenever the edge or its label changes, so its
            // draft starts from what the note says.
            {move || edge.get().map(|e| view! { <EdgePanel edge=e /> })}
            <Show when=move || facts.with(Option::is_none) && edge.with(Option::is_none)>
                <p class="hint" id="panel-empty">"Select a card or an edge to edit it. The ? on the canvas explains the drawing."</p>
            </Show>
            <Diagnostics />
        </aside>
    }
}

/// Sets one knob of node `index` (`None` removes it).
fn set_knob(state: AppState, index: usize, key: &'static str, value: Option<KnobValue>) {
    state.run(|doc| commands::set_knob(doc, index, key, value));
}

/// The selected node (`facts`, never `None` while this panel is shown):
/// its knobs, its text and its outgoing edges.
#[component]
fn NodePanel(facts: Memo<Option<NodeFacts>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let read = move |field: fn(&NodeFacts) -> String| {
        facts.with(|f| f.as_ref().map(field).unwrap_or_default())
    };
    let body = Memo::new(move |_| facts.with(|f| f.as_ref().map(|f| f.body.clone())));
    // Typing not yet saved, by node id: kept when the note changes under it.
    let typed: RwSignal<Option<(String, String)>> = RwSignal::new(None);
    let outgoing =
        move || facts.with(|f| f.as_ref().map(|f| f.outgoing.clone()).unwrap_or_default());
    let rename = move |_| {
        let current = facts.with_untracked(|f| {
            f.as_ref()
                .map(|f| (f.id.clone(), crate::doc::basename(&f.id).to_string()))
        });
        if let Some((node, current)) = current {
            state.dialog.set(Some(Dialog::Rename { node, current }));
        }
    };
    view! {
        <section aria-labelledby="panel-title" class="panel-node">
            <h2 id="panel-title">{move || read(|f| f.title.clone())}</h2>
            <p class="file">{move || read(|f| f.file.clone())}</p>
            <div class="row">
                <button on:click=rename>"Rename…"</button>
                <button class="danger" on:click=move |_| delete_selected(state)>"Delete…"</button>
            </div>
            {move || facts.get().map(|f| view! {
                <crate::note_editor::UnreadableKnobs index=f.index />
                <NodeKnobs f=f />
            })}
            // Built again only when the note's text changes (on disk, or by
            // an edit of its edges).
            {move || body.get().map(|text| view! { <BodyEditor facts=facts text=text typed=typed /> })}
            <h3>"Edges out"</h3>
            <ul class="edges">
                <For each=outgoing key=crate::run_panel::row_key let:((e, text))>
                    <li><button class="link" on:click=move |_| {
                        let key = state.with_doc(|d| crate::state::Selection::edge_key(d, e)).flatten();
                        state.selection.update(|s| { s.edge = key; s.nodes.clear(); });
                    }>{text}</button></li>
                </For>
            </ul>
        </section>
    }
}

/// The note's text after its frontmatter, `text` as read. What is typed
/// stays until it is saved or discarded: when the note's text changes under
/// it (an edge edited, a change on disk), the typing is kept and the person
/// chooses, since saving it would replace that change.
#[component]
fn BodyEditor(
    facts: Memo<Option<NodeFacts>>,
    text: String,
    typed: RwSignal<Option<(String, String)>>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    // By id: a note appearing on disk while the person types moves this
    // note's place in the plan, and the text would be saved into another.
    let id = StoredValue::new(facts.with_untracked(|f| f.as_ref().map(|f| f.id.clone())));
    let kept = typed.with_untracked(|t| {
        t.as_ref()
            .filter(|(node, _)| id.with_value(|id| id.as_ref() == Some(node)))
            .map(|(_, draft)| draft.clone())
    });
    let stale = RwSignal::new(kept.as_ref().is_some_and(|draft| *draft != text));
    let draft = RwSignal::new(kept.unwrap_or_else(|| text.clone()));
    let save = move |_| {
        let Some(id) = id.get_value() else {
            return;
        };
        let text = draft.get_untracked();
        typed.set(None);
        stale.set(false);
        state.run_on(&[&id], |doc, at| commands::set_body(doc, at[0], &text));
    };
    let note = StoredValue::new(text);
    let discard = move |_| {
        draft.set(note.get_value());
        typed.set(None);
        stale.set(false);
    };
    view! {
        <label for="node-body">"Note text (after the frontmatter)"</label>
        <textarea id="node-body" rows="14" prop:value=move || draft.get()
            on:input=move |ev| {
                let value = event_target_value(&ev);
                if let Some(id) = id.get_value() {
                    typed.set(Some((id, value.clone())));
                }
                draft.set(value);
            }></textarea>
        <Show when=move || stale.get()>
            <p id="node-body-stale" class="notice">
                "The note changed since you typed this. Your text is kept here: saving it replaces the note's text, that change included; Discard takes the note as it is now."
            </p>
            <button id="node-body-discard" on:click=discard>"Discard my text"</button>
        </Show>
        <button class="primary" on:click=save>"Save note text"</button>
    }
}

/// A node's knobs: type, status, breakpoint, tools, role, max visits
/// (hidden while its frontmatter cannot be read).
#[component]
fn NodeKnobs(f: NodeFacts) -> impl IntoView {
    let state = expect_context::<AppState>();
    let index = f.index;
    let knob =
        move |key: &'static str, value: Option<KnobValue>| set_knob(state, index, key, value);
    let unreadable = move || crate::note_editor::knobs_unreadable(state, index);
    view! {
        <div class="knobs" hidden=unreadable>
        <label for="knob-type">"Type"</label>
        <select id="knob-type" on:change=move |ev| {
            let v = event_target_value(&ev);
            knob("type", Some(KnobValue::Text(v)));
        }>
            <option value="step" selected=!f.start && !f.human>"step"</option>
            <option value="start" selected=f.start>"start"</option>
            <option value="human" selected=f.human>"human (a person decides)"</option>
        </select>
        <label for="knob-status">"Status"</label>
        <select id="knob-status" on:change=move |ev| {
            knob("status", Some(KnobValue::Text(event_target_value(&ev))));
        }>
            {["pending", "active", "done", "failed"]
                .into_iter()
                .map(|s| view! { <option value=s selected=f.status == s>{s}</option> })
                .collect_view()}
        </select>
        </div>
        <label class="check" for="knob-breakpoint">
            <input type="checkbox" id="knob-breakpoint"
                prop:checked={
                    let id = f.id.clone();
                    move || state.run.breakpoints.with(|b| b.contains(&id))
                }
                on:change={
                    let id = f.id.clone();
                    move |_| state.run.toggle_breakpoint(&id)
                } />
            "Breakpoint: pause the run after this node's work"
        </label>
        <div class="knobs" hidden=unreadable>
        <label for="knob-tools">"Tools (comma-separated)"</label>
        <input id="knob-tools" type="text" value=f.tools.clone() on:change=move |ev| {
            let v = event_target_value(&ev);
            let tools: Vec<String> = v
                .split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect();
            knob("tools", (!tools.is_empty()).then_some(KnobValue::List(tools)));
        } />
        <label for="knob-role">"Role"</label>
        <input id="knob-role" type="text" value=f.role.clone() on:change=move |ev| {
            let v = event_target_value(&ev).trim().to_string();
            knob("role", (!v.is_empty()).then_some(KnobValue::Text(v)));
        } />
        <label for="knob-max-visits">"Max visits"</label>
        <input id="knob-max-visits" type="number" min="1" value=f.max_visits.to_string()
            on:change=move |ev| {
                match event_target_value(&ev).trim().parse::<u32>() {
                    Ok(n) if n > 0 => knob("max_visits", Some(KnobValue::Number(n))),
                    _ => state.message.set("Max visits must be a positive whole number".into()),
                }
            } />
        </div>
    }
}

/// The selected edge: its label, editable, and Delete.
#[component]
fn EdgePanel(edge: EdgeFacts) -> impl IntoView {
    let state = expect_context::<AppState>();
    let (e, from, to, label, conditional) = edge;
    let label = RwSignal::new(label);
    view! {
        <section aria-labelledby="panel-title" class="panel-edge">
            <h2 id="panel-title">{format!("Edge {from} → {to}")}</h2>
            <p>{if conditional { "Conditional: taken when its label holds." } else { "Unconditional: taken when no condition holds." }}</p>
            <label for="edge-label">"Label (empty = unconditional)"</label>
            <input id="edge-label" type="text" prop:value=move || label.get()
                on:input=move |ev| label.set(event_target_value(&ev)) />
            <div class="row">
                <button class="primary" on:click=move |_| {
                    let label = label.get_untracked();
                    state.run(|doc| commands::relabel_edge(doc, e, &label));
                }>"Save label"</button>
                <button class="danger" on:click=move |_| delete_selected(state)>"Delete edge"</button>
            </div>
            <p class="hint">"Drag the arrow head onto another card to point the edge elsewhere."</p>
        </section>
    }
}

/// One diagnostic as listed: error or not, its text, the node it is about,
/// whether its note's text is what needs fixing.
type DiagnosticRow = (bool, String, Option<usize>, bool);

fn diagnostic_rows(state: AppState) -> Vec<DiagnosticRow> {
    state.open.with(|o| {
        let Some(o) = o.as_ref() else {
            return Vec::new();
        };
        o.doc
            .checked
            .diagnostics
            .iter()
            .map(|d| {
                let node = d
                    .nodes
                    .first()
                    .and_then(|id| o.doc.node_index(id))
                    .or_else(|| {
                        d.file
                            .as_ref()
                            .and_then(|f| o.doc.node_index(f.trim_end_matches(".md")))
                    });
                let repair = matches!(d.code, Code::BadFrontmatter | Code::NestingTooDeep);
                (
                    d.severity == Severity::Error,
                    d.render_human(),
                    node,
                    repair,
                )
            })
            .collect()
    })
}

/// The live diagnostics: one keyed row each (click one to focus its node).
#[component]
fn Diagnostics() -> impl IntoView {
    let state = expect_context::<AppState>();
    let editing = expect_context::<crate::note_editor::NoteEditing>();
    let items = Memo::new(move |_| diagnostic_rows(state));
    let each = move || items.get().into_iter().enumerate();
    view! {
        <section class="diagnostics" aria-labelledby="diagnostics-title">
            <h2 id="diagnostics-title">
                {move || {
                    let (errors, all) = items.with(|l| (l.iter().filter(|d| d.0).count(), l.len()));
                    format!(
                        "Diagnostics: {}, {}",
                        count(errors, "error"),
                        count(all - errors, "warning")
                    )
                }}
            </h2>
            <ul id="diagnostics">
                <For each=each key=crate::run_panel::row_key let:((_, (error, text, node, repair)))>
                    <li class=if error { "error" } else { "warning" }>
                        <button class="link" disabled=node.is_none() on:click=move |_| {
                            if let Some(n) = node {
                                state.focus_node(n);
                                // A frontmatter problem opens the note's text to fix it.
                                if repair {
                                    editing.open(state, n);
                                }
                            }
                        }>{text}</button>
                    </li>
                </For>
            </ul>
        </section>
    }
}

/// "1 error", "0 errors", "2 warnings".
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
