//! The vault on disk, from Rust: a folder handle (picked, restored from
//! IndexedDB, or in the origin-private file system) and the few operations
//! the app needs. Every write goes through [`VaultDir::apply`], which first
//! compares each file with the text the change expects and refuses the whole
//! change when any differs: a note edited elsewhere is never overwritten.

use crate::commands::{Change, FileChange};
pub use crate::doc::Reading;
use js_sys::{Array, Object, Uint8Array};
use planvault_core::vault::{too_large, Unread, NOTE_MAX_BYTES};
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/fs.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = readVault)]
    async fn read_vault(dir: &JsValue, progress: &JsValue, limit: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = readFile)]
    async fn read_file(
        dir: &JsValue,
        path: &str,
        exact: bool,
        limit: f64,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = writeFile)]
    async fn write_file(dir: &JsValue, path: &str, text: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = writeFile)]
    async fn write_file_bytes(
        dir: &JsValue,
        path: &str,
        bytes: &JsValue,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = removeFile)]
    async fn remove_file(dir: &JsValue, path: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = opfsFolder)]
    async fn opfs_folder(name: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = opfsClear)]
    async fn opfs_clear(name: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = pickerAvailable)]
    pub fn picker_available() -> bool;
    #[wasm_bindgen(catch, js_name = pickDirectory)]
    async fn pick_directory() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = droppedDirectory)]
    fn dropped_directory(event: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = handleName)]
    fn handle_name(dir: &JsValue) -> String;
    #[wasm_bindgen(catch, js_name = permission)]
    async fn permission_js(dir: &JsValue, ask: bool) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = saveHandle)]
    async fn save_handle(dir: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = loadHandle)]
    async fn load_handle() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = forgetHandle)]
    async fn forget_handle_js() -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = readFileList)]
    async fn read_file_list(files: &JsValue, limit: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = fileListFolder)]
    fn file_list_folder(files: &JsValue) -> String;
    #[wasm_bindgen(js_name = download)]
    fn download_js(name: &str, bytes: &Uint8Array, mime: &str);
}

/// What went wrong talking to the file system, as the browser said it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FsError {
    #[error("{0}")]
    Browser(String),
    #[error("changed outside planvault: {}", .0.join(", "))]
    Conflict(Vec<String>),
    /// A write failed partway and the files written before it could not all
    /// be put back: `left` still hold what the change wrote.
    #[error("{error}; not put back: {}", left.join(", "))]
    Partial { error: String, left: Vec<String> },
}

fn browser(e: JsValue) -> FsError {
    let text = js_sys::Reflect::get(&e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"));
    FsError::Browser(text)
}

/// The most bytes of a note the app reads ([`NOTE_MAX_BYTES`]; the app
/// reads no run's trace folder).
const LIMIT: f64 = NOTE_MAX_BYTES as f64;

/// A read's failure; a file too large to read is refused naming its size,
/// and never written (what a change is checked against).
fn read_error(path: &str, e: JsValue) -> FsError {
    let field = |name: &str| js_sys::Reflect::get(&e, &name.into()).ok();
    match field("size").and_then(|s| s.as_f64()) {
        Some(size)
            if field("name").and_then(|n| n.as_string()).as_deref() == Some("TooLargeError") =>
        {
            FsError::Browser(format!(
                "{path} {}; planvault does not write it",
                too_large(size as u64, NOTE_MAX_BYTES)
            ))
        }
        _ => browser(e),
    }
}

impl Reading {
    /// What `readVault` and `readFileList` give: `{ files, notUtf8,
    /// tooLarge }`.
    fn from_js(value: JsValue) -> Reading {
        let field = |name: &str| -> Object {
            js_sys::Reflect::get(&value, &name.into())
                .map(JsCast::unchecked_into)
                .unwrap_or_default()
        };
        let entries = |object: Object| {
            let pairs: Vec<(String, JsValue)> = Object::entries(&object)
                .iter()
                .filter_map(|pair| {
                    let pair: Array = pair.unchecked_into();
                    Some((pair.get(0).as_string()?, pair.get(1)))
                })
                .collect();
            pairs
        };
        Reading {
            files: entries(field("files"))
                .into_iter()
                .filter_map(|(path, text)| Some((path, text.as_string()?)))
                .collect(),
            unread: entries(field("notUtf8"))
                .into_iter()
                .filter_map(|(path, at)| Some((path, Unread::NotUtf8(at.as_f64()? as usize))))
                .chain(
                    entries(field("tooLarge"))
                        .into_iter()
                        .filter_map(|(path, size)| {
                            Some((path, Unread::TooLarge(size.as_f64()? as u64)))
                        }),
                )
                .collect(),
        }
    }
}

/// A vault folder the app can read and write.
#[derive(Clone, Debug)]
pub struct VaultDir {
    handle: JsValue,
}

/// The OPFS folder the bundled example lives in, edited like a real vault.
pub const EXAMPLE_FOLDER: &str = "example-vault";
/// Written in [`EXAMPLE_FOLDER`] once every bundled note is there (a
/// dot-file: never read as a note).
pub const EXAMPLE_COPIED: &str = ".example-copied";
/// The OPFS folder holding the working copy of a read-only opened folder.
pub const COPY_FOLDER: &str = "working-copy";

impl VaultDir {
    pub fn from_handle(handle: JsValue) -> VaultDir {
        VaultDir { handle }
    }

    pub fn handle(&self) -> &JsValue {
        &self.handle
    }

    pub fn name(&self) -> String {
        handle_name(&self.handle)
    }

    /// A folder in the origin-private file system.
    pub async fn private(name: &str) -> Result<VaultDir, FsError> {
        Ok(VaultDir {
            handle: opfs_folder(name).await.map_err(browser)?,
        })
    }

    /// Empties a private folder (a fresh working copy).
    pub async fn clear_private(name: &str) -> Result<(), FsError> {
        opfs_clear(name).await.map_err(browser).map(|_| ())
    }

    /// Every note and `plan.canvas`.
    pub async fn read_all(&self) -> Result<Reading, FsError> {
        Ok(Reading::from_js(
            read_vault(&self.handle, &JsValue::UNDEFINED, LIMIT)
                .await
                .map_err(browser)?,
        ))
    }

    /// [`VaultDir::read_all`], telling `progress` (files read, of how
    /// many) as it goes.
    pub async fn read_all_reporting(
        &self,
        progress: impl Fn(u32, u32) + 'static,
    ) -> Result<Reading, FsError> {
        let progress = Closure::<dyn Fn(u32, u32)>::new(progress);
        let read = read_vault(&self.handle, progress.as_ref(), LIMIT).await;
        Ok(Reading::from_js(read.map_err(browser)?))
    }

    /// The file's text (bytes that are not UTF-8 as U+FFFD), `None` when
    /// there is none.
    pub async fn read(&self, path: &str) -> Result<Option<String>, FsError> {
        Ok(read_file(&self.handle, path, false, LIMIT)
            .await
            .map_err(|e| read_error(path, e))?
            .as_string())
    }

    /// [`VaultDir::read`] of a file a change would write: an error for
    /// bytes that are not UTF-8, whose text is not the file's.
    async fn read_exact(&self, path: &str) -> Result<Option<String>, FsError> {
        Ok(read_file(&self.handle, path, true, LIMIT)
            .await
            .map_err(|e| read_error(path, e))?
            .as_string())
    }

    /// Writes bytes as they are (a note that is not UTF-8, copied).
    pub async fn write_bytes(&self, path: &str, bytes: &JsValue) -> Result<(), FsError> {
        write_file_bytes(&self.handle, path, bytes)
            .await
            .map_err(browser)
            .map(|_| ())
    }

    pub async fn write(&self, path: &str, text: &str) -> Result<(), FsError> {
        write_file(&self.handle, path, text)
            .await
            .map_err(browser)
            .map(|_| ())
    }

    /// Writes a change after checking every file still has the text the
    /// change was made from. On a mismatch nothing is written; when a write
    /// fails partway, what was written before it is put back, so a change
    /// lands whole or not at all ([`FsError::Partial`] names what could not
    /// be put back).
    pub async fn apply(&self, change: &Change) -> Result<(), FsError> {
        let mut conflicts = Vec::new();
        for file in &change.files {
            if self.read_exact(&file.path).await? != file.before {
                conflicts.push(file.path.clone());
            }
        }
        if !conflicts.is_empty() {
            return Err(FsError::Conflict(conflicts));
        }
        // New files first, removals last: an interrupted rename leaves both
        // copies rather than none.
        let mut files: Vec<_> = change.files.iter().collect();
        files.sort_by_key(|f| f.after.is_none());
        for (done, file) in files.iter().enumerate() {
            // Read again just before its write: a change of several notes
            // writes for a while, and a note saved outside since the check
            // above is never written over (the rest is put back).
            let changed = match self.read_exact(&file.path).await {
                Ok(now) if now == file.before => None,
                Ok(_) => Some(FsError::Conflict(vec![file.path.clone()])),
                Err(error) => Some(error),
            };
            let written = match changed {
                Some(error) => Err(error),
                None => self.put(&file.path, file.after.as_deref()).await,
            };
            if let Err(error) = written {
                let left = self.put_back(&files[..done]).await;
                return Err(match (error, left.is_empty()) {
                    (error, true) => error,
                    (error, false) => FsError::Partial {
                        error: error.to_string(),
                        left,
                    },
                });
            }
        }
        Ok(())
    }

    /// Writes `text` at `path`, or removes the file for `None`.
    async fn put(&self, path: &str, text: Option<&str>) -> Result<(), FsError> {
        match text {
            Some(text) => self.write(path, text).await,
            None => remove_file(&self.handle, path)
                .await
                .map(|_| ())
                .map_err(browser),
        }
    }

    /// Undoes `done`'s writes, newest first, each only where the file still
    /// holds what was written (another program's change is never
    /// overwritten); returns the paths left as the change wrote them.
    async fn put_back(&self, done: &[&FileChange]) -> Vec<String> {
        let mut left = Vec::new();
        for file in done.iter().rev() {
            let untouched = matches!(self.read(&file.path).await, Ok(now) if now == file.after);
            if !untouched || self.put(&file.path, file.before.as_deref()).await.is_err() {
                left.push(file.path.clone());
            }
        }
        left.reverse();
        left
    }

    /// Read-write permission: `"granted"`, `"prompt"` or `"denied"`. With
    /// `ask`, prompts the user (needs a click to be in progress).
    pub async fn permission(&self, ask: bool) -> String {
        permission_js(&self.handle, ask)
            .await
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_else(|| "denied".into())
    }

    /// Remember this folder for the next visit.
    pub async fn remember(&self) -> Result<(), FsError> {
        save_handle(&self.handle).await.map_err(browser).map(|_| ())
    }
}

/// Opens the browser's folder picker (read-write); `None` when the person
/// closed it without picking.
pub async fn pick() -> Result<Option<VaultDir>, FsError> {
    let handle = pick_directory().await.map_err(browser)?;
    Ok((!handle.is_null() && !handle.is_undefined()).then_some(VaultDir { handle }))
}

/// The folder a drop brought, `None` when it held none. Call this inside the
/// drop handler (the dropped items are gone once it returns) and await the
/// future afterwards.
pub fn dropped(
    event: &web_sys::DragEvent,
) -> impl std::future::Future<Output = Result<Option<VaultDir>, FsError>> {
    let pending = dropped_directory(event.as_ref());
    async move {
        let handle = wasm_bindgen_futures::JsFuture::from(pending)
            .await
            .map_err(browser)?;
        Ok((!handle.is_null() && !handle.is_undefined()).then_some(VaultDir { handle }))
    }
}

/// The folder picked on an earlier visit, if any.
pub async fn remembered() -> Option<VaultDir> {
    let handle = load_handle().await.ok()?;
    (!handle.is_null() && !handle.is_undefined()).then_some(VaultDir { handle })
}

pub async fn forget() {
    let _ = forget_handle_js().await;
}

/// The notes of an `<input webkitdirectory>` selection, and the folder name.
/// The folder an `<input webkitdirectory>` picked: its name, its notes,
/// and the bytes of each that is not UTF-8 (a JS `Uint8Array`) or too
/// large to read (the `File`, written as a stream), which its working copy
/// keeps as they are.
pub async fn read_selection(
    files: &JsValue,
) -> Result<(String, Reading, Vec<(String, JsValue)>), FsError> {
    let name = file_list_folder(files);
    let read = read_file_list(files, LIMIT).await.map_err(browser)?;
    let raw: Object = js_sys::Reflect::get(&read, &"raw".into())
        .map(JsCast::unchecked_into)
        .unwrap_or_default();
    let raw = Object::entries(&raw)
        .iter()
        .filter_map(|pair| {
            let pair: Array = pair.unchecked_into();
            Some((pair.get(0).as_string()?, pair.get(1)))
        })
        .collect();
    Ok((name, Reading::from_js(read), raw))
}

/// Offers `bytes` as a file download.
pub fn download(name: &str, bytes: &[u8], mime: &str) {
    download_js(name, &Uint8Array::from(bytes), mime);
}

/// A zip (stored, not compressed) of the given files, for the read-only
/// mode's "download changed notes", by `rawzip`. Each entry's CRC-32 comes
/// from `crc`'s bytewise table (1 KB) rather than from rawzip's own writer,
/// whose slice-by-16 table is 16 KB of data that gzip cannot shrink, in the
/// main module the first paint waits for (bench/runs/wasm-size.md).
pub fn zip(files: &BTreeMap<String, String>) -> Vec<u8> {
    const CRC_32: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
    fn write(files: &BTreeMap<String, String>) -> Result<Vec<u8>, rawzip::Error> {
        use std::io::Write;
        let mut archive = rawzip::ZipArchiveWriter::new(Vec::new());
        for (path, text) in files {
            let (mut entry, _) = archive.new_file(path.as_str()).start()?;
            entry.write_all(text.as_bytes())?;
            let checksum = CRC_32.checksum(text.as_bytes());
            entry.finish(rawzip::DataDescriptorOutput::new(
                checksum,
                text.len() as u64,
            ))?;
        }
        archive.finish()
    }
    write(files).unwrap_or_default()
}
