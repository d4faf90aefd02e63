//! The bundled example vault, embedded at compile time (see `build.rs`).

use std::collections::BTreeMap;

include!(concat!(env!("OUT_DIR"), "/example_vault.rs"));

/// The example vault as the in-memory map `planvault_core` loads.
pub fn files() -> BTreeMap<String, String> {
    FILES
        .iter()
        .map(|(path, text)| (path.to_string(), text.to_string()))
        .collect()
}

/// The bundled notes a copy in progress still needs: those missing or
/// empty (a note is created empty and gets its text when its writer closes,
/// so a reload in between leaves it empty; no bundled note is empty).
/// Notes already there keep their text: a copy made before the completion
/// marker existed may hold the person's edits.
pub fn to_copy<'a>(
    bundled: &'a BTreeMap<String, String>,
    present: &BTreeMap<String, String>,
) -> Vec<&'a str> {
    bundled
        .keys()
        .filter(|path| present.get(*path).is_none_or(|text| text.is_empty()))
        .map(String::as_str)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_cut_off_is_finished_with_the_missing_and_empty_notes_only() {
        let bundled = files();
        assert!(bundled.len() >= 3 && bundled.values().all(|t| !t.is_empty()));
        let paths: Vec<&String> = bundled.keys().collect();
        let mut present = BTreeMap::new();
        present.insert(paths[0].clone(), "edited by the person".to_string());
        present.insert(paths[1].clone(), String::new());
        let expected: Vec<&str> = paths[1..].iter().map(|p| p.as_str()).collect();
        assert_eq!(to_copy(&bundled, &present), expected);
        assert_eq!(to_copy(&bundled, &bundled), Vec::<&str>::new());
        assert_eq!(to_copy(&bundled, &BTreeMap::new()).len(), bundled.len());
    }
}
