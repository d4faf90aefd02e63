#!/usr/bin/env node
// Build the npm package into npm/pkg:
//   cargo (wasm32, profile npm-release; PLANVAULT_NPM_PROFILE picks another;
//   std built from source for size when its sources are installed)
//   → wasm-bindgen --target web
//   → wasm-opt -O3 (npm-release; -Oz for the other profiles) --low-memory-unused
//     (from the `binaryen` npm package, when installed)
//   → the entries: node.js, browser.js, inline.js (wasm as base64), index.d.ts.
// Twice: the full API into pkg/ (`planvault`, `planvault/inline`), and the
// markdown validator alone, without default features, into pkg/markdown/
// (`planvault/markdown`, `planvault/markdown/inline`).
// Prints the sizes the budget in BENCHMARKS.md is about.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";

const npmDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const repoDir = resolve(npmDir, "..");
const pkgDir = join(npmDir, "pkg");

function run(command, args, options = {}) {
  console.error(`$ ${command} ${args.join(" ")}`);
  try {
    return execFileSync(command, args, { stdio: ["ignore", "pipe", "inherit"], ...options });
  } catch (error) {
    console.error(`build failed: ${command} exited with ${error.status ?? error.message}`);
    process.exit(1);
  }
}

// 1. The wasm, located through cargo's own artifact messages (honours
// CARGO_TARGET_DIR). scripts/wasm-env picks the toolchain route that works on
// this machine (rustup's wasm32 target, or Debian's Rust with build-std).
const profile = process.env.PLANVAULT_NPM_PROFILE ?? "npm-release";
const cargoArgs = [
  "build", "-p", "planvault-wasm", "--target", "wasm32-unknown-unknown", "--profile", profile,
  "--message-format=json-render-diagnostics",
];
const wasmEnv = join(repoDir, "scripts", "wasm-env");
const withWasmEnv = (argv) => (existsSync(wasmEnv) ? ["bash", [wasmEnv, ...argv]] : [argv[0], argv.slice(1)]);

// std compiled with the package, when the toolchain has std's sources
// (rustup's `rust-src` component; Debian's `rust-web-src` on its build-std
// route): at the profile's opt-level, inside the one LTO unit, and with std's
// `optimize_for_size` feature (a merge sort instead of driftsort/ipnsort per
// element type, the short integer and float formatting paths), ~20 KB gzipped
// less than the prebuilt std, the same results. Without the sources, or with
// PLANVAULT_NPM_STD=prebuilt (or PLANVAULT_PREBUILT_STD, as for the app and
// worker bundles), the prebuilt std is linked and the build says so.
const prebuiltStd = process.env.PLANVAULT_NPM_STD === "prebuilt" || Boolean(process.env.PLANVAULT_PREBUILT_STD);
function stdSources() {
  if (prebuiltStd) return null;
  const probe = 'd="$("${RUSTC:-rustc}" --print sysroot)/lib/rustlib/src/rust/library"; [ -d "$d/std" ] && echo "$d"';
  const [probeCommand, probeArgs] = withWasmEnv(["bash", "-c", probe]);
  try {
    return execFileSync(probeCommand, probeArgs, { cwd: repoDir, stdio: ["ignore", "pipe", "ignore"] }).toString().trim() || null;
  } catch {
    return null;
  }
}
const stdSource = stdSources();
// wasm SIMD (Node 16.4+, every current browser, Safari 16.4+): memchr's line
// and link scans run 16 bytes at a time, ~15% off parseVault. Set here, not
// in .cargo/config.toml, so the app and worker bundles are unaffected; the
// variable replaces that file's wasm32 rustflags, so it repeats them.
const cargoEnv = {
  ...process.env,
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS: "--cfg=web_sys_unstable_apis -Ctarget-feature=+simd128",
};
if (stdSource) {
  Object.assign(cargoEnv, {
    RUSTC_BOOTSTRAP: "1",
    CARGO_UNSTABLE_BUILD_STD: "std,panic_abort",
    CARGO_UNSTABLE_BUILD_STD_FEATURES: "optimize_for_size",
  });
  // npm-release is built for speed: keep the prebuilt std's opt-level 3
  // where the vault loader spends its time in std, core (UTF-8 validation,
  // memchr, str searching) and the allocator; the rest of std builds at `z`.
  // (Given here, not in Cargo.toml, where builds without build-std would
  // warn that no package matches.)
  if (profile === "npm-release") {
    for (const crate of ["core", "dlmalloc"]) {
      cargoArgs.push("--config", `profile.npm-release.package.${crate}.opt-level=3`);
    }
  }
  // planvault-core's modules off the vault loader's path (PLAN.md, generated
  // plans, exports, the YAML writer) compiled for size although the crate is
  // at opt-level 3: their functions carry `optimize(size)` under this cfg
  // (an unstable attribute, so only on this route). ~9 KB gzipped; parseVault
  // is untouched.
  cargoEnv.CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS += " --cfg=planvault_size";
  // No source locations in panics (-Zlocation-detail, unstable like
  // build-std): every bounds check, unwrap and expect otherwise carries a
  // file path, line and column, ~9 KB gzipped in all. An internal-panic error
  // then reads "panicked at <redacted>:0:0: <the panic message>". To see
  // where a reported panic comes from, build with PLANVAULT_NPM_PANIC_LOCATIONS=1.
  if (!process.env.PLANVAULT_NPM_PANIC_LOCATIONS) {
    cargoEnv.CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS += " -Zlocation-detail=none";
  }
} else {
  console.error(
    prebuiltStd
      ? "std: prebuilt (PLANVAULT_NPM_STD=prebuilt or PLANVAULT_PREBUILT_STD set)"
      : "std: prebuilt, ~20 KB gzipped larger (no std sources: `rustup component add rust-src`)",
  );
}

// The two builds: what each compiles and which files become its entries.
const variants = [
  { name: "full", dir: pkgDir, features: [], js: "js", only: ["full.js", "full.d.ts"] },
  { name: "markdown", dir: join(pkgDir, "markdown"), features: ["--no-default-features"], js: join("js", "markdown"), only: [] },
];
const entrySources = (variant) => ({
  "api.js": join(npmDir, "js", "api.js"),
  ...Object.fromEntries(variant.only.map((file) => [file, join(npmDir, "js", file)])),
  "node.js": join(npmDir, "js", "node.js"),
  "browser.js": join(npmDir, "js", "browser.js"),
  "public.js": join(npmDir, variant.js, "public.js"),
  "api.d.ts": join(npmDir, "js", "api.d.ts"),
  "index.d.ts": join(npmDir, variant.js, "index.d.ts"),
});
const inlineTemplate = join(npmDir, "js", "inline.template.js");

function cargoBuild(variant) {
  const [command, args] = withWasmEnv(["cargo", ...cargoArgs, ...variant.features]);
  const messages = run(command, args, { cwd: repoDir, env: cargoEnv, maxBuffer: 256 * 1024 * 1024 }).toString();
  const wasmIn = messages
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line))
    .filter((m) => m.reason === "compiler-artifact" && m.target?.name === "planvault_wasm")
    .flatMap((m) => m.filenames)
    .find((f) => f.endsWith(".wasm"));
  if (!wasmIn) throw new Error("cargo reported no planvault_wasm.wasm artifact");
  // Both builds leave their wasm at the same path: take it before the next.
  return readFileSync(wasmIn);
}
const wasmIns = variants.map(cargoBuild);

// The license texts beside package.json (its `files` lists them).
for (const file of ["LICENSE-MIT", "LICENSE-APACHE"]) copyFileSync(join(repoDir, file), join(npmDir, file));

// Nothing changed since the last build (same wasm, same entry sources): keep pkg/.
const stampHash = createHash("sha256");
variants.forEach((variant, i) => {
  stampHash.update(wasmIns[i]);
  for (const source of Object.values(entrySources(variant))) stampHash.update(readFileSync(source));
});
const stamp = stampHash.update(readFileSync(inlineTemplate)).update(readFileSync(fileURLToPath(import.meta.url))).digest("hex");
const stampFile = join(pkgDir, ".build-stamp");
if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp && process.argv[2] !== "--force") {
  console.log(JSON.stringify(JSON.parse(readFileSync(join(pkgDir, "sizes.json"), "utf8"))), "(unchanged)");
  process.exit(0);
}
rmSync(pkgDir, { recursive: true, force: true });

const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;

function packageVariant(variant, wasmIn) {
  const dir = variant.dir;
  mkdirSync(dir, { recursive: true });
  const wasmInFile = join(dir, "planvault_wasm.in.wasm");
  writeFileSync(wasmInFile, wasmIn);
  // 2. The glue. No default module path: each entry says where the wasm comes
  // from, so no entry drags `import.meta.url` into a CommonJS bundle.
  run("wasm-bindgen", [
    "--target", "web",
    "--omit-default-module-path",
    "--experimental-reset-state-function",
    "--out-dir", dir,
    "--out-name", "planvault_wasm",
    wasmInFile,
  ]);
  rmSync(join(dir, "planvault_wasm_bg.wasm.d.ts"), { force: true });
  rmSync(join(dir, ".gitignore"), { force: true });
  rmSync(wasmInFile);

  // 3. wasm-opt, when the binaryen npm package is installed (Debian's is too old).
  const wasmFile = join(dir, "planvault_wasm_bg.wasm");
  const beforeOpt = statSync(wasmFile).size;
  if (existsSync(wasmOpt)) {
    const features = [
      "--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext",
      "--enable-mutable-globals", "--enable-reference-types", "--enable-multivalue", "--enable-simd",
    ];
    // --low-memory-unused: lets wasm-opt fold constant address offsets into
    // loads and stores (−2.4 KB gzipped), assuming no address arithmetic
    // wraps around into the first 1 KB of memory. rustc links wasm32 with the
    // stack first: [0, 1 MiB) is the shadow stack, growing down, and data
    // starts at 1 MiB, so only a stack exhausted to its last kilobyte reaches
    // there, and never through a wrapped address. The producers and
    // target-features sections are for tools, not engines (−0.26 KB).
    const strip = ["--strip-producers", "--strip-target-features"];
    // npm-release is the speed build: -O3 here, measured on the same input,
    // runs parseVault ~3% faster than -Oz for +0.15 KB gzipped. Other
    // profiles stay at -Oz.
    const level = profile === "npm-release" ? "-O3" : "-Oz";
    run(wasmOpt, [level, "--low-memory-unused", ...strip, ...features, wasmFile, "-o", wasmFile]);
  } else {
    console.error("wasm-opt not installed (npm install in npm/ brings it): skipping");
  }

  // 4. The entries. `public.js` and `index.d.ts` say what the entries export.
  for (const [file, source] of Object.entries(entrySources(variant))) {
    copyFileSync(source, join(dir, file));
  }
  const wasmBytes = readFileSync(wasmFile);
  const inline = readFileSync(inlineTemplate, "utf8").replace("__WASM_BASE64__", wasmBytes.toString("base64"));
  writeFileSync(join(dir, "inline.js"), inline);

  // 5. Sizes.
  const glue = readFileSync(join(dir, "planvault_wasm.js"));
  const api = readFileSync(join(dir, "api.js"));
  return {
    wasmBeforeWasmOpt: beforeOpt,
    wasm: wasmBytes.length,
    wasmGzip: gz(wasmBytes),
    jsGzip: gz(Buffer.concat([glue, api])),
    inlineGzip: gz(Buffer.from(inline)),
  };
}

const wasmOpt = join(npmDir, "node_modules", ".bin", "wasm-opt");
const [full, markdown] = variants.map((variant, i) => packageVariant(variant, wasmIns[i]));
const sizes = {
  profile,
  std: stdSource ? "built with the package, optimize_for_size" : "prebuilt",
  panicLocations: !stdSource || Boolean(process.env.PLANVAULT_NPM_PANIC_LOCATIONS),
  ...full,
  markdown,
};
writeFileSync(join(pkgDir, "sizes.json"), JSON.stringify(sizes, null, 2) + "\n");
writeFileSync(stampFile, stamp);
console.log(JSON.stringify(sizes));
