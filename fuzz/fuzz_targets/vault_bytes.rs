//! How the vault fuzz targets read arbitrary bytes as a vault: NUL
//! separates notes, each note's first line is its vault path (`.md` added
//! when missing), the rest its text.

use std::collections::BTreeMap;

/// Enough notes for links to resolve, clash and dangle; more only slows runs.
const MAX_NOTES: usize = 8;

pub fn vault(data: &[u8]) -> BTreeMap<String, String> {
    let text = String::from_utf8_lossy(data);
    let mut files = BTreeMap::new();
    for chunk in text.split('\0').take(MAX_NOTES) {
        let (path, note) = chunk.split_once('\n').unwrap_or((chunk, ""));
        let path = if path.to_ascii_lowercase().ends_with(".md") {
            path.to_string()
        } else {
            format!("{path}.md")
        };
        files.insert(path, note.to_string());
    }
    files
}
