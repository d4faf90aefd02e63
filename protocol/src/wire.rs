//! Decoders of the two message enums written out by hand over a parsed
//! [`serde_json::Value`]: [`from_worker_json`] (what the app reads) and
//! [`to_worker_json`] (what the worker reads).
//!
//! Why not the derived `Deserialize`: the messages are internally tagged
//! enums (`{"type": "hop", ...}`), and serde decodes those by first buffering
//! the whole object into its private `Content` tree and then decoding every
//! variant through a second deserializer over it. In the browser bundles that
//! machinery, instantiated for every message, nested enum and field type, is
//! one of the largest pieces of code (bench/runs/wasm-size.md). Reading the
//! tag and each field from a `Value` the bundles parse anyway costs a fraction.
//!
//! They accept exactly what the derives accept for every message the other
//! side sends (the tests decode each variant both ways and compare), and like
//! the derives they ignore unknown fields and read a missing `Option` or
//! `#[serde(default)]` field as empty. The derives stay: the messages are
//! still encoded with them, and tests and tools decode with [`crate::from_json`].

use crate::{
    AskKind, Endpoints, FromWorker, McpServer, PauseReason, PersonReply, ProtocolError,
    RetryPolicy, RunError, RunMode, StartRun, ToWorker, VERSION,
};
use planvault_core::engine::FinishReason;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A message the worker posted (JSON text of its envelope), after the
/// version check.
pub fn from_worker_json(text: &str) -> Result<FromWorker, ProtocolError> {
    from_worker(&message(text)?)
}

/// A message the app posted (JSON text of its envelope), after the version
/// check.
pub fn to_worker_json(text: &str) -> Result<ToWorker, ProtocolError> {
    to_worker(&message(text)?)
}

/// The envelope's message, once its version is this build's.
fn message(text: &str) -> Result<Value, ProtocolError> {
    let value: Value = serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    let Value::Object(mut envelope) = value else {
        return Err(malformed("not an object"));
    };
    let version = envelope
        .get("version")
        .and_then(Value::as_u64)
        .ok_or_else(|| malformed("missing field `version`"))?;
    if version != u64::from(VERSION) {
        return Err(ProtocolError::Version {
            got: u32::try_from(version).unwrap_or(u32::MAX),
            want: VERSION,
        });
    }
    envelope
        .remove("message")
        .ok_or_else(|| malformed("missing field `message`"))
}

fn malformed(what: impl Into<String>) -> ProtocolError {
    ProtocolError::Malformed(what.into())
}

/// The fields of one object, read by name.
struct Fields<'a>(&'a Map<String, Value>);

impl<'a> Fields<'a> {
    fn of(value: &'a Value) -> Result<Self, ProtocolError> {
        value
            .as_object()
            .map(Fields)
            .ok_or_else(|| malformed("expected an object"))
    }

    /// A field that is present and not null.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.0.get(key).filter(|v| !v.is_null())
    }

    fn need(&self, key: &str) -> Result<&'a Value, ProtocolError> {
        self.0
            .get(key)
            .ok_or_else(|| malformed(format!("missing field `{key}`")))
    }

    fn wrong(key: &str, what: &str) -> ProtocolError {
        malformed(format!("field `{key}`: expected {what}"))
    }

    fn tag(&self, key: &str) -> Result<&'a str, ProtocolError> {
        self.need(key)?
            .as_str()
            .ok_or_else(|| Self::wrong(key, "a string"))
    }

    fn string(&self, key: &str) -> Result<String, ProtocolError> {
        self.tag(key).map(str::to_owned)
    }

    fn opt_string(&self, key: &str) -> Result<Option<String>, ProtocolError> {
        self.get(key)
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| Self::wrong(key, "a string"))
            })
            .transpose()
    }

    fn u32(&self, key: &str) -> Result<u32, ProtocolError> {
        as_u32(self.need(key)?).ok_or_else(|| Self::wrong(key, "a u32"))
    }

    fn opt_u32(&self, key: &str) -> Result<Option<u32>, ProtocolError> {
        self.get(key)
            .map(|v| as_u32(v).ok_or_else(|| Self::wrong(key, "a u32")))
            .transpose()
    }

    fn bool(&self, key: &str) -> Result<bool, ProtocolError> {
        self.need(key)?
            .as_bool()
            .ok_or_else(|| Self::wrong(key, "a boolean"))
    }

    /// A `#[serde(default)]` boolean.
    fn bool_or_false(&self, key: &str) -> Result<bool, ProtocolError> {
        match self.0.get(key) {
            None => Ok(false),
            Some(v) => v.as_bool().ok_or_else(|| Self::wrong(key, "a boolean")),
        }
    }

    fn list<T>(
        &self,
        key: &str,
        item: impl Fn(&Value) -> Option<T>,
    ) -> Result<Vec<T>, ProtocolError> {
        let list = self.need(key)?;
        list.as_array()
            .and_then(|items| items.iter().map(item).collect())
            .ok_or_else(|| Self::wrong(key, "a list"))
    }

    /// A `#[serde(default)]` list.
    fn list_or_empty<T>(
        &self,
        key: &str,
        item: impl Fn(&Value) -> Option<T>,
    ) -> Result<Vec<T>, ProtocolError> {
        if self.0.contains_key(key) {
            self.list(key, item)
        } else {
            Ok(Vec::new())
        }
    }

    /// A field of a type whose derived `Deserialize` is small (a plain
    /// struct, or an enum of unit variants named by a string).
    fn derived<T: for<'de> Deserialize<'de>>(&self, key: &str) -> Result<T, ProtocolError> {
        T::deserialize(self.need(key)?).map_err(|e| malformed(format!("field `{key}`: {e}")))
    }

    fn opt_derived<T: for<'de> Deserialize<'de>>(
        &self,
        key: &str,
    ) -> Result<Option<T>, ProtocolError> {
        self.get(key)
            .map(|v| T::deserialize(v).map_err(|e| malformed(format!("field `{key}`: {e}"))))
            .transpose()
    }
}

fn as_u32(value: &Value) -> Option<u32> {
    value.as_u64().and_then(|n| u32::try_from(n).ok())
}

fn string(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

fn unknown(tag: &str) -> ProtocolError {
    malformed(format!("unknown variant `{tag}`"))
}

fn from_worker(value: &Value) -> Result<FromWorker, ProtocolError> {
    let f = Fields::of(value)?;
    Ok(match f.tag("type")? {
        "ready" => FromWorker::Ready {
            version: f.u32("version")?,
        },
        "started" => FromWorker::Started {
            resumed: f.bool("resumed")?,
            done: f.u32("done")?,
            recorded: f.u32("recorded")?,
            visits: f
                .need("visits")?
                .as_object()
                .and_then(|visits| {
                    visits
                        .iter()
                        .map(|(node, n)| Some((node.clone(), as_u32(n)?)))
                        .collect::<Option<BTreeMap<_, _>>>()
                })
                .ok_or_else(|| Fields::wrong("visits", "a map of counts"))?,
        },
        "status" => FromWorker::Status {
            node: f.string("node")?,
            status: f.derived("status")?,
        },
        "visit" => FromWorker::Visit {
            node: f.string("node")?,
            visit: f.u32("visit")?,
        },
        "hop" => FromWorker::Hop {
            from: f.string("from")?,
            to: f.string("to")?,
            label: f.opt_string("label")?,
        },
        "reply-starts" => FromWorker::ReplyStarts {
            node: f.string("node")?,
            kind: f.derived("kind")?,
            attempt: f.u32("attempt")?,
        },
        "delta" => FromWorker::Delta {
            node: f.string("node")?,
            text: f.string("text")?,
        },
        "output" => FromWorker::Output {
            node: f.string("node")?,
            visit: f.u32("visit")?,
            text: f.string("text")?,
        },
        "trace" => FromWorker::Trace {
            markdown: f.string("markdown")?,
        },
        "tool" => FromWorker::Tool {
            node: f.string("node")?,
            name: f.string("name")?,
            error: f.opt_string("error")?,
        },
        "ask" => FromWorker::Ask {
            request: f.string("request")?,
            node: f.string("node")?,
            visit: f.u32("visit")?,
            ask: ask_kind(f.need("ask")?)?,
        },
        "retrying" => FromWorker::Retrying {
            node: f.string("node")?,
            error: f.derived::<RunError>("error")?,
            wait_ms: f.u32("wait_ms")?,
        },
        "paused" => FromWorker::Paused {
            reason: pause_reason(f.need("reason")?)?,
        },
        "resumed" => FromWorker::Resumed,
        "finished" => FromWorker::Finished {
            reason: finish_reason(f.need("reason")?)?,
            answer: f.opt_string("answer")?,
            error: f.opt_derived::<RunError>("error")?,
        },
        "failed" => FromWorker::Failed {
            error: f.derived::<RunError>("error")?,
        },
        "tool-list" => FromWorker::ToolList {
            server: f.string("server")?,
            tools: f.list("tools", string)?,
            error: f.opt_string("error")?,
        },
        other => return Err(unknown(other)),
    })
}

fn ask_kind(value: &Value) -> Result<AskKind, ProtocolError> {
    let f = Fields::of(value)?;
    Ok(match f.tag("kind")? {
        "work" => AskKind::Work {
            title: f.string("title")?,
            prompt: f.string("prompt")?,
        },
        "judge" => AskKind::Judge {
            title: f.string("title")?,
            output: f.string("output")?,
            labels: f.list("labels", string)?,
        },
        "human" => AskKind::Human {
            question: f.string("question")?,
            choices: f.list("choices", string)?,
        },
        "breakpoint" => AskKind::Breakpoint {
            title: f.string("title")?,
            output: f.string("output")?,
        },
        other => return Err(unknown(other)),
    })
}

fn pause_reason(value: &Value) -> Result<PauseReason, ProtocolError> {
    let f = Fields::of(value)?;
    Ok(match f.tag("kind")? {
        "requested" => PauseReason::Requested,
        "step" => PauseReason::Step {
            node: f.string("node")?,
        },
        "breakpoint" => PauseReason::Breakpoint {
            node: f.string("node")?,
        },
        "run-to" => PauseReason::RunTo {
            node: f.string("node")?,
        },
        other => return Err(unknown(other)),
    })
}

fn finish_reason(value: &Value) -> Result<FinishReason, ProtocolError> {
    let f = Fields::of(value)?;
    Ok(match f.tag("code")? {
        "completed" => FinishReason::Completed,
        "visit_budget" => FinishReason::VisitBudget {
            node: f.string("node")?,
            max_visits: f.u32("max_visits")?,
        },
        "step_budget" => FinishReason::StepBudget {
            max_steps: f.u32("max_steps")?,
        },
        "node_failed" => FinishReason::NodeFailed {
            node: f.string("node")?,
            reason: f.string("reason")?,
        },
        "awaiting_human" => FinishReason::AwaitingHuman {
            node: f.string("node")?,
            question: f.string("question")?,
        },
        "interrupted" => FinishReason::Interrupted {
            node: f.string("node")?,
            reason: f.string("reason")?,
        },
        "stopped" => FinishReason::Stopped {
            reason: f.string("reason")?,
        },
        "replay_diverged" => FinishReason::ReplayDiverged {
            request: f.string("request")?,
        },
        "plan_failed" => FinishReason::PlanFailed {
            reason: f.string("reason")?,
        },
        other => return Err(unknown(other)),
    })
}

fn to_worker(value: &Value) -> Result<ToWorker, ProtocolError> {
    let f = Fields::of(value)?;
    Ok(match f.tag("type")? {
        "start" => ToWorker::Start(start_run(&f)?),
        "pause" => ToWorker::Pause,
        "resume" => ToWorker::Resume,
        "step" => ToWorker::Step,
        "stop" => ToWorker::Stop,
        "set-breakpoints" => ToWorker::SetBreakpoints {
            nodes: f.list("nodes", string)?,
        },
        "run-to" => ToWorker::RunTo {
            node: f.opt_string("node")?,
        },
        "reply" => ToWorker::Reply {
            request: f.string("request")?,
            reply: person_reply(f.need("reply")?)?,
        },
        "list-tools" => ToWorker::ListTools {
            server: f.derived::<McpServer>("server")?,
        },
        other => return Err(unknown(other)),
    })
}

/// `Start`'s fields sit beside its `type` (an internally tagged newtype).
fn start_run(f: &Fields<'_>) -> Result<StartRun, ProtocolError> {
    Ok(StartRun {
        query: f.string("query")?,
        mode: run_mode(f.need("mode")?)?,
        fresh: f.bool_or_false("fresh")?,
        max_steps: f.u32("max_steps")?,
        autonomy: f.derived("autonomy")?,
        breakpoints: f.list_or_empty("breakpoints", string)?,
        run_to: f.opt_string("run_to")?,
        retry: f.derived::<RetryPolicy>("retry")?,
        max_prompt_bytes: f.opt_u32("max_prompt_bytes")?,
        mcp_servers: f.list_or_empty("mcp_servers", |v| McpServer::deserialize(v).ok())?,
        mcp_terminal_only: f.list_or_empty("mcp_terminal_only", string)?,
        folder: f.opt_string("folder")?.unwrap_or_default(),
        parallel: f.bool_or_false("parallel")?,
        parallel_at_most: f.opt_u32("parallel_at_most")?,
        take_decisions: f.opt_string("take_decisions")?,
        allow_hosts: f.list_or_empty("allow_hosts", string)?,
    })
}

fn run_mode(value: &Value) -> Result<RunMode, ProtocolError> {
    let f = Fields::of(value)?;
    Ok(match f.tag("kind")? {
        "model" => RunMode::Model {
            endpoints: f.derived::<Endpoints>("endpoints")?,
        },
        "manual" => RunMode::Manual,
        other => return Err(unknown(other)),
    })
}

fn person_reply(value: &Value) -> Result<PersonReply, ProtocolError> {
    let f = Fields::of(value)?;
    Ok(match f.tag("kind")? {
        "work" => PersonReply::Work {
            output: f.string("output")?,
        },
        "judge" => PersonReply::Judge {
            verdicts: f.list("verdicts", Value::as_bool)?,
        },
        "human" => PersonReply::Human {
            approved: f.bool("approved")?,
            note: f.string("note")?,
            choice: f.opt_string("choice")?,
        },
        "continue" => PersonReply::Continue {
            output: f.string("output")?,
        },
        other => return Err(unknown(other)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{from_json, Endpoint, Envelope, ErrorCode, ReplyKind};
    use planvault_core::engine::Autonomy;
    use serde::Serialize;

    fn text<T: Serialize>(message: &T) -> String {
        serde_json::to_string(&Envelope::new(message)).unwrap()
    }

    /// The hand decoder reads what the derive writes, and agrees with the
    /// derived decoder.
    fn both_ways_from_worker(message: FromWorker) {
        let text = text(&message);
        assert_eq!(from_json::<FromWorker>(&text).unwrap(), message, "{text}");
        assert_eq!(from_worker_json(&text).unwrap(), message, "{text}");
    }

    fn both_ways_to_worker(message: ToWorker) {
        let text = text(&message);
        assert_eq!(from_json::<ToWorker>(&text).unwrap(), message, "{text}");
        assert_eq!(to_worker_json(&text).unwrap(), message, "{text}");
    }

    fn error() -> RunError {
        RunError::new(ErrorCode::RateLimited, "429").with_hint("wait")
    }

    #[test]
    fn every_message_from_the_worker_decodes_as_the_derive_does() {
        use FromWorker::*;
        both_ways_from_worker(Ready { version: VERSION });
        both_ways_from_worker(Started {
            resumed: true,
            done: 2,
            recorded: 5,
            visits: [("a".to_string(), 1), ("b".to_string(), 3)].into(),
        });
        for status in planvault_core::Status::ALL {
            both_ways_from_worker(Status {
                node: "n".into(),
                status,
            });
        }
        both_ways_from_worker(Visit {
            node: "n".into(),
            visit: 4,
        });
        for label in [None, Some("yes".to_string())] {
            both_ways_from_worker(Hop {
                from: "a".into(),
                to: "b".into(),
                label,
            });
        }
        for kind in [ReplyKind::Work, ReplyKind::Judgment, ReplyKind::Revision] {
            both_ways_from_worker(ReplyStarts {
                node: "n".into(),
                kind,
                attempt: 2,
            });
        }
        both_ways_from_worker(Delta {
            node: "n".into(),
            text: "tok \"quoted\"\n".into(),
        });
        both_ways_from_worker(Output {
            node: "n".into(),
            visit: 1,
            text: "out".into(),
        });
        both_ways_from_worker(Trace {
            markdown: "## n".into(),
        });
        both_ways_from_worker(Tool {
            node: "n".into(),
            name: "fetch_url".into(),
            error: Some("refused".into()),
        });
        both_ways_from_worker(Tool {
            node: "n".into(),
            name: "read_note".into(),
            error: None,
        });
        for ask in [
            AskKind::Work {
                title: "t".into(),
                prompt: "p".into(),
            },
            AskKind::Judge {
                title: "t".into(),
                output: "o".into(),
                labels: vec!["yes".into(), "no".into()],
            },
            AskKind::Human {
                question: "Send?".into(),
                choices: vec![],
            },
            AskKind::Breakpoint {
                title: "t".into(),
                output: "o".into(),
            },
        ] {
            both_ways_from_worker(Ask {
                request: "n#1:human".into(),
                node: "n".into(),
                visit: 1,
                ask,
            });
        }
        both_ways_from_worker(Retrying {
            node: "n".into(),
            error: error(),
            wait_ms: 500,
        });
        for reason in [
            PauseReason::Requested,
            PauseReason::Step { node: "a".into() },
            PauseReason::Breakpoint { node: "b".into() },
            PauseReason::RunTo { node: "c".into() },
        ] {
            both_ways_from_worker(Paused { reason });
        }
        both_ways_from_worker(Resumed);
        let reasons = [
            FinishReason::Completed,
            FinishReason::VisitBudget {
                node: "n".into(),
                max_visits: 3,
            },
            FinishReason::StepBudget { max_steps: 100 },
            FinishReason::NodeFailed {
                node: "n".into(),
                reason: "r".into(),
            },
            FinishReason::AwaitingHuman {
                node: "n".into(),
                question: "q".into(),
            },
            FinishReason::Interrupted {
                node: "n".into(),
                reason: "r".into(),
            },
            FinishReason::Stopped { reason: "r".into() },
            FinishReason::ReplayDiverged {
                request: "n#1".into(),
            },
            FinishReason::PlanFailed { reason: "r".into() },
        ];
        for (i, reason) in reasons.into_iter().enumerate() {
            both_ways_from_worker(Finished {
                reason,
                answer: (i % 2 == 0).then(|| "answer".to_string()),
                error: (i % 3 == 0).then(error),
            });
        }
        both_ways_from_worker(Failed { error: error() });
        for error in [None, Some("refused".to_string())] {
            both_ways_from_worker(ToolList {
                server: "search".into(),
                tools: vec!["find".into(), "get".into()],
                error,
            });
        }
    }

    fn start_run(mode: RunMode) -> StartRun {
        StartRun {
            query: "q".into(),
            mode,
            fresh: true,
            max_steps: 100,
            autonomy: Autonomy::Ask,
            breakpoints: vec!["review".into()],
            run_to: Some("send".into()),
            retry: RetryPolicy::default(),
            max_prompt_bytes: Some(65_536),
            mcp_servers: vec![server()],
            mcp_terminal_only: vec!["files".into()],
            folder: "plans/launch".into(),
            parallel: true,
            parallel_at_most: Some(3),
            take_decisions: Some("listing".into()),
            allow_hosts: vec!["wiki.internal".into()],
        }
    }

    fn server() -> McpServer {
        McpServer {
            name: "search".into(),
            url: "http://127.0.0.1:3001/mcp".into(),
            token: Some("tok".into()),
            approve: vec!["post".into()],
            timeout_ms: Some(5_000),
        }
    }

    #[test]
    fn every_message_to_the_worker_decodes_as_the_derive_does() {
        let endpoint = Endpoint {
            base_url: "http://127.0.0.1:1/v1".into(),
            model: "m".into(),
            api_key: Some("sk".into()),
        };
        both_ways_to_worker(ToWorker::Start(start_run(RunMode::Model {
            endpoints: Endpoints {
                default: Some(endpoint.clone()),
                roles: [("review".to_string(), endpoint)].into(),
            },
        })));
        both_ways_to_worker(ToWorker::Start(start_run(RunMode::Manual)));
        for message in [
            ToWorker::Pause,
            ToWorker::Resume,
            ToWorker::Step,
            ToWorker::Stop,
        ] {
            both_ways_to_worker(message);
        }
        both_ways_to_worker(ToWorker::SetBreakpoints {
            nodes: vec!["a".into(), "b".into()],
        });
        for node in [None, Some("a".to_string())] {
            both_ways_to_worker(ToWorker::RunTo { node });
        }
        for reply in [
            PersonReply::Work { output: "o".into() },
            PersonReply::Judge {
                verdicts: vec![true, false],
            },
            PersonReply::Human {
                approved: false,
                note: "no".into(),
                choice: Some("later".into()),
            },
            PersonReply::Continue { output: "o".into() },
        ] {
            both_ways_to_worker(ToWorker::Reply {
                request: "r".into(),
                reply,
            });
        }
        both_ways_to_worker(ToWorker::ListTools { server: server() });
    }

    #[test]
    fn defaulted_fields_may_be_left_out_as_the_derive_allows() {
        let text = format!(
            r#"{{"version":{VERSION},"message":{{"type":"start","query":"q","mode":{{"kind":"manual"}},
            "max_steps":5,"autonomy":"full","retry":{{"attempts":1,"base_delay_ms":0,"timeout_ms":1}},
            "extra":"ignored"}}}}"#
        );
        let derived = from_json::<ToWorker>(&text).unwrap();
        assert_eq!(to_worker_json(&text).unwrap(), derived);
        let ToWorker::Start(start) = derived else {
            panic!("not a start: {derived:?}")
        };
        assert!(!start.fresh && start.breakpoints.is_empty() && start.mcp_servers.is_empty());
        let text =
            format!(r#"{{"version":{VERSION},"message":{{"type":"hop","from":"a","to":"b"}}}}"#);
        assert_eq!(
            from_worker_json(&text).unwrap(),
            from_json::<FromWorker>(&text).unwrap()
        );
    }

    #[test]
    fn what_the_derive_refuses_the_hand_decoders_refuse() {
        let bad_from = [
            r#"{"type":"dance"}"#,
            r#"{"type":"visit","node":"n"}"#,
            r#"{"type":"visit","node":"n","visit":-1}"#,
            r#"{"type":"visit","node":"n","visit":4294967296}"#,
            r#"{"type":"hop","from":"a","to":1}"#,
            r#"{"type":"status","node":"n","status":"sleeping"}"#,
            r#"{"type":"paused","reason":{"kind":"nap"}}"#,
            r#"{"type":"finished","reason":{"code":"completed"},"error":{"code":"nope","message":"m"}}"#,
            r#"{"type":"started","resumed":true,"done":1,"recorded":1,"visits":{"a":"x"}}"#,
            r#"{"node":"n"}"#,
            r#""ready""#,
        ];
        for message in bad_from {
            let text = format!(r#"{{"version":{VERSION},"message":{message}}}"#);
            assert!(
                from_json::<FromWorker>(&text).is_err(),
                "derive accepts {text}"
            );
            assert!(
                matches!(from_worker_json(&text), Err(ProtocolError::Malformed(_))),
                "{text}"
            );
        }
        let bad_to = [
            r#"{"type":"reply","request":"r","reply":{"kind":"judge","verdicts":[1]}}"#,
            r#"{"type":"set-breakpoints"}"#,
            r#"{"type":"start","query":"q","mode":{"kind":"model"},"max_steps":1,"autonomy":"full","retry":{"attempts":1,"base_delay_ms":0,"timeout_ms":1}}"#,
            r#"{"type":"start","query":"q","mode":{"kind":"manual"},"max_steps":1,"autonomy":"full","retry":{"attempts":1,"base_delay_ms":0,"timeout_ms":1},"fresh":null}"#,
        ];
        for message in bad_to {
            let text = format!(r#"{{"version":{VERSION},"message":{message}}}"#);
            assert!(
                from_json::<ToWorker>(&text).is_err(),
                "derive accepts {text}"
            );
            assert!(
                matches!(to_worker_json(&text), Err(ProtocolError::Malformed(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn a_message_from_another_build_is_refused_by_version() {
        let text = r#"{"version":99,"message":{"type":"pause","bogus":true}}"#;
        let refused = Some(ProtocolError::Version {
            got: 99,
            want: VERSION,
        });
        assert_eq!(to_worker_json(text).err(), refused);
        assert_eq!(from_worker_json(text).err(), refused);
        assert!(matches!(
            to_worker_json("[1]"),
            Err(ProtocolError::Malformed(_))
        ));
        assert!(matches!(
            from_worker_json(&format!(r#"{{"version":{VERSION}}}"#)),
            Err(ProtocolError::Malformed(_))
        ));
    }
}
