// How every offline command runs its TypeScript: preloaded with `node -r ./cli/ts-run.cjs
// scripts/<name>.ts` (package.json, and every child process the commands, the bench and the tests
// start: cli/ts-command.ts). It replaces tsx at run time, whose loader hooks every module the
// process resolves and loads (@pulumi/pulumi took about twice as long to load under it; `node
// --cpu-prof`), with the least that runs this repository's code:
//
// - `.ts` files are transpiled by esbuild (CommonJS, as tsconfig.json's `module`; `import()` as
//   `require`, so that `await import("../x")` resolves like a static import), each once: the output
//   is kept in node_modules/.cache/openkeel-ts/ under a hash of the file's name, its source and the
//   transpiler's version and options, so an edit transpiles that file alone. The type check is
//   `npm run typecheck`'s, as with tsx.
// - Stack traces name the TypeScript lines (each output carries its source map; Node maps the
//   frames), while the JavaScript of node_modules is compiled without reading its maps, which cost
//   a quarter of a second for the Pulumi SDK alone.
// - `require("typescript")` from @pulumi/pulumi (its closure serializer, which the programs never
//   use offline) gets a stand-in that loads the compiler on first use: loading TypeScript was half
//   of loading the SDK.
// - On a Node with a module compile cache (22.1+), V8's compiled code is kept too.
//
// `pulumi preview`/`up` run index.ts through Pulumi's own Node runtime, untouched by this file.
"use strict";
const nodeCrypto = require("node:crypto");
const fs = require("node:fs");
const Module = require("node:module");
const path = require("node:path");
const { installCodeCache } = require("./code-cache.cjs");

const CACHE = path.resolve(__dirname, "../node_modules/.cache/openkeel-ts");
/** Bump when the transpiled form changes in a way the inputs below do not say. */
const FORMAT = 2;
const OPTIONS = {
  loader: "ts",
  format: "cjs",
  target: "node20",
  sourcemap: "inline",
  supported: { "dynamic-import": false },
};

let salt;
let misses = 0;
let oneShot;
let service;
/**
 * esbuild, as it runs best for the number of files to transpile: an edited file or two each by a
 * short-lived esbuild process (about 15 ms each), a cold cache (a fresh clone: every file) by one
 * esbuild kept running in a worker thread (90 ms to start, then 2 ms a file).
 */
function esbuild() {
  if (++misses > 3) return (service ??= freshEsbuild(undefined));
  return (oneShot ??= freshEsbuild("0"));
}
function freshEsbuild(workerThreads) {
  const id = require.resolve("esbuild");
  const before = process.env.ESBUILD_WORKER_THREADS;
  delete require.cache[id];
  if (workerThreads === undefined) delete process.env.ESBUILD_WORKER_THREADS;
  else process.env.ESBUILD_WORKER_THREADS = workerThreads;
  try {
    return require(id);
  } finally {
    if (before === undefined) delete process.env.ESBUILD_WORKER_THREADS;
    else process.env.ESBUILD_WORKER_THREADS = before;
    delete require.cache[id];
  }
}
const saltOf = () => (salt ??= JSON.stringify([FORMAT, require("esbuild/package.json").version, OPTIONS]));

/** The JavaScript of one TypeScript file: from the cache, or transpiled and kept. */
function transpiled(source, file) {
  // keyed by the file's name, not its folder: the same file of another checkout (the preview's
  // base) is the same output, its map naming the file beside it (Node resolves it from there)
  const name = path.basename(file);
  const key = nodeCrypto.createHash("sha256").update(saltOf()).update("\0").update(name).update("\0").update(source).digest("hex");
  const cached = path.join(CACHE, `${key}.js`);
  try {
    return fs.readFileSync(cached, "utf8");
  } catch {
    // not transpiled yet
  }
  const code = esbuild().transformSync(source, { ...OPTIONS, sourcefile: name }).code;
  try {
    fs.mkdirSync(CACHE, { recursive: true });
    const tmp = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, code);
    fs.renameSync(tmp, cached);
  } catch {
    // a read-only checkout: transpiled again next time
  }
  return code;
}

installCodeCache(path.join(CACHE, "v8"), (file) => !file.endsWith(".ts"));

Module._extensions[".ts"] = function (m, file) {
  m._compile(transpiled(fs.readFileSync(file, "utf8"), file), file);
};

// Node reads a module's source map while it compiles it, when source maps are on: on for our
// TypeScript (whose maps are inline), off for everything else, and on in between, so that a stack
// trace is mapped when it is formatted.
if (typeof process.setSourceMapsEnabled === "function") {
  const compile = Module.prototype._compile;
  let mapped = false;
  const maps = (on) => {
    if (on !== mapped) process.setSourceMapsEnabled((mapped = on));
  };
  maps(true);
  Module.prototype._compile = function (content, file) {
    maps(typeof file === "string" && file.endsWith(".ts"));
    try {
      return compile.call(this, content, file);
    } finally {
      maps(true);
    }
  };
}

const load = Module._load;
let typescript;
const TYPESCRIPT_SHIM = `${path.sep}@pulumi${path.sep}pulumi${path.sep}typescript-shim.js`;
const realTypeScript = (parent) => (typescript ??= load.call(Module, "typescript", parent, false));
Module._load = function (request, parent) {
  if (request === "typescript" && typescript === undefined && parent?.filename?.endsWith(TYPESCRIPT_SHIM)) {
    return new Proxy(
      {},
      {
        get: (_, key) => Reflect.get(realTypeScript(parent), key),
        has: (_, key) => Reflect.has(realTypeScript(parent), key),
        ownKeys: () => Reflect.ownKeys(realTypeScript(parent)),
        getOwnPropertyDescriptor: (_, key) => {
          const d = Reflect.getOwnPropertyDescriptor(realTypeScript(parent), key);
          return d && { ...d, configurable: true };
        },
      },
    );
  }
  return load.apply(this, arguments);
};

// our TypeScript too, where Node keeps compiled code itself (22.1+)
if (typeof Module.enableCompileCache === "function") Module.enableCompileCache(path.join(CACHE, "node"));
