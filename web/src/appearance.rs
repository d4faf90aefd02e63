//! The theme in the page: `<html data-theme>` (which the stylesheet's
//! custom properties follow), the canvas's palette, the system's
//! `prefers-color-scheme` followed as it changes, and the toolbar's toggle.
//! The choice itself is [`crate::theme`].

use crate::theme::{self, Theme, STORAGE_KEY};
use leptos::prelude::*;
use wasm_bindgen::prelude::*;

/// The theme shown, provided as context (the canvas redraws on it).
#[derive(Clone, Copy)]
pub struct ThemeState {
    pub shown: RwSignal<Theme>,
    system: RwSignal<Theme>,
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn stored() -> Option<String> {
    storage()?.get_item(STORAGE_KEY).ok().flatten()
}

impl ThemeState {
    /// Reads the system's and the stored theme, shows it at once (before
    /// the first frame is drawn) and follows the system from then on.
    pub fn provide() -> ThemeState {
        let query = web_sys::window()
            .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten());
        let system_now = |q: &web_sys::MediaQueryList| {
            if q.matches() {
                Theme::Dark
            } else {
                Theme::Light
            }
        };
        let system = query.as_ref().map_or(Theme::Light, system_now);
        let state = ThemeState {
            shown: RwSignal::new(Theme::shown(stored().as_deref(), system)),
            system: RwSignal::new(system),
        };
        state.show(state.shown.get_untracked());
        if let Some(query) = query {
            let watched = query.clone();
            let on_change = Closure::<dyn FnMut()>::new(move || {
                let now = system_now(&watched);
                state.system.set(now);
                state.show(Theme::shown(stored().as_deref(), now));
            });
            let _ = query
                .add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref());
            on_change.forget();
        }
        provide_context(state);
        state
    }

    fn show(&self, theme: Theme) {
        theme::set_shown(theme);
        if let Some(root) = document().document_element() {
            let _ = root.set_attribute("data-theme", theme.as_str());
        }
        if self.shown.get_untracked() != theme {
            self.shown.set(theme);
        }
    }

    /// The other theme, kept in this browser while it is not the system's.
    pub fn toggle(&self) {
        let next = self.shown.get_untracked().other();
        if let Some(s) = storage() {
            let _ = match next.stored(self.system.get_untracked()) {
                Some(value) => s.set_item(STORAGE_KEY, value),
                None => s.remove_item(STORAGE_KEY),
            };
        }
        self.show(next);
    }
}

#[component]
pub fn ThemeToggle() -> impl IntoView {
    let Some(theme) = use_context::<ThemeState>() else {
        return ().into_any();
    };
    let dark = move || theme.shown.get() == Theme::Dark;
    view! {
        <button id="theme-toggle" aria-pressed=move || dark().to_string() aria-label="Dark theme"
            title="Dark theme (follows the system until you pick one)"
            on:click=move |_| theme.toggle()>"☾ Dark"</button>
    }
    .into_any()
}
