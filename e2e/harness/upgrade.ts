// `npm run e2e -- --upgrade-from <ref>` (issue 24 item 4): the stack is first deployed with the
// program of <ref> (a `git worktree add --detach` of it in the run's temp folder, its own
// `npm run render`, its own project copy), then the current program previews and applies on the
// same Pulumi state and cluster. The preview must propose no delete or replace of a resource the
// state protects (README "Upgrade from a release"); then the usual steps run on the current
// program. `npm run urns` proves the same URN continuity offline; this proves it on the engine.
import * as fs from "node:fs";
import * as path from "node:path";
import { EXIT_BAD_CONFIG, UserError } from "../../cli/cli";
import { resolveCommit } from "../../review/renders";
import { lastRelease } from "../../review/urns-command";
import { run } from "./proc";
import { copyProject, readStackConfig, setStackConfig, stackFile } from "./project";
import { protectedStillThere } from "./cluster-checks";
import { EVENT_LOG_ENV, eventLog, recordTimings } from "./up";
import { artifactDiff, type PredecessorProgram } from "./predecessor";
import { previewErrors, previewSteps, pulumi, summaryLine, type StepRecord } from "./pulumi";
import type { RenderedStack } from "./rendered";
import { apiWarnings, errorLines, recordRun, render, stateResources, type StackRun, type StateResource, type UpgradeFrom } from "./stack-run";

/** The word `--upgrade-from` takes for the repository's named last release (.ci/last-release, or a tag v<version>). */
export const LAST_RELEASE = "last-release";

/** The commit `--upgrade-from <ref>` names: `last-release` → lastRelease (review/urns-command.ts), else any git ref of `repo`. */
export function resolveUpgradeFrom(repo: string, ref: string): UpgradeFrom {
  if (ref === LAST_RELEASE) return lastRelease(repo);
  const commit = resolveCommit(repo, ref);
  if (!commit)
    throw new UserError(
      `--upgrade-from ${ref}: no such commit in ${repo}. Fix: fetch it (git fetch --tags origin), name another ref, or write --upgrade-from ${LAST_RELEASE} (the release .ci/last-release or a tag v<version> names)`,
      EXIT_BAD_CONFIG,
    );
  return { ref, commit, where: `--upgrade-from ${ref}` };
}

/** The operations of a preview step that delete what the state holds (a replace deletes the old object). */
const DESTRUCTIVE_OPS = new Set([
  "delete",
  "replace",
  "create-replacement",
  "delete-replaced",
  "discard",
  "discard-replaced",
  "import-replacement",
  "read-replacement",
]);

/** The proposed steps that would delete or replace a resource the state protects, one line each. */
export function protectedChanges(steps: Pick<StepRecord, "op" | "urn">[], state: StateResource[]): string[] {
  const protectedUrns = new Set(state.filter((x) => x.protect && x.urn).map((x) => x.urn!));
  return steps.filter((s) => DESTRUCTIVE_OPS.has(s.op) && protectedUrns.has(s.urn)).map((s) => `${s.op} of protected ${s.urn}`);
}

/** The old ref's program, checked out once per e2e run and shared by its stacks. */
export class OldProgram {
  readonly dir: string;
  /** how its node_modules came to be, for the report */
  modules = "";
  /**
   * Whether its own e2e served the real release manifests of a mirror folder (issue 23); before
   * that, it served a stand-in for every remote manifest, and that is what it was released on.
   */
  servedRealManifests = true;
  private ready?: Promise<void>;

  constructor(
    readonly from: UpgradeFrom,
    private readonly repoRoot: string,
    tmp: string,
  ) {
    this.dir = path.join(tmp, "upgrade-from", from.commit.slice(0, 12));
  }

  /** Its own e2e's contract charts (what its values were written for): e2e/charts, or test/e2e/charts before the harness left test/. */
  get chartsDir(): string {
    const current = path.join(this.dir, "e2e", "charts");
    return fs.existsSync(current) ? current : path.join(this.dir, "test", "e2e", "charts");
  }

  /** `git worktree add --detach`; `npm ci` only when its package-lock.json differs, else the current node_modules linked. */
  prepare(log: string): Promise<void> {
    this.ready ??= (async () => {
      fs.mkdirSync(path.dirname(this.dir), { recursive: true });
      // the old program's `../shared` defaults (schemas, mirror) resolve as in the repository
      const shared = path.resolve(this.repoRoot, "..", "shared");
      if (fs.existsSync(shared)) fs.symlinkSync(shared, path.join(path.dirname(this.dir), "shared"));
      const add = await run("git", ["-C", this.repoRoot, "worktree", "add", "--detach", this.dir, this.from.commit], { log });
      if (add.code !== 0) throw new Error(`git worktree add --detach ${this.dir} ${this.from.commit} exited ${add.code}: ${add.stderr.trim()}`);
      const grep = await run("git", ["-C", this.repoRoot, "grep", "-q", "OPENKEEL_MIRROR", this.from.commit, "--", "test/e2e", "e2e"], { log });
      this.servedRealManifests = grep.code === 0;
      const lock = (root: string) => fs.readFileSync(path.join(root, "package-lock.json"), "utf8");
      if (lock(this.dir) === lock(this.repoRoot)) {
        fs.symlinkSync(fs.realpathSync(path.join(this.repoRoot, "node_modules")), path.join(this.dir, "node_modules"), "dir");
        this.modules = "package-lock.json as the current one: the current node_modules linked";
        return;
      }
      const ci = await run("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: this.dir, log, timeoutMs: 15 * 60_000 });
      if (ci.code !== 0) throw new Error(`npm ci in ${this.dir} exited ${ci.code}: ${ci.stderr.trim().slice(-1500)}`);
      this.modules = `package-lock.json differs from the current one: npm ci there (${ci.seconds.toFixed(0)} s)`;
    })();
    return this.ready;
  }

  /** `git worktree remove --force` (the worktree's entry leaves the repository with it). */
  async remove(log: string): Promise<void> {
    if (!fs.existsSync(this.dir)) return;
    await run("git", ["-C", this.repoRoot, "worktree", "remove", "--force", this.dir], { log });
  }
}

/** Before the mirror: the old program checked out and its own `npm run render` of the stack. */
export async function oldRenderStep(r: StackRun, old: OldProgram): Promise<RenderedStack> {
  let rendered: RenderedStack | undefined;
  await r.step(
    `old program: git worktree of ${old.from.ref} and its npm run render`,
    async (s) => {
      await old.prepare(r.log("upgrade-worktree"));
      rendered = await render(r, undefined, path.join(r.work, "rendered-old"), "render-old", old.dir);
      s.summary = `${old.from.commit.slice(0, 12)} from ${old.from.where}; ${old.modules}; ${rendered.units.length} units; remote manifests: ${old.servedRealManifests ? "the real files, as its e2e served them" : "stand-ins until the upgrade, as its e2e served them (it predates the mirror folder)"}`;
      r.report.notes.push(
        `upgrade run: the first pulumi up deploys the program of ${old.from.ref} (${old.from.commit}, ${old.from.where}); the current program then previews and applies on the same state and cluster`,
      );
    },
    { fatal: true },
  );
  return rendered!;
}

/**
 * Before the mirror, in the pin-upgrade mode (--from-predecessors): the copy of the current program
 * with the stack's pins at their predecessors (predecessor.ts), its render, and the check that it
 * moved every pin it planned to.
 */
export async function predecessorRenderStep(r: StackRun, current: RenderedStack, pred: PredecessorProgram): Promise<RenderedStack> {
  let rendered: RenderedStack | undefined;
  await r.step(
    "pin upgrade: the current program with every pin at its predecessor, and its npm run render",
    async (s) => {
      if (!r.o.mirrorDir) throw new Error("--from-predecessors needs the mirror folder (--mirror): the predecessors are what it holds");
      pred.prepare(current, r.o.mirrorDir);
      rendered = await render(r, undefined, path.join(r.work, "rendered-predecessors"), "render-predecessors", pred.dir);
      const diff = artifactDiff(current, rendered);
      const missed = pred.moves.filter(
        (m) => !diff.some((d) => d.startsWith("+ ") && d.includes(m.to) && (m.kind !== "chart" || d.includes(`chart ${m.what} `))),
      );
      s.summary = `${pred.moves.length} pins moved in ${path.join(pred.dir, "platform", "versions.ts")}; ${diff.filter((d) => d.startsWith("+")).length} artifacts differ in its render`;
      s.detail.push(`the render's artifacts, today's (-) and the predecessors' (+):\n${diff.join("\n")}`);
      r.report.check(
        "pin upgrade: every upstream artifact the mirror holds a predecessor of is deployed first at it",
        missed.length === 0 && pred.none.length === 0,
        [
          ...pred.moves.map((m) => `${m.kind} ${m.what}: ${m.to} first, then ${m.from}`),
          ...missed.map((m) => `NOT MOVED in the render: ${m.kind} ${m.what} ${m.from} → ${m.to}`),
          ...pred.none.map((n) => `no predecessor in the mirror folder: ${n}`),
        ],
      );
      r.report.notes.push(
        `pin upgrade (--from-predecessors): the first pulumi up deploys the current program with every pin at its predecessor (${pred.dir}); the current program then previews and applies today's pins on the same state and cluster in one pulumi up`,
      );
    },
    { fatal: true },
  );
  return rendered!;
}

/** The current program's project copy on the same state: the repository's stack file with the old one's salt, mirror and cluster keys. */
function currentProject(r: StackRun, oldStackFile: string): string {
  const project = path.join(r.work, "project-current");
  copyProject(r.o.repoRoot, project);
  const old = fs.readFileSync(oldStackFile, "utf8");
  const salt = /^encryptionsalt: .*$/m.exec(old)?.[0];
  const original = fs.readFileSync(path.join(r.o.repoRoot, "stacks", `Pulumi.${r.stack}.yaml`), "utf8");
  const file = stackFile(project, r.stack);
  fs.writeFileSync(file, `${original.replace(/\n*$/, "\n")}${salt ? `${salt}\n` : ""}`);
  // the e2e's own keys, as step 6 set them for the old program: the same mirror, the same cluster
  const oldConfig = readStackConfig(oldStackFile);
  for (const key of ["mirror", "cluster"]) setStackConfig(file, key, oldConfig[`openkeel:${key}`]);
  return project;
}

/** The upgrade preview: every proposed step listed, none a delete or replace of a protected resource. */
async function upgradePreviewStep(r: StackRun): Promise<void> {
  await r.step("upgrade: pulumi preview --diff of the current program (no delete or replace of a protected resource)", async (s) => {
    // the CLI keeps the selected stack per project folder: the copy has none yet
    const select = await pulumi(["stack", "select", r.stack], r.project, r.p!, r.log("upgrade-preview-diff"));
    if (select.code !== 0) throw new Error(`pulumi stack select ${r.stack} in the current program's copy exited ${select.code}: ${select.stderr.trim()}`);
    const diff = await pulumi(["preview", "--diff"], r.project, r.p!, r.log("upgrade-preview-diff"));
    recordRun(s, diff);
    const json = await pulumi(["preview", "--json"], r.project, r.p!, r.log("upgrade-preview-json"));
    const state = stateResources(await pulumi(["stack", "export"], r.project, r.p!, r.log("upgrade-export")));
    const { steps } = previewSteps(json.stdout);
    const changes = steps.filter((x) => x.op !== "same");
    s.detail.push(`${changes.length} proposed step(s) besides "same":\n${changes.map((x) => `${x.op} ${x.urn}`).join("\n") || "none"}`);
    const bad = protectedChanges(steps, state);
    r.report.check("upgrade: the preview proposes no delete or replace of a protected resource", diff.code === 0 && json.code === 0 && bad.length === 0, [
      `${state.filter((x) => x.protect).length} protected resource(s) in the state of the old program`,
      ...(bad.length ? bad : ["none proposed"]),
      ...(diff.code !== 0 || json.code !== 0
        ? [
            `preview exit ${diff.code} (--diff), ${json.code} (--json):\n${[...(diff.code ? errorLines(diff.stdout + diff.stderr) : []), ...(json.code ? previewErrors(json) : [])].join("\n")}`,
          ]
        : []),
    ]);
    if (bad.length) s.ok = false;
  });
}

/** The upgrade up: one `pulumi up --policy-pack policy` of the current program must converge, nothing protected lost. */
async function upgradeUpStep(r: StackRun, current: RenderedStack): Promise<string> {
  let text = "";
  await r.step("upgrade: pulumi up --yes --policy-pack policy of the current program", async (s) => {
    const res = await pulumi(["up", "--yes", "--policy-pack", "policy", "--event-log", eventLog(r, "upgrade-up")], r.project, r.p!, r.log("upgrade-up"), {
      timeoutMs: 20 * 60_000,
      env: EVENT_LOG_ENV,
    });
    text = res.stdout + res.stderr;
    recordRun(s, res);
    s.summary = `exit ${res.code}; ${summaryLine(res.stdout)}`;
    const warnings = apiWarnings(text);
    r.report.check("upgrade: every object of the current program accepted by the real API server", warnings.length === 0, warnings);
    recordTimings(r, r.o.fromPredecessors ? "pin upgrade" : "upgrade", ["upgrade-up"], current);
    const still = await protectedStillThere(r, current, "after-upgrade");
    r.report.check("upgrade: every object of a protected unit is still in the cluster after the upgrade", still.ok, still.detail);
  });
  return text;
}

/** The upgrade itself, after the old program's up converged: the project switched to the current program, its preview judged, its up. */
export async function upgradeSteps(r: StackRun, oldDeployed: boolean, current: RenderedStack): Promise<string> {
  if (!oldDeployed) {
    await r.step("upgrade: the old program did not deploy (see its pulumi up steps)", () => Promise.reject(new Error("nothing to upgrade from")), {
      fatal: true,
    });
  }
  r.project = currentProject(r, stackFile(r.project, r.stack));
  r.mirror?.upgrade();
  await upgradePreviewStep(r);
  return upgradeUpStep(r, current);
}
