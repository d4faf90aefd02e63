//! `window.planvaultTest`: the end-to-end tests' view into the app. It is
//! an on-demand part of the app users run (`on_demand::test_hook`), so the
//! tests drive the very build `scripts/start` serves; the page fetches it
//! only when it sets `window.planvaultTestHook` before loading.

use crate::app::open_folder;
use crate::canvas_view::{DrawnFrame, DrawnPlan};
use crate::fs::VaultDir;
use crate::run::WorkerState;
use crate::state::AppState;
use leptos::prelude::*;
use planvault_layout::Point;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// Most frame times kept (the oldest thousand go past it).
const FRAME_TIMES_KEPT: usize = 5000;

/// `window.planvaultTest`: what the end-to-end tests need and a person
/// never sees. The File System Access picker cannot be automated, so tests
/// hand the app an origin-private directory handle instead; the rest tells
/// them where things are drawn and what the app holds.
pub fn install(state: AppState) {
    // Every frame's draw time (for BENCHMARKS.md) and the last plan drawn.
    let frame_times = Rc::new(RefCell::new(Vec::<f64>::new()));
    let drawn = Rc::new(RefCell::new(serde_json::Value::Null));
    state.frame_probe.set_value(Some(Rc::new({
        let (frame_times, drawn) = (frame_times.clone(), drawn.clone());
        move |frame: &DrawnFrame<'_>| {
            let mut times = frame_times.borrow_mut();
            times.push(frame.took_ms);
            if times.len() > FRAME_TIMES_KEPT {
                times.drain(..1000);
            }
            if let Some(plan) = &frame.plan {
                *drawn.borrow_mut() = drawn_json(plan);
            }
        }
    })));
    let hook = js_sys::Object::new();
    let set = |name: &str, f: JsValue| {
        let _ = js_sys::Reflect::set(&hook, &name.into(), &f);
    };

    set(
        "openHandle",
        Closure::<dyn Fn(JsValue) -> js_sys::Promise>::new(move |handle: JsValue| {
            wasm_bindgen_futures::future_to_promise(async move {
                open_folder(state, VaultDir::from_handle(handle), false).await;
                Ok(JsValue::TRUE)
            })
        })
        .into_js_value(),
    );

    // Page coordinates of a world point.
    let to_page = move |p: Point| -> JsValue {
        let v = state.viewport.get_untracked();
        let s = v.to_screen(p);
        let (left, top) = document()
            .get_element_by_id("plan-canvas")
            .map(|c| {
                let r = c.get_bounding_client_rect();
                (r.left(), r.top())
            })
            .unwrap_or((0.0, 0.0));
        let o = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&o, &"x".into(), &(left + s.x).into());
        let _ = js_sys::Reflect::set(&o, &"y".into(), &(top + s.y).into());
        o.into()
    };

    set(
        "nodePoint",
        Closure::<dyn Fn(String, String) -> JsValue>::new(move |id: String, part: String| {
            let p = state.open.with_untracked(|o| {
                let o = o.as_ref()?;
                let i = o.doc.node_index(&id)?;
                let r = o.scene.nodes[i];
                Some(match part.as_str() {
                    "handle" => o.scene.handle(i),
                    "breakpoint" => crate::geometry::breakpoint_center(&r),
                    // On the ring the canvas draws round the run's active node.
                    "ring" => Point {
                        x: r.x - 6.0,
                        y: r.y + r.height / 2.0,
                    },
                    _ => Point {
                        x: r.x + r.width / 2.0,
                        y: r.y + 22.0,
                    },
                })
            });
            p.map_or(JsValue::NULL, to_page)
        })
        .into_js_value(),
    );

    // A card's rectangle in page coordinates.
    set(
        "nodeRect",
        Closure::<dyn Fn(String) -> JsValue>::new(move |id: String| {
            let r = state.open.with_untracked(|o| {
                let o = o.as_ref()?;
                o.scene.nodes.get(o.doc.node_index(&id)?).copied()
            });
            let Some(r) = r else { return JsValue::NULL };
            let (a, b) = (
                to_page(Point { x: r.x, y: r.y }),
                to_page(Point {
                    x: r.x + r.width,
                    y: r.y + r.height,
                }),
            );
            let get = |o: &JsValue, k: &str| js_sys::Reflect::get(o, &k.into()).unwrap_or_default();
            let o = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&o, &"left".into(), &get(&a, "x"));
            let _ = js_sys::Reflect::set(&o, &"top".into(), &get(&a, "y"));
            let _ = js_sys::Reflect::set(&o, &"right".into(), &get(&b, "x"));
            let _ = js_sys::Reflect::set(&o, &"bottom".into(), &get(&b, "y"));
            o.into()
        })
        .into_js_value(),
    );

    set(
        "edgePoint",
        Closure::<dyn Fn(String, String, String) -> JsValue>::new(
            move |from: String, to: String, part: String| {
                let p = state.open.with_untracked(|o| {
                    let o = o.as_ref()?;
                    let (f, t) = (o.doc.node_index(&from)?, o.doc.node_index(&to)?);
                    let e = o
                        .doc
                        .checked
                        .plan
                        .edges
                        .iter()
                        .position(|e| e.from == f && e.to == Some(t))?;
                    let shape = o.scene.shape_of_edge(e)?;
                    // "at:0.3": that far along the edge as drawn.
                    if let Some(t) = part.strip_prefix("at:").and_then(|t| t.parse().ok()) {
                        return Some(shape.point_along(t));
                    }
                    Some(match part.as_str() {
                        "head" => shape.head(),
                        "label" => shape
                            .label_box
                            .map(|b| b.center())
                            .unwrap_or(shape.points[shape.points.len() / 2]),
                        _ => {
                            let (a, b) = (shape.points[0], shape.points[1]);
                            Point {
                                x: (a.x + b.x) / 2.0,
                                y: (a.y + b.y) / 2.0,
                            }
                        }
                    })
                });
                p.map_or(JsValue::NULL, to_page)
            },
        )
        .into_js_value(),
    );

    // Every card's box on the page, by id (the layout tests compare them
    // across edits; the minimap test checks none is under the minimap).
    set(
        "cardBoxes",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let json = state.open.with_untracked(|o| {
                let o = o.as_ref()?;
                let v = state.viewport.get_untracked();
                let boxes: serde_json::Map<String, serde_json::Value> = o
                    .doc
                    .checked
                    .plan
                    .nodes
                    .iter()
                    .zip(&o.scene.nodes)
                    .map(|(n, r)| {
                        let s = v.to_screen(Point { x: r.x, y: r.y });
                        let b = serde_json::json!({
                            "worldX": r.x, "worldY": r.y,
                            "x": s.x, "y": s.y, "width": r.width * v.zoom, "height": r.height * v.zoom,
                        });
                        (n.id.clone(), b)
                    })
                    .collect();
                Some(serde_json::Value::Object(boxes).to_string())
            });
            json.map_or(JsValue::NULL, |s| js_sys::JSON::parse(&s).unwrap_or(JsValue::NULL))
        })
        .into_js_value(),
    );

    set(
        "selectedEdge",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let json = state.open.with_untracked(|o| {
                let o = o.as_ref()?;
                let e = state.selection.with_untracked(|s| s.edge_index(&o.doc))?;
                let plan = &o.doc.checked.plan;
                let edge = &plan.edges[e];
                Some(
                    serde_json::json!({
                        "from": plan.nodes[edge.from].id,
                        "to": edge.to.map(|t| plan.nodes[t].id.clone()),
                        "label": edge.label,
                    })
                    .to_string(),
                )
            });
            json.map_or(JsValue::NULL, |s| {
                js_sys::JSON::parse(&s).unwrap_or(JsValue::NULL)
            })
        })
        .into_js_value(),
    );

    set(
        "plan",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let json = state.open.with_untracked(|o| {
                o.as_ref().map(|o| {
                    let plan = &o.doc.checked.plan;
                    serde_json::json!({
                        "nodes": plan.nodes.iter().map(|n| serde_json::json!({
                            "id": n.id, "title": n.title, "status": n.status.as_str(), "kind": n.kind.as_str(),
                        })).collect::<Vec<_>>(),
                        "edges": plan.edges.iter().map(|e| serde_json::json!({
                            "from": plan.nodes[e.from].id,
                            "to": e.to.map(|t| plan.nodes[t].id.clone()),
                            "label": e.label,
                            "line": e.pos.as_ref().map(|p| p.line),
                        })).collect::<Vec<_>>(),
                        "diagnostics": o.doc.checked.diagnostics.iter().map(|d| d.code.as_str()).collect::<Vec<_>>(),
                        "positions": o.doc.positions.keys().collect::<Vec<_>>(),
                    })
                    .to_string()
                })
            });
            json.map_or(JsValue::NULL, |s| js_sys::JSON::parse(&s).unwrap_or(JsValue::NULL))
        })
        .into_js_value(),
    );

    set(
        "idle",
        Closure::<dyn Fn() -> js_sys::Promise>::new(move || {
            wasm_bindgen_futures::future_to_promise(async move {
                // Resolves once every queued write has reached the disk
                // (and no part, such as the canvas writer, is still coming).
                while state.busy() || crate::on_demand::loading() > 0 {
                    let wait = js_sys::Promise::new(&mut |resolve, _| {
                        if let Some(w) = web_sys::window() {
                            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(
                                &resolve, 20,
                            );
                        }
                    });
                    let _ = wasm_bindgen_futures::JsFuture::from(wait).await;
                }
                Ok(JsValue::TRUE)
            })
        })
        .into_js_value(),
    );

    set(
        "selection",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let ids = state.selection.with_untracked(|s| s.nodes.clone());
            let array = js_sys::Array::new();
            for id in ids {
                array.push(&id.into());
            }
            array.into()
        })
        .into_js_value(),
    );

    set(
        "setPolling",
        Closure::<dyn Fn(bool)>::new(move |on: bool| state.polling.set_value(on)).into_js_value(),
    );

    set(
        "poll",
        Closure::<dyn Fn() -> js_sys::Promise>::new(move || {
            wasm_bindgen_futures::future_to_promise(async move {
                let was = state.polling.get_value();
                state.polling.set_value(true);
                state.poll().await;
                state.polling.set_value(was);
                Ok(JsValue::TRUE)
            })
        })
        .into_js_value(),
    );

    set(
        "frameTimes",
        Closure::<dyn Fn(bool) -> JsValue>::new(move |reset: bool| {
            let times = if reset {
                std::mem::take(&mut *frame_times.borrow_mut())
            } else {
                frame_times.borrow().clone()
            };
            let array = js_sys::Array::new();
            for t in times {
                array.push(&t.into());
            }
            array.into()
        })
        .into_js_value(),
    );

    set(
        "centerOn",
        Closure::<dyn Fn(String, f64)>::new(move |id: String, zoom: f64| {
            let Some(center) = state.open.with_untracked(|o| {
                let o = o.as_ref()?;
                Some(o.scene.nodes[o.doc.node_index(&id)?].center())
            }) else {
                return;
            };
            state.viewport.update(|v| {
                v.zoom = zoom;
                v.offset = Point {
                    x: center.x - v.width / 2.0 / zoom,
                    y: center.y - v.height / 2.0 / zoom,
                };
            });
        })
        .into_js_value(),
    );

    set(
        "viewport",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let v = state.viewport.get_untracked();
            let o = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&o, &"zoom".into(), &v.zoom.into());
            let _ = js_sys::Reflect::set(&o, &"x".into(), &v.offset.x.into());
            let _ = js_sys::Reflect::set(&o, &"y".into(), &v.offset.y.into());
            o.into()
        })
        .into_js_value(),
    );

    // The shown parts' code is in (web/src/on_demand.rs): their DOM is there.
    set(
        "partsLoading",
        Closure::<dyn Fn() -> JsValue>::new(move || (crate::on_demand::loading() as u32).into())
            .into_js_value(),
    );

    set(
        "opensSettled",
        Closure::<dyn Fn() -> JsValue>::new(move || state.opens_settled().into()).into_js_value(),
    );

    set(
        "run",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            let mut json = state.run.view.with_untracked(run_json);
            json["discarding"] = state.run.discarding().into();
            js_sys::JSON::parse(&json.to_string()).unwrap_or(JsValue::NULL)
        })
        .into_js_value(),
    );

    set(
        "canvasRun",
        Closure::<dyn Fn() -> JsValue>::new(move || {
            js_sys::JSON::parse(&drawn.borrow().to_string()).unwrap_or(JsValue::NULL)
        })
        .into_js_value(),
    );

    if let Some(w) = web_sys::window() {
        let _ = js_sys::Reflect::set(&w, &"planvaultTest".into(), &hook);
    }
}

/// What a frame drew of the plan and its run, by node id.
fn drawn_json(frame: &DrawnPlan<'_>) -> serde_json::Value {
    let plan = &frame.open.doc.checked.plan;
    let id = |i: usize| plan.nodes[i].id.clone();
    let overlay = frame.overlay;
    serde_json::json!({
        "active": overlay.active.map(id),
        "asking": overlay.asking.map(id),
        "visits": overlay.visits.iter().enumerate().filter(|(_, n)| **n > 0)
            .map(|(i, n)| (id(i), serde_json::json!(n))).collect::<serde_json::Map<_, _>>(),
        "hop": overlay.hop.map(|(e, seq)| {
            let edge = &plan.edges[e];
            serde_json::json!({ "from": id(edge.from), "to": edge.to.map(id), "label": edge.label, "seq": seq })
        }),
        "stopped": overlay.stopped,
        "breakpoints": frame.breakpoints.iter().map(|&i| id(i)).collect::<Vec<_>>(),
        "animating": frame.animating,
        "animations": frame.animations,
        "overviewTitles": frame.overview.titled.len(),
        "overviewTitled": frame.overview.titled.iter().map(|&i| id(i)).collect::<Vec<_>>(),
        "overviewGroups": frame.overview.groups.iter().map(|&(k, labelled, a)| {
            let g = &frame.open.groups[k];
            serde_json::json!({ "name": g.name, "notes": g.nodes.len(), "labelled": labelled,
                "area": { "x": a.x, "y": a.y, "width": a.width, "height": a.height } })
        }).collect::<Vec<_>>(),
        "minimap": frame.minimap.map(|m| serde_json::json!({
            "x": m.x, "y": m.y, "width": m.width, "height": m.height,
        })),
    })
}

/// The run as the tests read it (never an API key: the view holds none).
fn run_json(v: &crate::run::RunView) -> serde_json::Value {
    use crate::run::Phase;
    let error = |e: &planvault_protocol::RunError| serde_json::json!({ "code": e.code, "message": e.message, "hint": e.hint });
    serde_json::json!({
        "worker": match &v.worker {
            WorkerState::Starting => "starting".to_string(),
            WorkerState::Ready => "ready".to_string(),
            WorkerState::Broken(why) => format!("broken: {why}"),
        },
        "phase": v.phase.code(),
        "describe": v.phase.describe(),
        "pause": match &v.phase { Phase::Paused(reason) => serde_json::to_value(reason).unwrap_or_default(), _ => serde_json::Value::Null },
        "finish": match &v.phase {
            Phase::Finished { reason, answer, error: e } => serde_json::json!({
                "code": reason.code(), "describe": reason.describe(), "answer": answer, "error": e.as_ref().map(error),
            }),
            _ => serde_json::Value::Null,
        },
        "resumed": v.resumed,
        "active": v.active,
        "visits": v.visits,
        "statuses": v.statuses.iter().map(|(k, s)| (k.clone(), serde_json::json!(s.as_str()))).collect::<serde_json::Map<_, _>>(),
        "hop": v.hop.as_ref().map(|h| serde_json::json!({ "from": h.from, "to": h.to, "label": h.label, "seq": h.seq })),
        "trace": v.trace,
        "outputs": v.outputs.iter().map(|o| serde_json::json!({ "node": o.node, "visit": o.visit, "text": o.text })).collect::<Vec<_>>(),
        "live": v.live.as_ref().map(|l| serde_json::json!({ "node": l.node, "label": l.label(), "text": l.text })),
        "attempts": v.attempts.iter().map(|l| serde_json::json!({ "node": l.node, "label": l.label(), "text": l.text })).collect::<Vec<_>>(),
        "failed": v.failed.as_ref().map(|(n, r)| serde_json::json!({ "node": n, "reason": r })),
        "retries": v.retries,
        "retry": v.retry.as_ref().map(|r| serde_json::json!({ "node": r.node, "error": error(&r.error), "waitMs": r.wait_ms })),
        "error": v.error.as_ref().map(error),
        "ask": v.ask.as_ref().map(|a| serde_json::json!({ "request": a.request, "node": a.node, "visit": a.visit, "ask": a.ask })),
        "tools": v.tools.iter().map(|t| serde_json::json!({ "node": t.node, "name": t.name, "ok": t.error.is_none(), "error": t.error })).collect::<Vec<_>>(),
    })
}
