// Preloaded (node -r) into the policy pack process that scripts/lib/analyzer.ts starts offline:
// @pulumi/pulumi's run-policy-pack registers ts-node with `typeCheck: true`, which type-checks the
// pack on every start (about 4 s of CPU per pack: npm run bench). `npm run typecheck` already checks
// policy/ with the rest of the repository (tsconfig.json), so offline the pack is only transpiled,
// and each file once (pack-transpile-cache.cjs, under node_modules/.cache/): transpiling was most of
// a pack's start (`node --cpu-prof`). The output is ts-node's own, byte for byte; a stack trace out
// of the pack names transpiled lines, as ts-node maps only what it transpiled itself.
// `pulumi preview --policy-pack` is not affected.
"use strict";
const Module = require("node:module");
const path = require("node:path");
const { cacheTranspiles } = require("./pack-transpile-cache.cjs");

const CACHE = path.resolve(__dirname, "../../node_modules/.cache/openkeel-policy-pack");

const load = Module._load;
Module._load = function (request, parent, isMain) {
  const loaded = load.apply(this, arguments);
  if (typeof request === "string" && /(^|[\\/])ts-node([\\/]dist[\\/]index\.js)?$/.test(request) && loaded && typeof loaded.register === "function" && !loaded.__openkeelTranspileOnly) {
    const register = loaded.register;
    loaded.register = (opts = {}) => cacheTranspiles(register({ ...opts, typeCheck: false, transpileOnly: true }), loaded.VERSION, CACHE);
    loaded.__openkeelTranspileOnly = true;
  }
  return loaded;
};
