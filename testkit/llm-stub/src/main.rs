//! `planvault-llm-stub --script FILE [--port N] [--log FILE]`: serve a script
//! on 127.0.0.1 and print `listening on http://127.0.0.1:PORT/v1`.

#![forbid(unsafe_code)]
// A program: its output is the point.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut script_path = None;
    let mut port = 0u16;
    let mut log = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--script" => script_path = args.next().map(PathBuf::from),
            "--port" => port = args.next().and_then(|p| p.parse().ok()).unwrap_or(0),
            "--log" => log = args.next().map(PathBuf::from),
            "-h" | "--help" => {
                println!("usage: planvault-llm-stub --script FILE [--port N] [--log FILE]");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("error: unknown argument {other}");
                return ExitCode::from(2);
            }
        }
    }
    let script = match script_path {
        None => llm_stub::Script::default(),
        Some(path) => match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(script) => script,
            Err(err) => {
                eprintln!("error: cannot read script {}: {err}", path.display());
                return ExitCode::from(2);
            }
        },
    };
    let stub = match llm_stub::Stub::start(script, port, log) {
        Ok(stub) => stub,
        Err(err) => {
            eprintln!("error: cannot listen on 127.0.0.1:{port}: {err}");
            return ExitCode::from(2);
        }
    };
    println!("listening on {}", stub.base_url());
    let _ = std::io::stdout().flush();
    loop {
        std::thread::park();
    }
}
