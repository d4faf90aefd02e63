//! The list view: the plan as an ARIA tree beside the canvas, for screen
//! readers and keyboards. A node is an item holding its edges and its
//! diagnostics; one item is in the Tab order at a time (roving tabindex)
//! and the arrow keys move (the walk is [`crate::outline`]). Focusing an
//! item selects it on the canvas; selecting on the canvas moves the list's
//! place; edits and the run's statuses show as they happen (keyed `<For>`,
//! each row read from one memo by id, so a focused item keeps its element).

use crate::note_editor::NoteEditing;
use crate::outline::{self, Entry, Item, Move, Rows, RunMarks};
use crate::state::{AppState, Selection};
use leptos::prelude::*;
use std::collections::BTreeSet;
use wasm_bindgen::JsCast;

/// Whether the list is shown, which nodes are closed, which item has the
/// Tab stop (provided as context by the app).
#[derive(Clone, Copy)]
pub struct ListState {
    pub shown: RwSignal<bool>,
    closed: RwSignal<BTreeSet<String>>,
    current: RwSignal<Option<Item>>,
}

impl ListState {
    pub fn new() -> ListState {
        ListState {
            shown: RwSignal::new(false),
            closed: RwSignal::new(BTreeSet::new()),
            current: RwSignal::new(None),
        }
    }

    /// An item got focus: it is the Tab stop, and selected on the canvas.
    fn focused(&self, state: AppState, item: Item) {
        self.current.set(Some(item.clone()));
        if selected_item(state).as_ref() == Some(&item) {
            return;
        }
        let Some(Some(index)) = state.with_doc(|d| d.node_index(item.node())) else {
            return;
        };
        match item {
            Item::Edge(from, line) => state.selection.set(Selection {
                nodes: Vec::new(),
                edge: Some((from, line)),
                focus: None,
            }),
            _ => state.focus_node(index),
        }
    }
}

/// The canvas's selection as a list item (one node or an edge).
fn selected_item(state: AppState) -> Option<Item> {
    state
        .selection
        .with(|s| match (&s.edge, s.nodes.as_slice()) {
            (Some((from, line)), _) => Some(Item::Edge(from.clone(), *line)),
            (None, [one]) => Some(Item::Node(one.clone())),
            _ => None,
        })
}

/// The toolbar's button that shows and hides the list.
#[component]
pub fn ListToggle() -> impl IntoView {
    let list = expect_context::<ListState>();
    view! {
        <button id="list-toggle" aria-pressed=move || list.shown.get().to_string()
            aria-controls=move || list.shown.get().then_some("plan-list")
            on:click=move |_| list.shown.update(|s| *s = !*s)>"List"</button>
    }
}

fn focus_item(item: &Item) {
    if let Some(el) = document().get_element_by_id(&item.dom_id()) {
        if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
            let _ = el.focus();
        }
    }
}

/// Scrolls the list so `item` is in view (without taking focus).
fn reveal(item: &Item) {
    let (Some(el), Some(list)) = (
        document().get_element_by_id(&item.dom_id()),
        document().get_element_by_id("plan-list"),
    ) else {
        return;
    };
    let (r, c) = (
        el.get_bounding_client_rect(),
        list.get_bounding_client_rect(),
    );
    let by = if r.top() < c.top() {
        r.top() - c.top()
    } else if r.bottom() > c.bottom() {
        (r.bottom() - c.bottom()).min(r.top() - c.top())
    } else {
        return;
    };
    list.set_scroll_top(list.scroll_top() + by);
}

#[component]
pub fn PlanList() -> impl IntoView {
    let state = expect_context::<AppState>();
    let list = expect_context::<ListState>();
    let editing = expect_context::<NoteEditing>();
    let marks = Memo::new(move |_| {
        state.run.view.with(|v| RunMarks {
            active: v.active.clone().filter(|_| v.phase.live()),
            asking: v.ask.as_ref().map(|a| a.node.clone()),
            failed: v.failed.clone(),
        })
    });
    let rows = Memo::new(move |_| {
        let marks = marks.get();
        state.open.with(|o| {
            o.as_ref()
                .map(|o| outline::rows(&o.doc, &marks))
                .unwrap_or_default()
        })
    });
    let visible = Memo::new(move |_| rows.with(|r| list.closed.with(|c| outline::visible(r, c))));
    let stop = Memo::new(move |_| {
        let current = list.current.get();
        visible.with(|v| {
            current
                .filter(|c| v.contains(c))
                .or_else(|| v.first().cloned())
        })
    });
    // The canvas selected something: the list's place follows, in view.
    Effect::new(move |_| {
        if let Some(item) = selected_item(state) {
            let current = list.current.get_untracked();
            // A diagnostic selects its node: the place stays on it.
            let under = matches!((&current, &item), (Some(Item::Diagnostic(a, _)), Item::Node(b)) if a == b);
            if !under && current.as_ref() != Some(&item) {
                list.current.set(Some(item.clone()));
                request_animation_frame(move || reveal(&item));
            }
        }
    });
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let Some(current) = list
            .current
            .get_untracked()
            .or_else(|| stop.get_untracked())
        else {
            return;
        };
        let key = ev.key();
        if key == "Enter" || key == " " {
            if let Item::Diagnostic(id, n) = &current {
                let repair = rows.with_untracked(|r| {
                    r.get(id)
                        .and_then(|r| r.diagnostics.get(*n))
                        .is_some_and(|d| d.repair)
                });
                if let (true, Some(Some(i))) = (repair, state.with_doc(|d| d.node_index(id))) {
                    ev.prevent_default();
                    editing.open(state, i);
                }
            }
            return;
        }
        let step = rows.with_untracked(|r| {
            list.closed.with_untracked(|c| {
                visible.with_untracked(|v| outline::key_move(r, c, v, &current, &key))
            })
        });
        let Some(step) = step else { return };
        ev.prevent_default();
        match step {
            Move::Focus(item) => focus_item(&item),
            Move::Open(id) => list.closed.update(|c| {
                c.remove(&id);
            }),
            Move::Close(id) => list.closed.update(|c| {
                c.insert(id);
            }),
        }
    };
    view! {
        <section id="plan-list" class="plan-list" aria-labelledby="plan-list-title">
            <h2 id="plan-list-title">"Plan as a list"</h2>
            <p id="plan-list-help" class="hint">
                "Arrow keys move; Right and Left open and close a node; Enter on a frontmatter problem opens the note to fix it."
            </p>
            <ul role="tree" aria-labelledby="plan-list-title" aria-describedby="plan-list-help" aria-multiselectable="true"
                on:keydown=on_key>
                <For each=move || visible.get() key=Item::clone
                    children=move |item| view! { <TreeItem item=item rows=rows stop=stop /> } />
            </ul>
        </section>
    }
}

/// `aria-level`, which the view macro has no attribute for. The tree is
/// flat (a node's edges and diagnostics follow it, one level down), so no
/// item holds another's text and each is named by its own.
fn level(el: web_sys::Element, level: &'static str) {
    let _ = el.set_attribute("aria-level", level);
}

/// One item: a node (its title and summary), or an edge or a diagnostic
/// under it.
#[component]
fn TreeItem(item: Item, rows: Memo<Rows>, stop: Memo<Option<Item>>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let list = expect_context::<ListState>();
    let entry = Memo::new({
        let item = item.clone();
        move |_| rows.with(|r| r.entry(&item))
    });
    let field = move |f: fn(&Entry) -> String| {
        move || entry.with(|e| e.as_ref().map(f).unwrap_or_default())
    };
    let is_node = matches!(item, Item::Node(_));
    let expanded = {
        let id = item.node().to_string();
        move || {
            let branch = entry.with(|e| e.as_ref().is_some_and(|e| e.branch));
            branch.then(|| list.closed.with(|c| !c.contains(&id)).to_string())
        }
    };
    let selected = {
        let item = item.clone();
        move || {
            let on = match &item {
                Item::Node(id) => state.selection.with(|s| s.nodes.contains(id)),
                Item::Edge(..) => selected_item(state).as_ref() == Some(&item),
                Item::Diagnostic(..) => false,
            };
            on.to_string()
        }
    };
    let tab_stop = {
        let item = item.clone();
        move || {
            if stop.with(|s| s.as_ref() == Some(&item)) {
                "0"
            } else {
                "-1"
            }
        }
    };
    view! {
        <li role="treeitem" id=item.dom_id() use:level=if is_node { "1" } else { "2" } data-node=item.node().to_string()
            class=field(|e| e.class.to_string()) data-status=field(|e| e.status.to_string())
            aria-selected=selected tabindex=tab_stop aria-expanded=expanded
            on:focus=move |_| list.focused(state, item.clone())>
            <span class="list-title">{field(|e| e.text.clone())}</span>" "
            <span class="list-meta">{field(|e| e.meta.clone())}</span>
        </li>
    }
}
