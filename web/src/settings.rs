//! Run settings: where the work comes from (a person in manual mode, or
//! OpenAI-compatible endpoints per role), retries and budgets.
//!
//! Pure (tested natively). They are kept in this browser's localStorage,
//! API keys included, and nowhere else: `Debug` redacts keys, a base URL
//! carrying credentials is refused, and [`Settings::forget_keys`] wipes them.

use planvault_core::engine::Autonomy;
use planvault_protocol::{Endpoint, Endpoints, RetryPolicy, RunMode};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The localStorage key.
pub const STORAGE_KEY: &str = "planvault.run-settings.v1";

/// Manual or model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// A person answers each node's work and each judgment: needs nothing.
    #[default]
    Manual,
    Model,
}

/// One endpoint as typed into the form (empty strings: not set).
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EndpointForm {
    #[serde(default)]
    pub base_url: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub api_key: String,
}

impl std::fmt::Debug for EndpointForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointForm")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field(
                "api_key",
                &if self.api_key.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .finish()
    }
}

impl EndpointForm {
    pub fn is_empty(&self) -> bool {
        self.base_url.trim().is_empty() && self.model.trim().is_empty() && self.api_key.is_empty()
    }

    fn endpoint(&self, name: &str) -> Result<Endpoint, SettingsError> {
        let base = self.base_url.trim().trim_end_matches('/');
        let scheme_ok = base.starts_with("http://") || base.starts_with("https://");
        let rest = base.split_once("://").map_or("", |(_, r)| r);
        if !scheme_ok || rest.is_empty() {
            return Err(SettingsError::BadUrl {
                endpoint: name.into(),
                url: base.into(),
            });
        }
        // A key must travel as a header, never inside the URL.
        let authority = rest.split('/').next().unwrap_or_default();
        if authority.contains('@') || base.contains('?') || base.contains('#') {
            return Err(SettingsError::CredentialsInUrl {
                endpoint: name.into(),
            });
        }
        if self.model.trim().is_empty() {
            return Err(SettingsError::NoModel {
                endpoint: name.into(),
            });
        }
        let key = self.api_key.trim();
        Ok(Endpoint {
            base_url: base.to_string(),
            model: self.model.trim().to_string(),
            api_key: (!key.is_empty()).then(|| key.to_string()),
        })
    }
}

/// Why the settings cannot start a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("{endpoint}: the base URL must start with http:// or https:// (got “{url}”)")]
    BadUrl { endpoint: String, url: String },
    #[error("{endpoint}: put the API key in its own field, not in the base URL")]
    CredentialsInUrl { endpoint: String },
    #[error("{endpoint}: name the model")]
    NoModel { endpoint: String },
    #[error(
        "no endpoint for role “{role}” and no default endpoint: fill one in, or pick manual mode"
    )]
    NoEndpoint { role: String },
}

/// Everything in the settings panel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub source: Source,
    pub default: EndpointForm,
    /// Named roles (`role:` in notes).
    pub roles: BTreeMap<String, EndpointForm>,
    pub retry: RetryPolicy,
    pub max_steps: u32,
    /// Ask a person at `type: human` / `@human` nodes (else the run decides).
    pub ask_humans: bool,
    /// The most bytes one model request may carry (a vault's `[run]
    /// max_prompt_bytes` wins).
    pub max_prompt_bytes: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            source: Source::Manual,
            default: EndpointForm::default(),
            roles: BTreeMap::new(),
            retry: RetryPolicy::default(),
            max_steps: 100,
            ask_humans: true,
            max_prompt_bytes: 1_000_000,
        }
    }
}

impl Settings {
    /// What was stored (or the defaults: manual mode, nothing configured).
    pub fn load(stored: Option<&str>) -> Settings {
        stored
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Removes every API key.
    pub fn forget_keys(&mut self) {
        self.default.api_key.clear();
        for e in self.roles.values_mut() {
            e.api_key.clear();
        }
    }

    pub fn has_keys(&self) -> bool {
        !self.default.api_key.is_empty() || self.roles.values().any(|e| !e.api_key.is_empty())
    }

    /// Rows for the vault's roles, so each can be given an endpoint.
    pub fn with_roles<'a>(mut self, roles: impl IntoIterator<Item = &'a str>) -> Settings {
        for role in roles {
            self.roles.entry(role.to_string()).or_default();
        }
        self
    }

    /// The run mode to send, checked against the roles the plan uses.
    pub fn run_mode(&self, roles_used: &BTreeSet<String>) -> Result<RunMode, SettingsError> {
        if self.source == Source::Manual {
            return Ok(RunMode::Manual);
        }
        let default = if self.default.is_empty() {
            None
        } else {
            Some(self.default.endpoint("default endpoint")?)
        };
        let mut roles = BTreeMap::new();
        for (name, form) in &self.roles {
            if !form.is_empty() {
                roles.insert(name.clone(), form.endpoint(&format!("role “{name}”"))?);
            }
        }
        let endpoints = Endpoints { default, roles };
        // The plan's roles, plus a node without one ("" stands for it).
        for role in roles_used {
            let role = (!role.is_empty()).then_some(role.as_str());
            if endpoints.for_role(role).is_none() {
                return Err(SettingsError::NoEndpoint {
                    role: role.unwrap_or("(none)").to_string(),
                });
            }
        }
        Ok(RunMode::Model { endpoints })
    }

    pub fn autonomy(&self) -> Autonomy {
        if self.ask_humans {
            Autonomy::Ask
        } else {
            Autonomy::Full
        }
    }

    /// One line for the run panel: where the answers come from.
    pub fn summary(&self) -> String {
        match self.source {
            Source::Manual => "Manual mode: you answer each step and each judgment".into(),
            Source::Model => {
                let model =
                    |f: &EndpointForm| format!("{} at {}", f.model.trim(), f.base_url.trim());
                let mut parts = Vec::new();
                if !self.default.is_empty() {
                    parts.push(model(&self.default));
                }
                let named = self.roles.iter().filter(|(_, f)| !f.is_empty()).count();
                if named > 0 {
                    parts.push(format!("{named} role endpoint(s)"));
                }
                if parts.is_empty() {
                    "LLM endpoints: none configured yet".into()
                } else {
                    format!("LLM: {}", parts.join(" + "))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(url: &str, model: &str, key: &str) -> EndpointForm {
        EndpointForm {
            base_url: url.into(),
            model: model.into(),
            api_key: key.into(),
        }
    }

    fn used(roles: &[&str]) -> BTreeSet<String> {
        roles.iter().map(|r| r.to_string()).collect()
    }

    #[test]
    fn nothing_configured_means_manual_mode() {
        let s = Settings::load(None);
        assert_eq!(s.source, Source::Manual);
        assert_eq!(s.run_mode(&used(&["writer", ""])), Ok(RunMode::Manual));
        assert_eq!(Settings::load(Some("not json")), Settings::default());
        assert_eq!(s.autonomy(), Autonomy::Ask, "people are asked by default");
        // Settings stored before the prompt budget existed get its default.
        let old = Settings::load(Some(r#"{"source":"model","max_steps":7}"#));
        assert_eq!((old.max_steps, old.max_prompt_bytes), (7, 1_000_000));
    }

    #[test]
    fn roles_fall_back_to_the_default_endpoint() {
        let mut s = Settings {
            source: Source::Model,
            ..Settings::default()
        }
        .with_roles(["writer", "review"]);
        s.default = form("http://127.0.0.1:11434/v1/", "llama3", "");
        s.roles.insert(
            "review".into(),
            form("https://api.example.com/v1", "big", "sk-1"),
        );
        let RunMode::Model { endpoints } = s.run_mode(&used(&["writer", "review", ""])).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            endpoints.default.as_ref().unwrap().base_url,
            "http://127.0.0.1:11434/v1",
            "trailing / trimmed"
        );
        assert_eq!(endpoints.default.as_ref().unwrap().api_key, None);
        assert_eq!(endpoints.for_role(Some("writer")).unwrap().model, "llama3");
        assert_eq!(
            endpoints
                .for_role(Some("review"))
                .unwrap()
                .api_key
                .as_deref(),
            Some("sk-1")
        );
        assert!(
            !endpoints.roles.contains_key("writer"),
            "an empty row is not an endpoint"
        );
    }

    #[test]
    fn a_role_without_any_endpoint_is_refused_by_name() {
        let mut s = Settings {
            source: Source::Model,
            ..Settings::default()
        };
        s.roles
            .insert("review".into(), form("http://h/v1", "m", ""));
        assert_eq!(
            s.run_mode(&used(&["writer"])),
            Err(SettingsError::NoEndpoint {
                role: "writer".into()
            })
        );
    }

    #[test]
    fn bad_urls_and_keys_in_urls_are_refused() {
        let mut s = Settings {
            source: Source::Model,
            ..Settings::default()
        };
        s.default = form("127.0.0.1:8080", "m", "");
        assert!(matches!(
            s.run_mode(&used(&[])),
            Err(SettingsError::BadUrl { .. })
        ));
        s.default = form("https://user:sk-secret@api.example.com/v1", "m", "");
        assert!(matches!(
            s.run_mode(&used(&[])),
            Err(SettingsError::CredentialsInUrl { .. })
        ));
        s.default = form("https://api.example.com/v1?key=sk-secret", "m", "");
        assert!(matches!(
            s.run_mode(&used(&[])),
            Err(SettingsError::CredentialsInUrl { .. })
        ));
        s.default = form("https://api.example.com/v1", " ", "");
        assert!(matches!(
            s.run_mode(&used(&[])),
            Err(SettingsError::NoModel { .. })
        ));
    }

    #[test]
    fn keys_round_trip_through_storage_and_can_be_forgotten() {
        let mut s = Settings {
            source: Source::Model,
            ..Settings::default()
        };
        s.default = form("http://h/v1", "m", "sk-default");
        s.roles
            .insert("review".into(), form("http://h/v1", "m", "sk-review"));
        s.retry.attempts = 2;
        let stored = s.to_json();
        assert_eq!(Settings::load(Some(&stored)), s);
        assert!(s.has_keys());
        assert!(!format!("{s:?}").contains("sk-"), "Debug never shows a key");
        s.forget_keys();
        assert!(!s.has_keys());
        assert!(!s.to_json().contains("sk-"));
        assert_eq!(s.default.base_url, "http://h/v1", "only the keys go");
    }

    #[test]
    fn the_summary_says_where_answers_come_from() {
        let mut s = Settings::default();
        assert!(s.summary().starts_with("Manual mode"));
        s.source = Source::Model;
        s.default = form("http://h/v1", "m", "sk-x");
        assert_eq!(s.summary(), "LLM: m at http://h/v1");
        assert!(!s.summary().contains("sk-x"));
    }
}
