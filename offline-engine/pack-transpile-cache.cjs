// The policy pack's transpiled files, kept across pack starts (pack-transpile-only.cjs uses it):
// each file's output is stored under a hash of everything it depends on (`salt`: the compiler
// options, the ts-node and TypeScript versions, the pack's tsconfig; then the file's path and
// source), so a changed input is a new entry and a kept entry is exactly what ts-node produced for
// those inputs.
"use strict";
const nodeCrypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

/** `compile(code, fileName)` through the cache in `dir`: the real compile runs once per set of inputs. */
function cachedCompile(dir, salt, compile) {
  return (code, fileName) => {
    const file = path.join(dir, `${nodeCrypto.createHash("sha256").update(salt).update("\0").update(fileName).update("\0").update(code).digest("hex")}.js`);
    try {
      return fs.readFileSync(file, "utf8");
    } catch {
      // not transpiled yet
    }
    const output = compile(code, fileName);
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
}

module.exports = { cachedCompile };
