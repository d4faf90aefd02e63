// Bundle the plugin into the single main.js Obsidian loads.
// planvault/markdown/inline carries its wasm as base64, so nothing is
// fetched at run time. Obsidian provides `obsidian`, `electron` and
// CodeMirror: they stay external.
import esbuild from "esbuild";

const result = await esbuild.build({
  entryPoints: ["src/main.ts"],
  bundle: true,
  format: "cjs",
  platform: "browser",
  target: "es2022",
  external: ["obsidian", "electron", "@codemirror/*", "@lezer/*"],
  outfile: "main.js",
  logLevel: "warning",
  metafile: true,
});
if (result.warnings.length > 0) {
  // A warning here (import.meta in a CommonJS bundle, a missing export) is
  // a package defect a plugin author would hit: fail the build.
  process.exit(1);
}
const size = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
console.log(`main.js: ${size} bytes`);
