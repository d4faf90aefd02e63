//! Light and dark: which one is shown, and the colours the canvas draws
//! with in each (the page's own colours are CSS custom properties in
//! `static/app.css`, switched by `<html data-theme>`).
//!
//! The theme follows the system's `prefers-color-scheme` until the person
//! picks the other one with the toolbar's toggle; the pick is kept in
//! localStorage only while it differs from the system's, so picking the
//! system's own theme again means "follow the system" again.

use std::cell::Cell;

/// Where the picked theme is kept in this browser.
pub const STORAGE_KEY: &str = "planvault.theme";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    #[default]
    Light,
    Dark,
}

impl Theme {
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    pub fn other(self) -> Theme {
        match self {
            Theme::Light => Theme::Dark,
            Theme::Dark => Theme::Light,
        }
    }

    /// The theme shown: the stored pick, else the system's.
    pub fn shown(stored: Option<&str>, system: Theme) -> Theme {
        match stored {
            Some("dark") => Theme::Dark,
            Some("light") => Theme::Light,
            _ => system,
        }
    }

    /// What to keep in storage once `self` is picked (`None`: forget the
    /// pick and follow the system).
    pub fn stored(self, system: Theme) -> Option<&'static str> {
        (self != system).then_some(self.as_str())
    }
}

/// Every colour `render.rs` draws with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    pub background: &'static str,
    pub card: &'static str,
    pub card_border: &'static str,
    pub text: &'static str,
    pub muted: &'static str,
    /// Selection, the edge handle, the minimap's view box.
    pub select: &'static str,
    pub edge: &'static str,
    pub conditional: &'static str,
    /// Dangling edges, error badges, a failed run's banner.
    pub flagged: &'static str,
    pub warning: &'static str,
    /// The ring round the node the run is at.
    pub active_ring: &'static str,
    /// The edge the run last took; a drop target while dragging.
    pub hop: &'static str,
    /// The ring round a node waiting for a person.
    pub asking: &'static str,
    pub breakpoint: &'static str,
    /// The status stripes: pending, active, done, failed.
    pub pending: &'static str,
    pub active: &'static str,
    pub done: &'static str,
    pub failed: &'static str,
    /// The visit count's box, and text on coloured badges.
    pub visits: &'static str,
    pub on_badge: &'static str,
    /// Label boxes on edges.
    pub label: &'static str,
    /// The run banner and the minimap, over the drawing.
    pub overlay: &'static str,
    pub overlay_border: &'static str,
    pub marquee: &'static str,
    /// Zoomed out, the regions of the folders the notes are in (two tints
    /// taking turns) and their outline.
    pub group_fill: [&'static str; 2],
    pub group_border: &'static str,
}

pub const LIGHT: Palette = Palette {
    background: "#f6f7f9",
    card: "#ffffff",
    card_border: "#c4cad3",
    text: "#111827",
    muted: "#4b5563",
    select: "#2563eb",
    edge: "#4b5563",
    conditional: "#7c3aed",
    flagged: "#dc2626",
    warning: "#d97706",
    active_ring: "#f97316",
    hop: "#16a34a",
    asking: "#9333ea",
    breakpoint: "#dc2626",
    pending: "#8a96a3",
    active: "#e09b00",
    done: "#2e9e5b",
    failed: "#d03a3a",
    visits: "#1e3a8a",
    on_badge: "#ffffff",
    label: "#ffffff",
    overlay: "rgba(255, 255, 255, 0.94)",
    overlay_border: "#9ca3af",
    marquee: "rgba(37, 99, 235, 0.08)",
    group_fill: ["rgba(37, 99, 235, 0.10)", "rgba(124, 58, 237, 0.10)"],
    group_border: "rgba(75, 85, 99, 0.45)",
};

pub const DARK: Palette = Palette {
    background: "#111418",
    card: "#1f242c",
    card_border: "#465061",
    text: "#e5e7eb",
    muted: "#a3acb9",
    select: "#60a5fa",
    edge: "#9ca3af",
    conditional: "#b197fc",
    flagged: "#f87171",
    warning: "#fbbf24",
    active_ring: "#fb923c",
    hop: "#4ade80",
    asking: "#d8b4fe",
    breakpoint: "#f87171",
    pending: "#7b8794",
    active: "#f5b83d",
    done: "#3fbf78",
    failed: "#ef5350",
    visits: "#2d4fb3",
    on_badge: "#ffffff",
    label: "#1f242c",
    overlay: "rgba(31, 36, 44, 0.94)",
    overlay_border: "#5b6575",
    marquee: "rgba(96, 165, 250, 0.14)",
    group_fill: ["rgba(96, 165, 250, 0.10)", "rgba(177, 151, 252, 0.10)"],
    group_border: "rgba(163, 172, 185, 0.35)",
};

impl Theme {
    pub fn palette(self) -> &'static Palette {
        match self {
            Theme::Light => &LIGHT,
            Theme::Dark => &DARK,
        }
    }
}

thread_local! {
    static SHOWN: Cell<Theme> = const { Cell::new(Theme::Light) };
}

/// Makes `theme` the one [`palette`] answers with (the app calls it when
/// the theme changes, then redraws).
pub fn set_shown(theme: Theme) {
    SHOWN.with(|t| t.set(theme));
}

/// The colours of the theme shown.
pub fn palette() -> &'static Palette {
    SHOWN.with(Cell::get).palette()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_theme_is_followed_until_the_other_one_is_picked() {
        assert_eq!(Theme::shown(None, Theme::Dark), Theme::Dark);
        assert_eq!(Theme::shown(Some("light"), Theme::Dark), Theme::Light);
        assert_eq!(Theme::shown(Some("dark"), Theme::Light), Theme::Dark);
        assert_eq!(Theme::shown(Some("purple"), Theme::Light), Theme::Light);
        // Picking the system's theme forgets the pick.
        assert_eq!(Theme::Dark.stored(Theme::Light), Some("dark"));
        assert_eq!(Theme::Light.stored(Theme::Light), None);
        assert_eq!(Theme::Light.other(), Theme::Dark);
    }

    #[test]
    fn the_palette_follows_the_theme_shown() {
        set_shown(Theme::Dark);
        assert_eq!(palette(), &DARK);
        set_shown(Theme::Light);
        assert_eq!(palette().background, "#f6f7f9");
        assert_ne!(LIGHT.background, DARK.background);
        assert_ne!(LIGHT.text, DARK.text);
    }
}
