// parseGeneratedPlan's options: what is accepted, and the exact message of
// each refusal. The messages are the ones serde-wasm-bindgen gave (serde's
// wording) when it read the options; the hand-written reader keeps them.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as planvault from "planvault";

const plan = JSON.stringify({
  nodes: [
    { id: "a", capability: "t1", args: {} },
    { id: "b", capability: "t2", args: {}, dependsOn: ["a"] },
  ],
});

function refusal(options) {
  try {
    planvault.parseGeneratedPlan(plan, options);
  } catch (error) {
    assert.equal(error.code, "invalid-argument", error.message);
    return error.message.replace("invalid argument `options`: ", "");
  }
  assert.fail(`accepted ${String(options)}`);
}

function codes(options) {
  return planvault.validate(planvault.parseGeneratedPlan(plan, options)).diagnostics.map((d) => d.code);
}

test("absent values: null and undefined are the default", () => {
  const plain = codes(undefined);
  for (const options of [null, {}, { file: null }, { file: undefined }, { allowedTools: null }, { limits: undefined },
    { limits: { maxNodes: null } }, { limits: { maxNodes: undefined } }]) {
    assert.deepEqual(codes(options), plain, JSON.stringify(options));
  }
  assert.deepEqual(plain, []);
  const named = planvault.validate(planvault.parseGeneratedPlan(plan, { file: "p.json", allowedTools: [] })).diagnostics;
  assert.ok(named.length > 0 && named.every((d) => d.file === "p.json"));
});

test("tool lists are arrays or any iterable of strings", () => {
  const refused = codes({ allowedTools: ["t1"] });
  assert.ok(refused.includes("tool-not-permitted"), refused.join());
  assert.deepEqual(codes({ allowedTools: new Set(["t1"]) }), refused);
  assert.deepEqual(codes({ allowedTools: (function* () { yield "t1"; })() }), refused);
  assert.ok(codes({ availableTools: ["t1"] }).includes("unknown-tool"));
  assert.ok(!codes({ allowedTools: ["t1", "t2"], availableTools: ["t1", "t2"] }).includes("unknown-tool"));
});

test("limits are non-negative safe integers or BigInts that fit", () => {
  assert.ok(codes({ limits: { maxNodes: 1 } }).includes("too-many-steps"));
  assert.ok(codes({ limits: { maxNodes: 1n } }).includes("too-many-steps"));
  assert.ok(!codes({ limits: { maxNodes: 2 ** 32 - 1 } }).includes("too-many-steps"));
  assert.ok(codes({ limits: { maxDependencies: 0 } }).includes("too-many-dependencies"));
});

test("a value of the wrong type is refused with serde's message", () => {
  const cases = [
    [{ file: 3 }, "invalid type: floating point `3.0`, expected a string"],
    [{ file: -0 }, "invalid type: floating point `-0.0`, expected a string"],
    [{ file: true }, "invalid type: boolean `true`, expected a string"],
    [{ file: new Uint8Array([1]) }, "invalid type: byte array, expected a string"],
    [{ file: new ArrayBuffer(2) }, "invalid type: byte array, expected a string"],
    [{ file: {} }, "invalid type: JsValue(Object({})), expected a string"],
    [{ file: 10n }, "invalid type: JsValue(10n), expected a string"],
    [{ file: Symbol("s") }, "invalid type: JsValue(Symbol(s)), expected a string"],
    [{ allowedTools: 1 }, "TypeError: Reflect.get called on non-object"],
    [{ allowedTools: [1] }, "invalid type: floating point `1.0`, expected a string"],
    [{ allowedTools: ["t1", null] }, "invalid type: unit value, expected a string"],
    [{ allowedTools: { 0: "t1", length: 1 } }, 'invalid type: JsValue(Object({"0":"t1","length":1})), expected a sequence'],
    [{ allowedTools: { [Symbol.iterator]() { throw new TypeError("no iter"); } } }, "TypeError: no iter"],
    [{ allowedTools: { [Symbol.iterator]() { return { next() { throw new Error("bad next"); } }; } } }, "bad next"],
    [{ availableTools: {} }, "invalid type: JsValue(Object({})), expected a sequence"],
    [{ limits: { maxNodes: -1 } }, "invalid type: floating point `-1.0`, expected usize"],
    [{ limits: { maxNodes: 1.5 } }, "invalid type: floating point `1.5`, expected usize"],
    [{ limits: { maxNodes: NaN } }, "invalid type: floating point `NaN`, expected usize"],
    [{ limits: { maxNodes: Infinity } }, "invalid type: floating point `inf`, expected usize"],
    [{ limits: { maxNodes: 2 ** 53 } }, "invalid type: floating point `9007199254740992.0`, expected usize"],
    [{ limits: { maxNodes: "1" } }, 'invalid type: string "1", expected usize'],
    [{ limits: { maxNodes: true } }, "invalid type: boolean `true`, expected usize"],
    [{ limits: { maxNodes: {} } }, "invalid type: JsValue(Object({})), expected usize"],
    [{ limits: { maxNodes: 2 ** 32 } }, "invalid value: integer `4294967296`, expected usize"],
    [{ limits: { maxNodes: 2n ** 40n } }, "invalid value: integer `1099511627776`, expected usize"],
    [{ limits: { maxNodes: -5n } }, "Couldn't deserialize u64 from a BigInt outside u64::MIN..u64::MAX bounds"],
    // The first bad field in declaration order is the one named.
    [{ limits: { maxNodes: "x", maxArgsDepth: "y" } }, 'invalid type: string "x", expected usize'],
    [{ allowedTools: 3, file: 4 }, "invalid type: floating point `4.0`, expected a string"],
  ];
  for (const [options, message] of cases) assert.equal(refusal(options), message);
});

test("a getter's exception reaches the caller as it was thrown", () => {
  const thrown = new Error("getter threw");
  assert.throws(() => planvault.parseGeneratedPlan(plan, { get file() { throw thrown; } }), (error) => error === thrown);
  // The instance still works.
  assert.ok(codes({ file: "after.json", allowedTools: [] }).includes("tool-not-permitted"));
});
