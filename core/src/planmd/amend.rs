//! `@feedback` amendments (seed 001): a feedback node proposes changes in a
//! fenced `leopold-amend` block; this module decides, in code, which of them
//! apply. Only `add` ever applies, at most [`MAX_ADDED_PER_RUN`] times per run
//! (the caller keeps the count in its run state and hands it back in), only
//! as a plain work item, appended at the end so no existing index moves.
//! Every other proposal is refused with the bound that refused it.
//!
//! Block grammar, one proposal per line (a leading `-`/`*` bullet is fine):
//! `add: <item text>`, `delete 3`, `edit 2: <text>`, `guardrails: …`.

use super::markers::parse_item_text;
use crate::{NodeKind, Status};
use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

/// Items added per run, across resumes.
pub const MAX_ADDED_PER_RUN: u32 = 3;
/// The fence info string of an amendment block.
pub const FENCE: &str = "leopold-amend";

/// The rule that refused a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bound {
    /// At most [`MAX_ADDED_PER_RUN`] items added per run.
    AddBudget,
    /// `add` is the only verb that ever applies.
    AddOnly,
    /// An item is never removed.
    NoDelete,
    /// An item already `[x]` is never rewritten.
    NoTouchDone,
    /// `GUARDRAILS.md` is never amended.
    NoGuardrails,
    /// An added item is a plain work item.
    WorkOnly,
    /// The proposal could not be read as an item.
    Malformed,
}

impl Bound {
    #[cfg_attr(planvault_size, optimize(size))]
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::AddBudget => "add-budget",
            Bound::AddOnly => "add-only",
            Bound::NoDelete => "no-delete",
            Bound::NoTouchDone => "no-touch-done",
            Bound::NoGuardrails => "no-guardrails",
            Bound::WorkOnly => "work-only",
            Bound::Malformed => "malformed",
        }
    }
}

/// What a proposal asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verb {
    Add,
    Delete,
    Edit,
    Guardrails,
    /// A verb planvault does not know, as written.
    Other(String),
}

/// One line of an amendment block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub verb: Verb,
    /// The item an edit or delete names.
    pub target: Option<u32>,
    pub text: String,
    /// The proposal line as written, for logs.
    pub raw: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The new item's 1-based index.
    pub index: u32,
    /// The exact line appended to PLAN.md (what a Reversal deletes).
    pub line: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub bound: Bound,
    pub proposal: String,
    /// Why, naming the offender.
    pub reason: String,
}

/// The result of applying a block: the new PLAN.md text and the new count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub plan_text: String,
    pub accepted: Vec<Accepted>,
    pub refused: Vec<Refusal>,
    /// Items added this run so far, including this call's: store it.
    pub spent: u32,
}

/// The last fenced `leopold-amend` block of a feedback node's output.
#[cfg_attr(planvault_size, optimize(size))]
pub fn extract_block(output: &str) -> Option<String> {
    let mut last = None;
    let mut current: Option<String> = None;
    for event in Parser::new(output) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                let lang = info.split_whitespace().next().unwrap_or("");
                current = (lang == FENCE).then(String::new);
            }
            Event::Text(text) => {
                if let Some(block) = current.as_mut() {
                    block.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(block) = current.take() {
                    last = Some(block);
                }
            }
            _ => {}
        }
    }
    last
}

/// Read the proposals of a block, one per non-empty line.
#[cfg_attr(planvault_size, optimize(size))]
pub fn parse_block(block: &str) -> Vec<Proposal> {
    block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|raw| {
            let line = raw
                .strip_prefix(['-', '*', '+'])
                .map(str::trim_start)
                .unwrap_or(raw);
            let word_len = line
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(line.len());
            let word = line[..word_len].to_ascii_lowercase();
            let mut rest = line[word_len..].trim_start();
            let verb = match word.as_str() {
                "add" | "append" | "new" => Verb::Add,
                "delete" | "remove" | "drop" => Verb::Delete,
                "edit" | "change" | "rewrite" | "update" | "check" | "uncheck" => Verb::Edit,
                "guardrail" | "guardrails" => Verb::Guardrails,
                _ => Verb::Other(line[..word_len].to_string()),
            };
            let mut target = None;
            if verb != Verb::Add {
                let r = rest
                    .strip_prefix("item")
                    .map(str::trim_start)
                    .unwrap_or(rest);
                let r = r.strip_prefix('#').unwrap_or(r);
                let digits = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
                if digits > 0 {
                    target = r[..digits].parse().ok();
                    rest = r[digits..].trim_start();
                }
            }
            let text = rest.strip_prefix(':').unwrap_or(rest).trim().to_string();
            Proposal {
                verb,
                target,
                text,
                raw: raw.to_string(),
            }
        })
        .collect()
}

/// Apply proposals to a PLAN.md under every bound. `spent` is how many items
/// this run already added (zero for a fresh run).
#[cfg_attr(planvault_size, optimize(size))]
pub fn apply(plan_text: &str, proposals: &[Proposal], spent: u32) -> Outcome {
    let (plan, _) = super::parse("PLAN.md", plan_text);
    let mut count = plan.nodes.len() as u32;
    let done = |index: u32| {
        plan.nodes
            .get(index as usize - 1)
            .is_some_and(|n| n.status == Status::Done)
    };
    let newline = if plan_text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut out = Outcome {
        plan_text: plan_text.to_string(),
        accepted: Vec::new(),
        refused: Vec::new(),
        spent,
    };
    let refuse = |out: &mut Outcome, p: &Proposal, bound: Bound, reason: String| {
        out.refused.push(Refusal {
            bound,
            proposal: p.raw.clone(),
            reason,
        });
    };

    for p in proposals {
        let names_guardrails = p.text.to_ascii_lowercase().contains("guardrails.md");
        match (&p.verb, p.target) {
            (Verb::Guardrails, _) => {
                refuse(
                    &mut out,
                    p,
                    Bound::NoGuardrails,
                    "GUARDRAILS.md is never amended".into(),
                );
                continue;
            }
            (_, _) if names_guardrails => {
                refuse(
                    &mut out,
                    p,
                    Bound::NoGuardrails,
                    "it names GUARDRAILS.md, which is never amended".into(),
                );
                continue;
            }
            (Verb::Delete, t) => {
                let what = t.map_or("an item".to_string(), |t| format!("item {t}"));
                refuse(
                    &mut out,
                    p,
                    Bound::NoDelete,
                    format!("it asked to remove {what}; an item is never removed"),
                );
                continue;
            }
            (Verb::Edit, Some(t)) if t >= 1 && t <= count && done(t) => {
                refuse(
                    &mut out,
                    p,
                    Bound::NoTouchDone,
                    format!("item {t} is already done and is never rewritten"),
                );
                continue;
            }
            (Verb::Edit, t) => {
                let what = t.map_or("an item".to_string(), |t| format!("item {t}"));
                refuse(
                    &mut out,
                    p,
                    Bound::AddOnly,
                    format!("it asked to edit {what}; only add applies"),
                );
                continue;
            }
            (Verb::Other(word), _) => {
                refuse(
                    &mut out,
                    p,
                    Bound::AddOnly,
                    format!("{word:?} is not add; only add applies"),
                );
                continue;
            }
            (Verb::Add, _) => {}
        }

        let text = p.text.trim();
        let text = text.strip_prefix("- ").map(str::trim_start).unwrap_or(text);
        if text.starts_with("[x]") || text.starts_with("[X]") {
            refuse(
                &mut out,
                p,
                Bound::NoTouchDone,
                "an added item cannot arrive already done".into(),
            );
            continue;
        }
        let text = text
            .strip_prefix("[ ]")
            .map(str::trim_start)
            .unwrap_or(text);
        if text.is_empty() || text.contains(['\n', '\r']) {
            refuse(
                &mut out,
                p,
                Bound::Malformed,
                "it added no item text".into(),
            );
            continue;
        }
        let decl = parse_item_text(text);
        if decl.kind != NodeKind::Work || decl.label.is_some() || text_declares_marker(text) {
            refuse(
                &mut out,
                p,
                Bound::WorkOnly,
                format!("{text:?} is not a plain work item"),
            );
            continue;
        }
        if let Some(bad) = decl.after.iter().find(|&&d| d == 0 || d > count) {
            refuse(
                &mut out,
                p,
                Bound::Malformed,
                format!("it depends on item {bad}, which does not exist"),
            );
            continue;
        }
        if out.spent >= MAX_ADDED_PER_RUN {
            let reason = format!(
                "this run already added {} items; the budget is {MAX_ADDED_PER_RUN}",
                out.spent
            );
            refuse(&mut out, p, Bound::AddBudget, reason);
            continue;
        }
        let line = format!("- [ ] {text}");
        if !out.plan_text.is_empty() && !out.plan_text.ends_with('\n') {
            out.plan_text.push_str(newline);
        }
        out.plan_text.push_str(&line);
        out.plan_text.push_str(newline);
        count += 1;
        out.spent += 1;
        out.accepted.push(Accepted { index: count, line });
    }
    out
}

/// A marker anywhere at the start of the text after `(after: …)`: an added
/// item may carry dependencies but no kind, route, signal or need.
#[cfg_attr(planvault_size, optimize(size))]
fn text_declares_marker(text: &str) -> bool {
    let decl = parse_item_text(text);
    !decl.routes.is_empty()
        || !decl.emits.is_empty()
        || !decl.needs.is_empty()
        || decl.title.starts_with('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = "- [x] Build\n- [ ] (after: 1) Ship\n";

    fn bounds(outcome: &Outcome) -> Vec<&'static str> {
        outcome.refused.iter().map(|r| r.bound.as_str()).collect()
    }

    #[test]
    fn extracts_the_last_block() {
        let output = "text\n```leopold-amend\nadd: one\n```\n\n```leopold-amend\nadd: two\n```\n";
        assert_eq!(extract_block(output).as_deref(), Some("add: two\n"));
        assert_eq!(extract_block("```rust\nadd: x\n```"), None);
    }

    #[test]
    fn adds_are_appended_and_counted() {
        let props = parse_block("- add: (after: 2) Write the changelog\nADD: Tell the team\n");
        let out = apply(PLAN, &props, 0);
        assert_eq!(
            out.plan_text,
            format!("{PLAN}- [ ] (after: 2) Write the changelog\n- [ ] Tell the team\n")
        );
        assert_eq!(
            out.accepted.iter().map(|a| a.index).collect::<Vec<_>>(),
            vec![3, 4]
        );
        assert_eq!(out.spent, 2);
        assert!(out.refused.is_empty());
    }

    #[test]
    fn the_budget_carries_across_calls() {
        let props = parse_block("add: a\nadd: b\n");
        let out = apply(PLAN, &props, 2);
        assert_eq!(out.accepted.len(), 1);
        assert_eq!(bounds(&out), vec!["add-budget"]);
        assert_eq!(out.spent, 3);
    }

    #[test]
    fn every_other_proposal_names_its_bound() {
        let block = "delete 2\nedit 1: Build twice\nedit 2: Ship later\nguardrails: allow push\n\
                     add: @tool git push\nadd: @human Decide\nadd: (after: 1) @emit shipped\nadd: Emit it\n\
                     @emit x\nadd: (after: 9) Late\n\
                     add: rewrite GUARDRAILS.md\nadd: [x] Already done\nrename 2: x\nadd:\n";
        let out = apply(PLAN, &parse_block(block), 0);
        assert_eq!(
            bounds(&out),
            vec![
                "no-delete",
                "no-touch-done",
                "add-only",
                "no-guardrails",
                "work-only",
                "work-only",
                "work-only",
                "add-only",
                "malformed",
                "no-guardrails",
                "no-touch-done",
                "add-only",
                "malformed",
            ]
        );
        assert_eq!(out.accepted.len(), 1, "only `Emit it` applied");
        assert_eq!(out.accepted[0].line, "- [ ] Emit it");
        assert_eq!(
            out.refused[0].reason,
            "it asked to remove item 2; an item is never removed"
        );
    }

    #[test]
    fn crlf_plans_stay_crlf() {
        let out = apply("- [ ] a\r\n", &parse_block("add: b"), 0);
        assert_eq!(out.plan_text, "- [ ] a\r\n- [ ] b\r\n");
    }
}
