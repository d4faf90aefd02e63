//! The stub over real HTTP: CORS, ordering and matching, errors, plain and
//! streamed replies, and a request log that never holds a key.

use llm_stub::{Match, Reply, Script, Stub};
use std::io::Read;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

fn post(stub: &Stub, body: serde_json::Value) -> (u16, Vec<(String, String)>, String) {
    let mut response = agent()
        .post(format!("{}/chat/completions", stub.base_url()))
        .header("Authorization", "Bearer sk-stub-secret")
        .header("Content-Type", "application/json")
        .send(body.to_string())
        .unwrap();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
        .collect();
    let mut text = String::new();
    response
        .body_mut()
        .as_reader()
        .read_to_string(&mut text)
        .unwrap();
    (response.status().as_u16(), headers, text)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

fn ask(content: &str, stream: bool) -> serde_json::Value {
    serde_json::json!({"model": "m", "stream": stream, "messages": [{"role": "user", "content": content}]})
}

#[test]
fn replies_are_served_in_order_matched_and_used_up() {
    let script: Script = serde_json::from_str(
        r#"{"replies": [
            {"match": {"contains": "beta"}, "content": "B"},
            {"content": "first"},
            {"content": "always", "times": 0}
        ]}"#,
    )
    .unwrap();
    let stub = Stub::start(script, 0, None).unwrap();
    let content = |body: &str| {
        serde_json::from_str::<serde_json::Value>(body).unwrap()["choices"][0]["message"]["content"]
            .clone()
    };
    assert_eq!(content(&post(&stub, ask("alpha", false)).2), "first");
    assert_eq!(content(&post(&stub, ask("beta", false)).2), "B");
    assert_eq!(content(&post(&stub, ask("beta", false)).2), "always");
    assert_eq!(content(&post(&stub, ask("gamma", false)).2), "always");
    assert_eq!(
        stub.requests().iter().map(|r| r.reply).collect::<Vec<_>>(),
        [Some(1), Some(0), Some(2), Some(2)]
    );
}

#[test]
fn a_streamed_reply_is_server_sent_events_ending_in_done() {
    let stub = Stub::start(
        Script {
            replies: vec![Reply {
                content: "Hello there".into(),
                status: 200,
                chunk_chars: Some(3),
                ..Reply::default()
            }],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let (status, headers, body) = post(&stub, ask("x", true));
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("text/event-stream"));
    let deltas: String = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| {
            serde_json::from_str::<serde_json::Value>(d).unwrap()["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(deltas, "Hello there");
    assert!(body.ends_with("data: [DONE]\n\n"));
    assert_eq!(body.matches("\"finish_reason\":\"stop\"").count(), 1);
}

#[test]
fn errors_carry_their_status_retry_after_and_cors_headers() {
    let script = Script {
        replies: vec![Reply {
            status: 429,
            retry_after: Some(2),
            content: "slow down".into(),
            ..Reply::default()
        }],
        default: Some(Reply {
            raw: Some("{not json".into()),
            status: 200,
            ..Reply::default()
        }),
    };
    let stub = Stub::start(script, 0, None).unwrap();
    let (status, headers, body) = post(&stub, ask("x", false));
    assert_eq!(status, 429);
    assert_eq!(header(&headers, "retry-after"), Some("2"));
    assert_eq!(header(&headers, "access-control-allow-origin"), Some("*"));
    assert!(body.contains("slow down"));
    assert_eq!(
        post(&stub, ask("x", false)).2,
        "{not json",
        "the default serves raw bodies"
    );
}

#[test]
fn an_unscripted_request_is_a_404_naming_the_stub() {
    let stub = Stub::start(
        Script {
            replies: vec![Reply {
                matcher: Match {
                    model: Some("other".into()),
                    ..Match::default()
                },
                status: 200,
                ..Reply::default()
            }],
            default: None,
        },
        0,
        None,
    )
    .unwrap();
    let (status, _, body) = post(&stub, ask("x", false));
    assert_eq!(status, 404);
    assert!(body.contains("stub_unscripted"));
}

#[test]
fn preflight_is_allowed_and_the_log_never_holds_the_key() {
    let log = std::env::temp_dir().join(format!("stub-log-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let stub = Stub::start(
        Script {
            replies: vec![],
            default: Some(Reply {
                content: "ok".into(),
                status: 200,
                ..Reply::default()
            }),
        },
        0,
        Some(log.clone()),
    )
    .unwrap();
    let response = agent()
        .options(format!("{}/chat/completions", stub.base_url()))
        .header("Origin", "http://localhost:8080")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "authorization, content-type",
        )
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 204);
    let allowed = response
        .headers()
        .get("access-control-allow-headers")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(allowed.contains("authorization"));

    post(&stub, ask("hello", false));
    let mut response = agent()
        .get(format!("http://127.0.0.1:{}/__stub/requests", stub.port()))
        .call()
        .unwrap();
    let listed = response.body_mut().read_to_string().unwrap();
    let file = std::fs::read_to_string(&log).unwrap();
    for text in [&listed, &file] {
        assert!(text.contains("\"authorized\":true"));
        assert!(text.contains("hello"));
        assert!(!text.contains("sk-stub-secret"));
    }
    std::fs::remove_file(&log).unwrap();
}
