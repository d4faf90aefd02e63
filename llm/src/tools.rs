//! The tools a node may offer the model: their names, JSON schemas, which
//! of them a node gets, and the path rules every implementation shares.
//! Running them is the runner's business (files natively, the vault's
//! directory handle and `fetch` in the browser).

use serde_json::{json, Value};

/// Every tool the runners implement.
pub const TOOLS: &[&str] = &["list_notes", "read_note", "write_note", "fetch_url"];

/// Tools that change something; never offered where the node is review-only.
pub fn is_editing(name: &str) -> bool {
    name == "write_note"
}

/// Split a node's declared tools into what is offered and what no runner has.
/// A node is offered only tools it declares.
pub fn offer(declared: &[String], review_only: bool) -> (Vec<String>, Vec<String>) {
    let mut offered = Vec::new();
    let mut missing = Vec::new();
    for name in declared {
        if !TOOLS.contains(&name.as_str()) {
            missing.push(name.clone());
        } else if offered.contains(name) || (review_only && is_editing(name)) {
            continue;
        } else {
            offered.push(name.clone());
        }
    }
    (offered, missing)
}

/// The OpenAI function schema of a tool.
pub fn schema(name: &str) -> Value {
    let (description, params) = match name {
        "list_notes" => (
            "List the vault's notes (vault-relative paths).",
            json!({"type": "object", "properties": {}}),
        ),
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

/// The arguments of a call, `Null` when the model wrote no valid JSON.
pub fn arguments(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// A vault-relative `.md` path that cannot leave the vault or enter a
/// dot-folder; backslashes become slashes.
pub fn safe_path(path: Option<&str>) -> Result<String, String> {
    let path = path.ok_or("missing path")?;
    let norm = path.replace('\\', "/");
    let clean = !norm.is_empty()
        && !norm.starts_with('/')
        && !norm.contains(':')
        && norm
            .split('/')
            .all(|part| !part.is_empty() && !part.starts_with('.'));
    if !clean || !norm.ends_with(".md") {
        return Err(format!("{path} is not a vault-relative .md path"));
    }
    Ok(norm)
}

/// Whether a tool may write `path`: never a plan's own note, never the run's
/// trace folder. Where the file system ignores case (`case_insensitive`),
/// names are compared so too: `START.md` is then the note `start.md`.
pub fn writable(path: &str, plan_notes: &[String], case_insensitive: bool) -> Result<(), String> {
    let same = |a: &str, b: &str| {
        if case_insensitive {
            a.to_lowercase() == b.to_lowercase()
        } else {
            a == b
        }
    };
    let trace = "00_plan-trace/";
    let in_trace = path
        .get(..trace.len())
        .is_some_and(|head| same(head, trace));
    if plan_notes.iter().any(|n| same(n, path)) || in_trace {
        return Err(format!(
            "{path} belongs to the plan or its trace and cannot be written by a tool"
        ));
    }
    Ok(())
}

/// An http(s) URL for `fetch_url`.
pub fn fetchable(url: &str) -> Result<&str, String> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url)
    } else {
        Err(format!("{url} is not an http(s) URL"))
    }
}

/// The most characters of a fetched page handed back to the model.
pub const FETCH_LIMIT_CHARS: usize = 20_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_offered_only_what_it_declares_and_review_only_nodes_nothing_that_edits() {
        let declared = vec![
            "read_note".to_string(),
            "write_note".into(),
            "send_email".into(),
            "read_note".into(),
        ];
        assert_eq!(
            offer(&declared, false),
            (
                vec!["read_note".into(), "write_note".into()],
                vec!["send_email".into()]
            )
        );
        assert_eq!(
            offer(&declared, true),
            (vec!["read_note".into()], vec!["send_email".into()])
        );
        assert_eq!(offer(&[], false), (vec![], vec![]));
        for name in TOOLS {
            assert_eq!(schema(name)["function"]["name"], *name);
        }
    }

    #[test]
    fn paths_cannot_escape_the_vault() {
        for bad in [
            "../x.md",
            "/etc/x.md",
            ".obsidian/x.md",
            "a/../../x.md",
            "a/b.txt",
            "a//b.md",
            "C:/x.md",
            "a\\..\\x.md",
            "",
        ] {
            assert!(safe_path(Some(bad)).is_err(), "{bad}");
        }
        assert!(safe_path(None).is_err());
        assert_eq!(safe_path(Some("a/b.md")).unwrap(), "a/b.md");
        assert_eq!(safe_path(Some("a\\b.md")).unwrap(), "a/b.md");
    }

    #[test]
    fn the_plan_and_its_trace_are_not_writable() {
        let notes = vec!["draft.md".to_string()];
        assert!(writable("draft.md", &notes, false).is_err());
        assert!(writable("00_plan-trace/trace.md", &notes, false).is_err());
        assert!(writable("ideas/new.md", &notes, false).is_ok());
        // A case-sensitive file system holds DRAFT.md beside draft.md; one
        // that ignores case would overwrite the plan's note.
        assert!(writable("DRAFT.md", &notes, false).is_ok());
        assert!(writable("DRAFT.md", &notes, true).is_err());
        assert!(writable("00_PLAN-TRACE/x.md", &notes, true).is_err());
        assert!(writable("Ideas/New.md", &notes, true).is_ok());
        assert!(fetchable("file:///etc/passwd").is_err());
        assert!(fetchable("https://example.org").is_ok());
    }
}
