// The policy pack's transpiled files, kept across pack starts (pack-transpile-only.cjs installs it):
// each file's output is stored under a hash of everything it depends on (the source, its path, the
// compiler options, the ts-node and TypeScript versions), so a changed input is a new entry and a
// kept entry is exactly what ts-node produced for those inputs.
"use strict";
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

/** Wrap a ts-node service's compile with the cache in `dir`; returns the service. */
function cacheTranspiles(service, tsNodeVersion, dir) {
  const compile = service.compile;
  const salt = JSON.stringify([service.ts.version, tsNodeVersion, service.config.options]);
  service.compile = (code, fileName, lineOffset) => {
    const file = path.join(dir, `${crypto.createHash("sha256").update(salt).update("\0").update(fileName).update("\0").update(code).digest("hex")}.js`);
    try {
      return fs.readFileSync(file, "utf8");
    } catch {
      // not transpiled yet
    }
    const output = compile(code, fileName, lineOffset);
    try {
      fs.mkdirSync(dir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, output);
      fs.renameSync(tmp, file);
    } catch {
      // a read-only checkout: transpiled again next time
    }
    return output;
  };
  return service;
}

module.exports = { cacheTranspiles };
