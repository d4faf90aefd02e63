//! The order Obsidian's file explorer lists a vault in by default ("File
//! name (A to Z)"): in each folder its subfolders first, then its notes,
//! each by name as the browser's `Intl.Collator` compares them with
//! `numeric` on and base sensitivity ("Step 2" before "Step 10", case and
//! accents aside; Obsidian is a browser too). The list view, the grid of
//! loose notes and the overview's folders follow it, so a vault reads in
//! planvault in the order its owner sees in Obsidian.

use std::cmp::Ordering;

/// The indices of `paths` (vault-relative, with `.md`) in explorer order.
pub fn explorer_order(paths: &[&str]) -> Vec<usize> {
    order_of(paths, true)
}

/// The indices of folder `paths` (vault-relative) in explorer order: a
/// folder before what it holds, sibling folders by name.
pub fn folder_order(paths: &[&str]) -> Vec<usize> {
    order_of(paths, false)
}

/// `notes`: each path's last name is a note's, listed after the folders
/// beside it.
fn order_of(paths: &[&str], notes: bool) -> Vec<usize> {
    // Every distinct folder or note name, collated once.
    let mut names: Vec<&str> = paths.iter().flat_map(|p| names_in(p)).collect();
    names.sort_unstable();
    names.dedup();
    let ranks = collated_ranks(&names);
    let rank = |name: &str| names.binary_search(&name).map_or(u32::MAX, |i| ranks[i]);
    // Folder by folder: a folder before a note, then by name.
    let keys: Vec<Vec<(bool, u32)>> = paths
        .iter()
        .map(|path| {
            let last = names_in(path).count() - 1;
            names_in(path)
                .enumerate()
                .map(|(i, name)| (notes && i == last, rank(name)))
                .collect()
        })
        .collect();
    let mut order: Vec<usize> = (0..paths.len()).collect();
    order.sort_by(|&a, &b| keys[a].cmp(&keys[b]).then(paths[a].cmp(paths[b])));
    order
}

/// A path's folder names, then its note's name (the file's, less `.md`).
fn names_in(path: &str) -> impl Iterator<Item = &str> {
    let path = path.strip_suffix(".md").unwrap_or(path);
    path.split('/')
}

/// Per name (sorted by bytes, distinct), its place in collated order; names
/// the collator calls equal ("Note", "note") keep their byte order.
fn collated_ranks(names: &[&str]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(collator(names)); // stable: equal names keep byte order
    let mut ranks = vec![0; names.len()];
    for (rank, &i) in order.iter().enumerate() {
        ranks[i] = rank as u32;
    }
    ranks
}

/// Compares two of `names` by index, as `Intl.Collator` does.
#[cfg(target_arch = "wasm32")]
fn collator(names: &[&str]) -> impl FnMut(&usize, &usize) -> Ordering {
    use js_sys::{Array, Intl, Object, Reflect};
    use wasm_bindgen::JsValue;
    let options = Object::new();
    let _ = Reflect::set(&options, &"numeric".into(), &true.into());
    let _ = Reflect::set(&options, &"sensitivity".into(), &"base".into());
    let compare = Intl::Collator::new(&Array::new(), &options).compare();
    // Each name crosses into JS once; a comparison passes two handles.
    let strings: Vec<JsValue> = names.iter().map(|n| JsValue::from_str(n)).collect();
    move |&a, &b| {
        let sign = compare
            .call2(&JsValue::NULL, &strings[a], &strings[b])
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0);
        sign.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
    }
}

/// Natively (the unit tests; the app only runs in a browser) a stand-in:
/// lower case, digits by value. The collator itself is checked end to end
/// in Chromium (`tests/e2e/list-view.test.mjs`).
#[cfg(not(target_arch = "wasm32"))]
fn collator<'a>(names: &'a [&'a str]) -> impl FnMut(&usize, &usize) -> Ordering + 'a {
    fn key(name: &str) -> Vec<Result<u64, char>> {
        let mut key = Vec::new();
        let mut chars = name.chars().flat_map(char::to_lowercase).peekable();
        while let Some(c) = chars.next() {
            match c.to_digit(10) {
                Some(d) => {
                    let mut n = u64::from(d);
                    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
                        n = n.saturating_mul(10).saturating_add(u64::from(d));
                        chars.next();
                    }
                    key.push(Ok(n));
                }
                None => key.push(Err(c)),
            }
        }
        key
    }
    move |&a, &b| key(names[a]).cmp(&key(names[b]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed<'a>(paths: &[&'a str]) -> Vec<&'a str> {
        explorer_order(paths)
            .into_iter()
            .map(|i| paths[i])
            .collect()
    }

    #[test]
    fn folders_come_before_notes_in_every_folder_each_by_name() {
        let paths = [
            "plan/start.md",
            "plan/b/Zeta.md",
            "plan/a/x.md",
            "plan/Alpha.md",
            "plan/b/c/deep.md",
            "plan/b/alpha.md",
            "top.md",
        ];
        assert_eq!(
            listed(&paths),
            [
                "plan/a/x.md",
                "plan/b/c/deep.md",
                "plan/b/alpha.md",
                "plan/b/Zeta.md",
                "plan/Alpha.md",
                "plan/start.md",
                "top.md",
            ]
        );
    }

    #[test]
    fn numbers_in_names_go_by_value_and_a_folder_precedes_its_namesake_note() {
        let paths = ["Step 10.md", "Step 2.md", "Step 1.md", "Step 2/a.md"];
        assert_eq!(
            listed(&paths),
            ["Step 2/a.md", "Step 1.md", "Step 2.md", "Step 10.md"]
        );
    }

    #[test]
    fn a_folder_comes_before_the_folders_it_holds() {
        let paths = ["plans/Sprint 10", "plans", "plans/Sprint 2", "Archive"];
        let listed: Vec<&str> = folder_order(&paths).into_iter().map(|i| paths[i]).collect();
        assert_eq!(
            listed,
            ["Archive", "plans", "plans/Sprint 2", "plans/Sprint 10"]
        );
    }

    #[test]
    fn names_equal_but_for_case_keep_byte_order() {
        assert_eq!(listed(&["note.md", "Note.md"]), ["Note.md", "note.md"]);
        assert_eq!(explorer_order(&[]), Vec::<usize>::new());
    }
}
