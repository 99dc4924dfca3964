// V8's compiled code of the JavaScript a process loads, kept across runs: the offline commands
// (cli/ts-run.cjs) and the policy pack offline (offline-engine/pack-transpile-only.cjs) load the
// Pulumi SDK, gRPC and protobuf, hundreds of modules, and compiling them was a third of a pack's
// start and of a program's first run (`node --cpu-prof`). Each module is compiled with the code
// V8 produced for it last time, taken after the run so that it holds the functions the run
// compiled too, not only the top level; a module whose source changed (a hash of it) is compiled
// afresh. One file per kind of process (the main script), rewritten at exit when a module was
// compiled afresh. What runs is the same JavaScript: only V8's compile step is skipped.
//
// TypeScript of this repository is left to Node's own compile (cli/ts-run.cjs), which reads its
// source map.
"use strict";
const nodeCrypto = require("node:crypto");
const fs = require("node:fs");
const Module = require("node:module");
const path = require("node:path");
const vm = require("node:vm");

/** Bump when what is stored changes. */
const FORMAT = 1;

/**
 * Install the cache for this process under `dir`, for the JavaScript files `wanted` picks;
 * `saveOnSignal`: also when SIGTERM or SIGINT ends the process (a pack). The
 * store is one file, `<dir>/<hash of the main script's name, Node and V8 versions>.bin`: the length of
 * its index (4 bytes), the index (JSON, per file: its source hash and where its code lies after
 * the index), then the code of every module; written whole, then renamed into place.
 */
function installCodeCache(dir, wanted, { saveOnSignal = false } = {}) {
  if (!vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER || process.env.OPENKEEL_CODE_CACHE === "0") return;
  // the kind of process: its script, named from its folder on (`scripts/render.ts` of any checkout)
  const main = path.join(path.basename(path.dirname(process.argv[1] ?? "")), path.basename(process.argv[1] ?? ""));
  const name = nodeCrypto
    .createHash("sha256")
    .update(JSON.stringify([FORMAT, process.version, process.versions.v8, process.arch, main]))
    .digest("hex")
    .slice(0, 24);
  const file = path.join(dir, `${name}.bin`);
  let stored = {};
  let blob = Buffer.alloc(0);
  try {
    const whole = fs.readFileSync(file);
    const length = whole.readUInt32LE(0);
    stored = JSON.parse(whole.subarray(4, 4 + length).toString("utf8"));
    blob = whole.subarray(4 + length);
  } catch {
    stored = {};
  }
  /** Every module compiled here: its script (for its code at exit) and source hash. */
  const scripts = new Map();
  let fresh = false;

  const compile = Module.prototype._compile;
  Module.prototype._compile = function (content, filename) {
    if (typeof filename !== "string" || !wanted(filename)) return compile.call(this, content, filename);
    const hash = nodeCrypto.createHash("sha1").update(content).digest("base64");
    const entry = stored[filename];
    const cachedData = entry && entry[0] === hash ? blob.subarray(entry[1], entry[2]) : undefined;
    const script = new vm.Script(Module.wrap(stripShebang(content)), {
      filename,
      cachedData,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    if (cachedData === undefined || script.cachedDataRejected) fresh = true;
    scripts.set(filename, { script, hash });
    const wrapper = script.runInThisContext({ displayErrors: true });
    return wrapper.call(this.exports, this.exports, requireOf(this), this, filename, path.dirname(filename));
  };

  const save = () => {
    if (!fresh) return;
    fresh = false;
    try {
      const parts = [];
      const next = {};
      let at = 0;
      for (const [filename, { script, hash }] of scripts) {
        const code = script.createCachedData();
        next[filename] = [hash, at, at + code.length];
        parts.push(code);
        at += code.length;
      }
      const head = Buffer.from(JSON.stringify(next));
      const length = Buffer.alloc(4);
      length.writeUInt32LE(head.length, 0);
      fs.mkdirSync(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, Buffer.concat([length, head, ...parts]));
      fs.renameSync(tmp, file);
    } catch {
      // a read-only checkout: compiled afresh next time
    }
  };
  process.once("exit", save);
  // a pack ends by SIGTERM (offline-engine/analyzer.ts): saved first, then ended by the signal as
  // before. Not for the offline commands: a listener defers a signal until the event loop turns,
  // so Ctrl-C would wait for a command's synchronous work (a whole render) to end.
  if (!saveOnSignal) return;
  for (const signal of ["SIGTERM", "SIGINT"])
    process.once(signal, () => {
      save();
      process.kill(process.pid, signal);
    });
}

function stripShebang(content) {
  return content.startsWith("#!") ? content.replace(/^#![^\n]*/, "") : content;
}

/** The `require` Node hands a module (lib/internal/modules/helpers.js makeRequireFunction). */
function requireOf(mod) {
  const require = (id) => mod.require(id);
  const resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

module.exports = { installCodeCache };
