//! The app in headless Chromium (`wasm-bindgen-test`): the pure parts run in
//! the browser's wasm as they do in the app, and the whole app mounts, shows
//! the bundled example vault from the origin-private file system and paints
//! it on the canvas.
#![cfg(target_arch = "wasm32")]

use planvault_layout::Point;
use planvault_web::commands;
use planvault_web::doc::VaultDoc;
use planvault_web::geometry::{Hit, Scene};
use std::collections::BTreeMap;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn vault() -> VaultDoc {
    let mut files = BTreeMap::new();
    files.insert(
        "draft.md".to_string(),
        "---\ntype: start\n---\n# Draft\n\n## Next\n- [[review]]\n".to_string(),
    );
    files.insert(
        "review.md".to_string(),
        "\u{feff}# Review\r\n\r\n## Next\r\n- approved -> [[send]]\r\n".to_string(),
    );
    files.insert("send.md".to_string(), "# Send\n".to_string());
    VaultDoc::new(files)
}

#[wasm_bindgen_test]
fn edits_round_trip_through_undo_in_wasm() {
    let doc = vault();
    let (send, draft) = (
        doc.node_index("send").unwrap(),
        doc.node_index("draft").unwrap(),
    );
    let change = commands::add_edge(&doc, send, draft, "again").unwrap();
    let after = doc.with_changes(change.results());
    assert_eq!(
        after.files["send.md"],
        "# Send\n\n## Next\n- again -> [[draft]]\n"
    );
    let undone = after.with_changes(change.inverse().results());
    assert_eq!(undone.files, doc.files);
    // The BOM and CRLF of review.md survive a retarget.
    let edge = doc
        .checked
        .plan
        .edges
        .iter()
        .position(|e| e.label.as_deref() == Some("approved"))
        .unwrap();
    let change = commands::retarget_edge(&doc, edge, draft).unwrap();
    let after = doc.with_changes(change.results());
    assert_eq!(
        after.files["review.md"],
        "\u{feff}# Review\r\n\r\n## Next\r\n- approved -> [[draft]]\r\n"
    );
}

/// The read-only mode's download: another zip reader finds every note, byte
/// for byte (its CRC-32 checked), under its path.
#[wasm_bindgen_test]
fn the_download_zip_reads_back_with_another_implementation() {
    use std::io::Read;
    let mut files = BTreeMap::new();
    files.insert(
        "plan/draft.md".to_string(),
        "# Draft\n\n## Next\n- [[review]]\n".to_string(),
    );
    files.insert("über.md".to_string(), "\u{feff}# Über\r\n".repeat(500));
    files.insert("empty.md".to_string(), String::new());
    let bytes = planvault_web::fs::zip(&files);
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    assert_eq!(archive.len(), files.len());
    for (path, text) in &files {
        let mut entry = archive.by_name(path).unwrap();
        assert_eq!(entry.compression(), zip::CompressionMethod::Stored);
        let mut read = String::new();
        entry.read_to_string(&mut read).unwrap();
        assert_eq!(&read, text, "{path}");
    }
}

#[wasm_bindgen_test]
fn hit_testing_matches_the_drawn_shapes() {
    let doc = vault();
    let scene = Scene::build(&doc, &[], Point::default());
    let review = doc.node_index("review").unwrap();
    assert_eq!(
        scene.hit(scene.nodes[review].center(), 6.0),
        Hit::Node(review)
    );
}

async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

fn text_of(id: &str) -> String {
    web_sys::window()
        .unwrap()
        .document()
        .unwrap()
        .get_element_by_id(id)
        .and_then(|e| e.text_content())
        .unwrap_or_default()
}

#[wasm_bindgen_test]
async fn the_app_mounts_and_paints_the_example_vault() {
    leptos::mount::mount_to_body(planvault_web::app::App);
    let mut waited = 0;
    while !text_of("mode").starts_with("Example") {
        assert!(
            waited < 20_000,
            "the example vault never showed: {:?}",
            text_of("status")
        );
        sleep(50).await;
        waited += 50;
    }
    sleep(100).await;
    let document = web_sys::window().unwrap().document().unwrap();
    let canvas: web_sys::HtmlCanvasElement = document
        .get_element_by_id("plan-canvas")
        .unwrap()
        .dyn_into()
        .unwrap();
    let ctx: web_sys::CanvasRenderingContext2d = canvas
        .get_context("2d")
        .unwrap()
        .unwrap()
        .dyn_into()
        .unwrap();
    let data = ctx
        .get_image_data(0, 0, canvas.width() as i32, canvas.height() as i32)
        .unwrap()
        .data();
    let distinct: std::collections::BTreeSet<[u8; 4]> = data
        .chunks(4)
        .take(200_000)
        .map(|p| [p[0], p[1], p[2], p[3]])
        .collect();
    assert!(
        distinct.len() > 3,
        "the canvas shows the plan, not a blank: {} colours",
        distinct.len()
    );
    assert!(text_of("diagnostics").is_empty() || !text_of("diagnostics").contains("error["));
}

/// A change whose second write fails (a folder sits where `plan.canvas`
/// goes) takes back its first: the new note is not left behind, and a file
/// it overwrote has its old text again.
#[wasm_bindgen_test]
async fn a_change_that_fails_partway_is_put_back() {
    use planvault_web::commands::{Change, FileChange};
    use planvault_web::fs::{FsError, VaultDir};
    let name = "apply-partway";
    VaultDir::clear_private(name).await.unwrap();
    let dir = VaultDir::private(name).await.unwrap();
    dir.write("start.md", "# Start\n").await.unwrap();
    // Writing a file inside it makes `plan.canvas` a folder.
    dir.write("plan.canvas/inside.md", "").await.unwrap();
    let file = |path: &str, before: Option<&str>, after: Option<&str>| FileChange {
        path: path.into(),
        before: before.map(Into::into),
        after: after.map(Into::into),
    };
    let change = Change {
        summary: "new note Publish".into(),
        files: vec![
            file("Publish.md", None, Some("# Publish\n")),
            file(
                "start.md",
                Some("# Start\n"),
                Some("# Start\n\n## Next\n- [[Publish]]\n"),
            ),
            file("plan.canvas", None, Some("{\"nodes\":[],\"edges\":[]}")),
        ],
    };
    let error = dir.apply(&change).await.unwrap_err();
    assert!(matches!(error, FsError::Browser(_)), "{error:?}");
    assert_eq!(dir.read("Publish.md").await.unwrap(), None);
    assert_eq!(
        dir.read("start.md").await.unwrap().as_deref(),
        Some("# Start\n")
    );
    VaultDir::clear_private(name).await.unwrap();
}
