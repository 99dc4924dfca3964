// npm run bench [-- --sizes 11,100,500,1000,5000] [--repeat 2] [--out bench/results.json] [--skip-tests] [--skip-engine] [--engine-tries 3] [--port-offset <n>]
//               [--ci-figures [--engine-build-log .e2e/engine-build.log | --engine-out <build.sh's OUT>] [--e2e-dir .e2e]] [--first-up-only]:
// what the offline pipeline costs, per shipped stack and per generated inventory (bench/generate.ts):
// render, placement, validate and policy times and peak memory, the whole pipeline over the four
// stacks, kubeconform alone on the same files (the floor for validation; issue 16's ratios against it
// are printed, no longer checked), `npm run policy` and `npm test` as a developer runs them, what an
// operator waits for (a 2000-node preview, the edit loop, the pull-request workflow offline), and
// every target of issue 25 measured in this run, each printed against its goal (docs/testing-and-bench.md, "npm run bench").
// Prints the tables and writes the JSON. When the real engine is on PATH (pulumi, its Node language
// host, the kubernetes and random providers, kubectl) and the e2e's cluster script exists, it also
// times `pulumi preview --policy-pack policy` of a deployed lab and prod-medium (`npm run e2e --
// --time-preview`, minutes per stack) against `npm run policy -- --stack <s>`: the offline path's
// goal is ≥ 10× faster; otherwise it says loudly why it did not measure it. With the engine it also
// deploys prod-large twice, each on a fresh cluster whose kwok holds every pod 10-40 s as a kubelet
// pulling and starting it would (e2e/harness/readiness.ts): once with the phases as barriers
// (OPENKEEL_DEPLOY_GRAPH=phase-barriers), once with the dependencies derived from what each unit
// uses; it prints both first-up times, their ratio (goal ≤ 0.6) and each run's longest chain (goal
// ≤ 6 units) (issue 46, about 20 minutes). --first-up-only: only that, into results.json's
// `firstUp`, everything else kept. --port-offset <n>: the engine's clusters on cluster.sh's ports + n.
// --ci-figures (issue 23) measures nothing: it records what a CI run cost (the engine build's
// summary from build.sh's log, or from the file times of its OUT for a build whose log is gone, each stack's .e2e/<stack>/steps.json, the bench's npm test ×2)
// against the CI limit of 90 minutes in results.json's `ci`, keeping everything else; a full run
// keeps the `ci` it finds.
//
// Method. Each phase runs in its own child process (bench/bench-child.ts), which reports the
// phase's own time (module loading excluded) and its peak resident set, process.resourceUsage()
// .maxRSS: the high-water mark of that process, so it covers the phase and what the phase needs
// (placement and policy build their plan first), never another phase; a policy phase also reports
// its pack processes' CPU time and peak (VmHWM). kubeconform's peak is its VmHWM from
// /proc/<pid>/status, read every few milliseconds while it runs (Linux; "-" elsewhere). Each
// measurement is repeated (--repeat; the whole-pipeline ones 3 times more) and the fastest run
// kept: the machine is shared, and the minimum is the least disturbed figure (`npm test` runs once).
// Speed goals are read here, never asserted by tests.
import { run } from "../cli/cli";
import { benchMain } from "../bench/bench";

run(benchMain);
