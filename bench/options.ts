// The options of `npm run bench` (scripts/bench.ts's header is their --help), checked: a bad value
// is the caller's mistake, said with its fix.
import * as fs from "node:fs";
import * as path from "node:path";
import { args, EXIT_BAD_CONFIG, UserError } from "../cli/cli";
import { SCHEMAS_ENV, schemasDir } from "../tools/kubeconform";
import { MIN_GENERATED_NODES } from "./generate";

/** The bench's options, checked: bad values are the caller's mistake. */
export interface BenchOptions {
  sizes: number[];
  repeat: number;
  /** The whole-pipeline measures take a few seconds each: more tries, for one the machine leaves alone. */
  quick: number;
  engineTries: number;
  schemas: string;
  out: string;
  skipTests: boolean;
  skipEngine: boolean;
  /** Only the first-up comparison (issue 46), into results.json's `firstUp` and its targets. */
  firstUpOnly: boolean;
  /** cluster.sh's ports moved by this much for the engine's clusters (the e2e's --port-offset). */
  portOffset?: number | undefined;
  /** Only the CI figures (issue 23): from these logs, into results.json's `ci`. */
  ciFigures?: { engineBuildLog: string; e2eDir: string; engineOut?: string | undefined } | undefined;
}

export function benchOptions(): BenchOptions {
  const opts = args({
    sizes: { type: "string", default: `${MIN_GENERATED_NODES},100,500,1000,5000` },
    repeat: { type: "string", default: "2" },
    out: { type: "string", default: "bench/results.json" },
    schemas: { type: "string" },
    /** Do not time `npm test` (its target is then reported as not measured). */
    "skip-tests": { type: "boolean", default: false },
    /** Do not time `pulumi preview --policy-pack policy` (its targets are then reported as not measured). */
    "skip-engine": { type: "boolean", default: false },
    /** Timed `pulumi preview --policy-pack policy` runs per stack (each minutes of setup first). */
    "engine-tries": { type: "string", default: "3" },
    /** Only record the CI figures (results.json's `ci`) from an engine build log and the e2e reports. */
    "ci-figures": { type: "boolean", default: false },
    "engine-build-log": { type: "string", default: ".e2e/engine-build.log" },
    "e2e-dir": { type: "string", default: ".e2e" },
    /** Without the build's log: the engine build from the file times of its $OUT (engineBuildFromFileTimes). */
    "engine-out": { type: "string" },
    /** Only prod-large's first pulumi up, phase barriers vs derived dependencies (issue 46). */
    "first-up-only": { type: "boolean", default: false },
    "port-offset": { type: "string" },
  });
  const sizes = opts.sizes!.split(",").map(Number);
  const repeat = Number(opts.repeat);
  if (sizes.some((s) => !Number.isInteger(s) || s < MIN_GENERATED_NODES) || !Number.isInteger(repeat) || repeat < 1) {
    throw new UserError(`--sizes takes whole numbers of at least ${MIN_GENERATED_NODES}, comma-separated; --repeat a whole number ≥ 1`, EXIT_BAD_CONFIG);
  }
  const engineTries = Number(opts["engine-tries"]);
  if (!Number.isInteger(engineTries) || engineTries < 1)
    throw new UserError(`--engine-tries takes a whole number ≥ 1, not ${opts["engine-tries"]}`, EXIT_BAD_CONFIG);
  for (const needed of [500, 5000]) if (!sizes.includes(needed)) sizes.push(needed);
  sizes.sort((a, b) => a - b);
  const schemas = opts.schemas ?? schemasDir();
  if (!fs.existsSync(schemas))
    throw new UserError(
      `no offline schema folder at ${schemas}: pass --schemas <dir> or set ${SCHEMAS_ENV} (the bench never downloads schemas)`,
      EXIT_BAD_CONFIG,
    );
  const engineOut = opts["engine-out"] === undefined ? undefined : path.resolve(opts["engine-out"]);
  const portOffset = opts["port-offset"] === undefined ? undefined : Number(opts["port-offset"]);
  if (portOffset !== undefined && (!Number.isInteger(portOffset) || portOffset < 1 || portOffset > 40000))
    throw new UserError(`--port-offset takes a whole number from 1 to 40000, not ${opts["port-offset"]}`, EXIT_BAD_CONFIG);
  const ci = opts["ci-figures"] ? { engineBuildLog: path.resolve(opts["engine-build-log"]!), e2eDir: path.resolve(opts["e2e-dir"]!), engineOut } : undefined;
  return {
    sizes,
    repeat,
    quick: repeat + 3,
    engineTries,
    schemas,
    out: opts.out!,
    skipTests: opts["skip-tests"]!,
    skipEngine: opts["skip-engine"]!,
    firstUpOnly: opts["first-up-only"]!,
    portOffset,
    ciFigures: ci,
  };
}
