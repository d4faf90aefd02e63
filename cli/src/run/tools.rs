//! The tools the native runner can offer a model at a node: only those the
//! node's `tools:` names (and, at a review-only node, none that edits).

use std::path::Path;

use planvault_llm::tools::{arguments, fetchable, safe_path, writable, FETCH_LIMIT_CHARS, TOOLS};
pub use planvault_llm::tools::{offer, schema};

/// Every tool this runner implements.
pub const NATIVE_TOOLS: &[&str] = TOOLS;

/// Run a tool; failures come back as text for the model to read.
pub fn call(root: &Path, plan_notes: &[String], name: &str, args_text: &str) -> String {
    let args = arguments(args_text);
    let result = match name {
        "list_notes" => list_notes(root),
        "read_note" => safe_path(args["path"].as_str()).and_then(|p| {
            std::fs::read_to_string(root.join(&p)).map_err(|e| format!("cannot read {p}: {e}"))
        }),
        "write_note" => safe_path(args["path"].as_str()).and_then(|p| {
            writable(&p, plan_notes)?;
            let path = root.join(&p);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            std::fs::write(&path, args["content"].as_str().unwrap_or_default())
                .map_err(|e| format!("cannot write {p}: {e}"))?;
            Ok(format!("wrote {p}"))
        }),
        "fetch_url" => fetch(args["url"].as_str().unwrap_or_default()),
        other => Err(format!("tool {other} is not available here")),
    };
    result.unwrap_or_else(|e| format!("error: {e}"))
}

fn list_notes(root: &Path) -> Result<String, String> {
    let files = crate::input::read_vault(root).map_err(|e| e.to_string())?;
    Ok(files.keys().cloned().collect::<Vec<_>>().join("\n"))
}

fn fetch(url: &str) -> Result<String, String> {
    let url = fetchable(url)?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(20)))
        .build()
        .into();
    let mut response = agent.get(url).call().map_err(|e| format!("{url}: {e}"))?;
    let text = response
        .body_mut()
        .with_config()
        .limit(1 << 20)
        .read_to_string()
        .map_err(|e| format!("{url}: {e}"))?;
    Ok(text.chars().take(FETCH_LIMIT_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_writes_a_new_note_but_never_the_plan_or_outside_the_vault() {
        let dir = tempfile::tempdir().unwrap();
        let notes = vec!["draft.md".to_string()];
        assert_eq!(
            call(
                dir.path(),
                &notes,
                "write_note",
                r#"{"path":"ideas/a.md","content":"x"}"#
            ),
            "wrote ideas/a.md"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ideas/a.md")).unwrap(),
            "x"
        );
        assert!(call(
            dir.path(),
            &notes,
            "write_note",
            r#"{"path":"draft.md","content":"x"}"#
        )
        .starts_with("error:"));
        assert!(
            call(dir.path(), &notes, "read_note", r#"{"path":"../x.md"}"#).starts_with("error:")
        );
        assert_eq!(
            call(dir.path(), &notes, "read_note", r#"{"path":"ideas/a.md"}"#),
            "x"
        );
    }
}
