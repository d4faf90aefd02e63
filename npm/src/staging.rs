//! Where the notes of a vault land in wasm memory before they are parsed.
//!
//! The JavaScript wrapper asks for room (`stageNotes`), writes every path and
//! text as UTF-8 straight into it through a view of the wasm memory, then
//! calls `parseVaultStaged` / `VaultCore.fromStaged` with the byte lengths.
//! Encoding directly into wasm memory saves the intermediate buffer and the
//! copy across the boundary, which cost as much as parsing the notes did.
//! The room is kept for the next call (wasm memory never shrinks anyway).

use crate::error::BindingError;
use crate::types::unpack_files;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

thread_local! {
    static STAGED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Make room for `capacity` bytes of packed notes and return their address
/// in wasm memory. Bytes already written below the old capacity are kept,
/// so the wrapper can grow the room mid-way (a note longer in UTF-8 than
/// estimated) and go on writing; the address may change.
#[wasm_bindgen(js_name = stageNotes, skip_typescript)]
pub fn stage_notes(capacity: usize) -> *mut u8 {
    STAGED.with_borrow_mut(|staged| {
        if staged.len() < capacity {
            // Zeroed memory from the allocator, not `resize`: a block this
            // large comes fresh from `memory.grow`, zero already, so nothing
            // passes over it. `resize` wrote every byte, ~40 ms for the
            // 12 MB bench vault on a first call (before the engine has
            // optimised the loop), the call a plugin makes on vault open.
            let mut grown = vec![0; capacity];
            grown[..staged.len()].copy_from_slice(staged);
            *staged = grown;
        }
        staged.as_mut_ptr()
    })
}

/// The wasm memory, for the wrapper's view of the staged bytes.
#[wasm_bindgen(js_name = wasmMemory, skip_typescript)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// Run `read` on the first `used` staged bytes unpacked into `(path, text)`
/// pairs (see [`unpack_files`]).
pub fn with_staged_files<T>(
    used: usize,
    lengths: &[u32],
    read: impl FnOnce(Vec<(&str, &str)>) -> T,
) -> Result<T, BindingError> {
    STAGED.with_borrow(|staged| {
        let bytes = staged
            .get(..used)
            .ok_or_else(|| BindingError::InvalidArgument {
                name: "files",
                reason: "the packed notes are longer than the room staged for them".to_owned(),
            })?;
        Ok(read(unpack_files(bytes, lengths)?))
    })
}

// The test writes into the staged room as JavaScript does, through a raw pointer.
#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;

    #[test]
    fn staged_bytes_survive_growth_and_unpack() {
        let notes = b"b.md# Ba.md# A";
        let at = stage_notes(4);
        // SAFETY: `stage_notes` made 4 bytes of room at `at`.
        unsafe { std::ptr::copy_nonoverlapping(notes.as_ptr(), at, 4) };
        let at = stage_notes(notes.len());
        // SAFETY: the room is now `notes.len()` bytes; the first 4 were kept.
        unsafe { std::ptr::copy_nonoverlapping(notes[4..].as_ptr(), at.add(4), notes.len() - 4) };
        let files = with_staged_files(notes.len(), &[4, 3, 4, 3], |files| {
            files
                .iter()
                .map(|(p, t)| format!("{p}={t}"))
                .collect::<Vec<_>>()
        })
        .unwrap();
        assert_eq!(files, ["a.md=# A", "b.md=# B"]);
        let too_long = with_staged_files(notes.len() + 10_000, &[], |_| ()).unwrap_err();
        assert_eq!(too_long.code(), "invalid-argument");
    }
}
