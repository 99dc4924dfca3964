// Preloaded (node -r) into the policy pack process that offline-engine/analyzer.ts starts offline.
// @pulumi/pulumi's run-policy-pack (cmd/run-policy-pack/run.js) loads TypeScript, parses the pack's
// tsconfig.json with it, and registers ts-node with `typeCheck: true`, which type-checks the pack on
// every start (about 4 s of CPU per pack: npm run bench). `npm run typecheck` already checks policy/
// with the rest of the repository (tsconfig.json), so offline the pack is only transpiled, each file
// once: its output is kept in node_modules/.cache/ (pack-transpile-cache.cjs), and TypeScript itself
// is loaded only when a file must be transpiled: loading and running it was most of a pack's start
// (`node --cpu-prof`). The output is ts-node's own (transpile-only, with the options run-policy-pack
// gives it), byte for byte; a stack trace out of the pack then names transpiled lines.
// `pulumi preview --policy-pack` is not affected.
"use strict";
const fs = require("node:fs");
const Module = require("node:module");
const path = require("node:path");
const { cachedCompile } = require("./pack-transpile-cache.cjs");
const { installCodeCache } = require("../cli/code-cache.cjs");

const CACHE = path.resolve(__dirname, "../node_modules/.cache/openkeel-policy-pack");
// V8's code for the SDK, ts-node and the pack's transpiled files, kept across pack starts (a pack
// is ended by SIGTERM: saved then too)
installCodeCache(path.join(CACHE, "v8"), () => true, { saveOnSignal: true });
const TYPESCRIPT = require.resolve("typescript");
const TYPESCRIPT_VERSION = require("typescript/package.json").version;

const load = Module._load;
let typescript;
const realTypeScript = () => (typescript ??= load.call(Module, TYPESCRIPT, null, false));
const parsedConfigs = cachedCompile(CACHE, JSON.stringify(["tsconfig", TYPESCRIPT_VERSION]), (text, file) =>
  JSON.stringify(realTypeScript().parseConfigFileTextToJson(file, text)),
);
/**
 * TypeScript as run-policy-pack sees it before anything is transpiled: its version, and its
 * tsconfig.json reading (kept like a transpiled file); anything else loads the real module.
 */
const lazyTypeScript = new Proxy(
  {},
  {
    get: (_, key) =>
      key === "version"
        ? TYPESCRIPT_VERSION
        : key === "parseConfigFileTextToJson"
          ? (file, text) => JSON.parse(parsedConfigs(text, file))
          : Reflect.get(realTypeScript(), key),
    has: (_, key) => Reflect.has(realTypeScript(), key),
    ownKeys: () => Reflect.ownKeys(realTypeScript()),
    getOwnPropertyDescriptor: (_, key) => {
      const d = Reflect.getOwnPropertyDescriptor(realTypeScript(), key);
      return d && { ...d, configurable: true };
    },
  },
);

/**
 * ts-node's register, transpile-only and through the cache: a `.ts` file found in the cache is
 * compiled as it is; otherwise a ts-node service (created on the first such file) transpiles it.
 */
function register(tsNode, opts) {
  const options = { ...opts, typeCheck: false, transpileOnly: true };
  const tsconfig = path.resolve("tsconfig.json");
  const salt = JSON.stringify([TYPESCRIPT_VERSION, tsNode.VERSION, options, fs.existsSync(tsconfig) ? fs.readFileSync(tsconfig, "utf8") : null]);
  let service;
  const compile = cachedCompile(CACHE, salt, (code, fileName) => (service ??= tsNode.create(options)).compile(code, fileName));
  const js = require.extensions[".js"];
  require.extensions[".ts"] = (m, fileName) => {
    // ts-node leaves node_modules alone, to the .js loader
    if (/[\\/]node_modules[\\/]/.test(fileName)) return js(m, fileName);
    m._compile(compile(fs.readFileSync(fileName, "utf8"), fileName), fileName);
  };
}

Module._load = function (request, parent, isMain) {
  if (request === "typescript" && typescript === undefined && Module._resolveFilename(request, parent, isMain) === TYPESCRIPT) return lazyTypeScript;
  const loaded = load.apply(this, arguments);
  if (
    typeof request === "string" &&
    /(^|[\\/])ts-node([\\/]dist[\\/]index\.js)?$/.test(request) &&
    loaded &&
    typeof loaded.register === "function" &&
    !loaded.__openkeelTranspileOnly
  ) {
    loaded.register = (opts = {}) => register(loaded, opts);
    loaded.__openkeelTranspileOnly = true;
  }
  return loaded;
};
