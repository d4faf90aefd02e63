//! The tools the native runner can offer a model at a node: only those the
//! node's `tools:` names (and, at a review-only node, none that edits).

use serde_json::{json, Value};
use std::path::{Component, Path};

/// Every tool this runner implements.
pub const NATIVE_TOOLS: &[&str] = &["list_notes", "read_note", "write_note", "fetch_url"];

/// Tools that change something; never offered where the node is review-only.
pub fn is_editing(name: &str) -> bool {
    name == "write_note"
}

/// Split a node's declared tools into what is offered and what this runner lacks.
pub fn offer(declared: &[String], review_only: bool) -> (Vec<String>, Vec<String>) {
    let mut offered = Vec::new();
    let mut missing = Vec::new();
    for name in declared {
        if !NATIVE_TOOLS.contains(&name.as_str()) {
            missing.push(name.clone());
        } else if !(review_only && is_editing(name)) {
            offered.push(name.clone());
        }
    }
    (offered, missing)
}

/// The OpenAI function schema of a tool.
pub fn schema(name: &str) -> Value {
    let (description, params) = match name {
        "list_notes" => ("List the vault's notes (vault-relative paths).", json!({"type": "object", "properties": {}})),
        "read_note" => (
            "Read one note of the vault.",
            json!({"type": "object", "properties": {"path": {"type": "string", "description": "vault-relative path, e.g. ideas/a.md"}}, "required": ["path"]}),
        ),
        "write_note" => (
            "Create or replace a note of the vault (not a plan step's own note).",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}),
        ),
        _ => (
            "Fetch a URL over HTTP(S) and return its text.",
            json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
        ),
    };
    json!({"type": "function", "function": {"name": name, "description": description, "parameters": params}})
}

/// Run a tool; failures come back as text for the model to read.
pub fn call(root: &Path, plan_notes: &[String], name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let result = match name {
        "list_notes" => list_notes(root),
        "read_note" => safe_path(args["path"].as_str()).and_then(|p| {
            std::fs::read_to_string(root.join(&p)).map_err(|e| format!("cannot read {p}: {e}"))
        }),
        "write_note" => safe_path(args["path"].as_str()).and_then(|p| {
            if plan_notes.contains(&p) || p.starts_with("00_plan-trace/") {
                return Err(format!("{p} belongs to the plan or its trace and cannot be written by a tool"));
            }
            let path = root.join(&p);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            std::fs::write(&path, args["content"].as_str().unwrap_or_default()).map_err(|e| format!("cannot write {p}: {e}"))?;
            Ok(format!("wrote {p}"))
        }),
        "fetch_url" => fetch(args["url"].as_str().unwrap_or_default()),
        other => Err(format!("tool {other} is not available here")),
    };
    result.unwrap_or_else(|e| format!("error: {e}"))
}

/// A vault-relative `.md` path that cannot leave the vault or enter a dot-folder.
fn safe_path(path: Option<&str>) -> Result<String, String> {
    let path = path.ok_or("missing path")?;
    let p = Path::new(path);
    let clean = p.components().all(|c| matches!(c, Component::Normal(s) if !s.to_string_lossy().starts_with('.')));
    if !clean || !path.ends_with(".md") {
        return Err(format!("{path} is not a vault-relative .md path"));
    }
    Ok(path.replace('\\', "/"))
}

fn list_notes(root: &Path) -> Result<String, String> {
    let files = crate::input::read_vault(root).map_err(|e| e.to_string())?;
    Ok(files.keys().cloned().collect::<Vec<_>>().join("\n"))
}

fn fetch(url: &str) -> Result<String, String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!("{url} is not an http(s) URL"));
    }
    let agent: ureq::Agent =
        ureq::Agent::config_builder().timeout_global(Some(std::time::Duration::from_secs(20))).build().into();
    let mut response = agent.get(url).call().map_err(|e| format!("{url}: {e}"))?;
    let text = response.body_mut().with_config().limit(1 << 20).read_to_string().map_err(|e| format!("{url}: {e}"))?;
    Ok(text.chars().take(20_000).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_only_node_is_offered_no_editing_tool_and_unknown_tools_are_reported() {
        let declared = vec!["read_note".to_string(), "write_note".into(), "send_email".into()];
        assert_eq!(offer(&declared, false), (vec!["read_note".into(), "write_note".into()], vec!["send_email".into()]));
        assert_eq!(offer(&declared, true), (vec!["read_note".into()], vec!["send_email".into()]));
    }

    #[test]
    fn paths_cannot_escape_the_vault() {
        assert!(safe_path(Some("../x.md")).is_err());
        assert!(safe_path(Some("/etc/x.md")).is_err());
        assert!(safe_path(Some(".obsidian/x.md")).is_err());
        assert!(safe_path(Some("a/b.txt")).is_err());
        assert_eq!(safe_path(Some("a/b.md")).unwrap(), "a/b.md");
    }
}
