//! Plans built in code and scripted answers for the engine tests.
#![allow(dead_code)]

use planvault_core::engine::{
    drive, Answer, Effect, Engine, Event, Journal, Request, RequestBody, RunConfig,
};
use planvault_core::{
    Edge, EdgeKind, Node, NodeExt, NodeKind, Plan, PlanFormat, Status, VaultNode,
};
use std::collections::BTreeMap;

/// `(id, max_visits, edges as (label, target))`.
pub type NodeSpec<'a> = (&'a str, u32, &'a [(&'a str, &'a str)]);

/// A vault plan; the first node is the start. An empty label or `next` is
/// unconditional. Bodies are as the loader leaves them: no `Next` section.
pub fn vault(nodes: &[NodeSpec<'_>]) -> Plan {
    let mut plan = Plan::new(PlanFormat::Vault);
    for (i, (id, max_visits, _)) in nodes.iter().enumerate() {
        plan.nodes.push(Node {
            id: id.to_string(),
            title: format!("Title of {id}"),
            body: format!("Do {id}."),
            kind: if i == 0 {
                NodeKind::Start
            } else {
                NodeKind::Step
            },
            status: Status::Pending,
            tools: vec![],
            role: None,
            max_visits: *max_visits,
            pos: None,
            ext: NodeExt::Vault(VaultNode {
                file: format!("{id}.md"),
                ..Default::default()
            }),
        });
    }
    for (i, (_, _, edges)) in nodes.iter().enumerate() {
        for (label, target) in edges.iter() {
            let unconditional = label.is_empty() || *label == "next";
            plan.edges.push(Edge {
                from: i,
                to: plan.node_index(target),
                target: target.to_string(),
                label: (!label.is_empty()).then(|| label.to_string()),
                kind: if unconditional {
                    EdgeKind::Unconditional
                } else {
                    EdgeKind::Conditional
                },
                pos: None,
                written: None,
            });
        }
    }
    plan.start = Some(0);
    plan
}

/// draft → review → (approved: send | needs revision: draft)
pub fn draft_review_send() -> Plan {
    vault(&[
        ("draft", 3, &[("", "review")]),
        (
            "review",
            3,
            &[("approved", "send"), ("needs revision", "draft")],
        ),
        ("send", 3, &[]),
    ])
}

/// Answers by request id; a work request without a scripted answer gets
/// `output of <id>`, a judgment without one is a test failure.
#[derive(Default, Clone)]
pub struct Script {
    pub answers: BTreeMap<String, Answer>,
    pub asked: Vec<Request>,
}

impl Script {
    pub fn new() -> Self {
        Script::default()
    }
    pub fn work(mut self, id: &str, output: &str) -> Self {
        self.answers.insert(
            id.into(),
            Answer::Work {
                output: output.into(),
            },
        );
        self
    }
    pub fn human(mut self, id: &str, approved: bool, decision: &str, choice: Option<&str>) -> Self {
        let answer = Answer::Human {
            decision: decision.into(),
            approved,
            choice: choice.map(str::to_string),
        };
        self.answers.insert(id.into(), answer);
        self
    }
    pub fn judge(mut self, id: &str, raw: &str) -> Self {
        self.answers.insert(
            id.into(),
            Answer::Judgment {
                raw: raw.into(),
                labels: Vec::new(),
            },
        );
        self
    }
    pub fn answer(&mut self, request: &Request) -> Event {
        self.asked.push(request.clone());
        let answer = match self.answers.get(&request.id) {
            Some(a) => a.clone(),
            None => match &request.body {
                RequestBody::Work { .. } => Answer::Work {
                    output: format!("output of {}", request.id),
                },
                other => panic!("no scripted answer for {} ({other:?})", request.id),
            },
        };
        Event::Answered {
            id: request.id.clone(),
            answer,
        }
    }
    pub fn asked_ids(&self) -> Vec<String> {
        self.asked.iter().map(|r| r.id.clone()).collect()
    }
}

pub fn run(plan: Plan, config: RunConfig, journal: &Journal, script: &mut Script) -> Vec<Effect> {
    let mut engine = Engine::new(plan, config, journal).expect("engine");
    drive(&mut engine, |r| script.answer(r))
}

/// The tests' run: a PLAN.md item out of attempts stops the run with no
/// rescue, as Leopold with no usable model (what the differential against
/// it grants); [`rescued`] asks for one.
pub fn config() -> RunConfig {
    RunConfig {
        query: "write a note".into(),
        rescue: false,
        ..RunConfig::default()
    }
}

/// [`config`] with the rescue a run makes by default.
pub fn rescued() -> RunConfig {
    RunConfig {
        rescue: true,
        ..config()
    }
}

/// [`config`] with a PLAN.md's independent items run together in waves.
pub fn parallel() -> RunConfig {
    RunConfig {
        parallel: true,
        ..config()
    }
}

/// The effects a replay must reproduce: everything but requests and
/// records, and whether an output came from the journal (a replay's all do).
pub fn observable(effects: &[Effect]) -> Vec<Effect> {
    effects
        .iter()
        .filter(|e| !matches!(e, Effect::Request(_) | Effect::Record(_)))
        .cloned()
        .map(|mut e| {
            // Whether the driver writes it only where it is missing, which
            // a replay's and a resume's hops are.
            match &mut e {
                Effect::Output { replayed, .. } => *replayed = false,
                Effect::Trace(t) => t.walked = false,
                _ => {}
            }
            e
        })
        .collect()
}

pub fn journal_of(effects: &[Effect]) -> Journal {
    let mut journal = Journal::new();
    for e in effects {
        if let Effect::Record(entry) = e {
            journal.entries.push(entry.clone());
        }
    }
    journal
}

/// The journal of `effects` as the runner keeps a PLAN.md run's: its
/// order ([`Answer::Order`]) first, as `config` began it.
pub fn as_begun(config: &RunConfig, effects: &[Effect]) -> Journal {
    let mut journal = Journal::new();
    journal.push(
        planvault_core::engine::ORDER_KEY,
        Answer::Order {
            parallel: config.parallel,
            in_a_row: config.waves_in_a_row,
            at_most: config.parallel_at_most,
        },
    );
    journal.entries.extend(journal_of(effects).entries);
    journal
}

pub fn finish(effects: &[Effect]) -> planvault_core::engine::Finish {
    match effects.last() {
        Some(Effect::Finish(f)) => f.clone(),
        other => panic!("the run did not finish: last effect {other:?}"),
    }
}

/// `"node: what [decided_by]"` per trace entry a run adds (not the hops a
/// resume walks past, which are in the trace already).
/// The hops as `node#visit: what [decided by]`, those a resume walks past
/// (written only where the trace lacks them) included.
pub fn all_trace_lines(effects: &[Effect]) -> Vec<String> {
    hops(effects, true)
}

/// The hops as `node#visit: what [decided by]`, new ones only.
pub fn trace_lines(effects: &[Effect]) -> Vec<String> {
    hops(effects, false)
}

fn hops(effects: &[Effect], walked_too: bool) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Trace(t) if walked_too || !t.walked => Some(format!(
                "{}#{}: {} [{}]",
                t.node,
                t.visit,
                t.what,
                t.decided_by.as_str()
            )),
            _ => None,
        })
        .collect()
}

/// Status writes as `node=status`.
pub fn status_writes(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::WriteStatus { node, status } => Some(format!("{node}={}", status.as_str())),
            _ => None,
        })
        .collect()
}

/// Apply status writes to a plan, as the runner does to the notes.
pub fn apply_statuses(plan: &mut Plan, effects: &[Effect]) {
    for e in effects {
        if let Effect::WriteStatus { node, status } = e {
            let i = plan.node_index(node).unwrap();
            plan.nodes[i].status = *status;
        }
    }
}
