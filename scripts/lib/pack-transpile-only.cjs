// Preloaded (node -r) into the policy pack process that scripts/lib/analyzer.ts starts offline:
// @pulumi/pulumi's run-policy-pack registers ts-node with `typeCheck: true`, which type-checks the
// pack on every start (about 4 s of CPU per pack, 4 packs for `npm run policy`: npm run bench).
// `npm run typecheck` already checks policy/ with the rest of the repository (tsconfig.json), so
// offline the pack is only transpiled. `pulumi preview --policy-pack` is not affected.
"use strict";
const Module = require("node:module");
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const loaded = load.apply(this, arguments);
  if (typeof request === "string" && /(^|[\\/])ts-node([\\/]dist[\\/]index\.js)?$/.test(request) && loaded && typeof loaded.register === "function" && !loaded.__openkeelTranspileOnly) {
    const register = loaded.register;
    loaded.register = (opts = {}) => register({ ...opts, typeCheck: false, transpileOnly: true });
    loaded.__openkeelTranspileOnly = true;
  }
  return loaded;
};
