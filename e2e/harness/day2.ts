// Day 2 (README step 11): a compute node modelled on the stack's own joins the inventory of the
// project copy and the cluster; the render diff says what `pulumi preview` must do, the engine must
// propose exactly that; then `pulumi up` and the checks again.
import * as fs from "node:fs";
import * as path from "node:path";
import { checkAfterUp, renderedObjects } from "./cluster-checks";
import { nodeSpecs } from "./nodes";
import { mutateStackConfig, readStackConfig, stackFile } from "./project";
import { previewErrors, previewSteps, pulumi } from "./pulumi";
import type { RenderedStack } from "./rendered";
import { recordRun, RELEASE, render, type StackRun } from "./stack-run";
import { registerNodes } from "./setup";

/** A node of the stack file's `openkeel:nodes`, the keys the new node is modelled on. */
interface InventoryNode {
  name: string;
  roles?: string[];
  internalIP?: string;
  zone?: string;
  labels?: Record<string, string>;
  bridgeMappings?: unknown;
  hostNetwork?: string;
  kubernetesControlPlane?: boolean;
}

interface ExpectedStep {
  op: string;
  match: (type: string, name: string) => boolean;
  what: string;
}

type ObjectId = { kind: string; name: string; ns?: string | undefined };

/** The resource of a unit's object, as the program names it (`<unit>:<namespace>/<name>` or `<unit>:<name>`). */
const objMatch = (unit: string, id: ObjectId) => (type: string, name: string) =>
  name.startsWith(`${unit}:`) &&
  name.endsWith(`${id.ns ? `${id.ns}/` : ":"}${id.name}`) &&
  (id.kind === "Node" ? type === "kubernetes:core/v1:NodePatch" : type.endsWith(`:${id.kind}`));

function objectId(r: RenderedStack, f: string): ObjectId {
  const o = renderedObjects(path.join(r.dir, f))[0];
  return { kind: o.kind as string, name: o.metadata.name, ns: o.metadata.namespace };
}

type RenderedUnit = RenderedStack["units"][number];

/** A release's post-render record (the ConfigMap `<release>-post-render` the program registers beside a patched release). */
const recordMatch = (u: RenderedUnit & { kind: "HelmRelease" }) => objMatch(u.name, { kind: "ConfigMap", name: `${u.release}-post-render`, ns: u.namespace });

/** The steps of a unit new in the render: the unit, its release and its post-render record, its objects. */
function newUnitSteps(after: RenderedStack, u: RenderedUnit): ExpectedStep[] {
  const exp: ExpectedStep[] = [{ op: "create", what: `new unit ${u.name} (${u.type})`, match: (type, name) => type === u.type && name === u.name }];
  if (u.kind === "HelmRelease") exp.push({ op: "create", what: `Helm release ${u.name}`, match: (type, name) => type === RELEASE && name === u.name });
  if (u.kind === "HelmRelease" && u.postRender) exp.push({ op: "create", what: `post-render record of ${u.name}`, match: recordMatch(u) });
  for (const f of u.objects ?? []) {
    const id = objectId(after, f);
    exp.push({ op: "create", what: `${id.kind} ${id.name} of new unit ${u.name}`, match: objMatch(u.name, id) });
  }
  return exp;
}

/** The steps of a unit in both renders: a release whose chart or values changed, objects new, changed or gone, a remote manifest's URLs. */
function changedUnitSteps(before: RenderedStack, after: RenderedStack, old: RenderedUnit, u: RenderedUnit): ExpectedStep[] {
  const exp: ExpectedStep[] = [];
  const read = (r: RenderedStack, f: string) => fs.readFileSync(path.join(r.dir, f), "utf8");
  if (u.kind === "HelmRelease" && old.kind === "HelmRelease") {
    const text = (r: RenderedStack, f: string | undefined) => (f ? read(r, f) : "");
    const patched = text(after, u.postRender) !== text(before, old.postRender);
    const changed = JSON.stringify(u.chart) !== JSON.stringify(old.chart) || text(after, u.values) !== text(before, old.values) || patched;
    if (changed)
      exp.push({
        op: "update",
        what: `Helm release ${u.name}: values, chart or post-render patches changed in the render`,
        match: (type, name) => type === RELEASE && name === u.name,
      });
    // the record follows the patches: created, changed or gone with them
    const op = !patched ? undefined : !old.postRender ? "create" : !u.postRender ? "delete" : "update";
    if (op) exp.push({ op, what: `post-render record of ${u.name}: its patches changed in the render`, match: recordMatch(u) });
  }
  if (u.kind === "Manifests") {
    const oldFiles = new Set(old.objects ?? []);
    for (const f of u.objects ?? []) {
      const id = objectId(after, f);
      if (!oldFiles.has(f)) exp.push({ op: "create", what: `${id.kind} ${id.name} (${u.name}): new in the render`, match: objMatch(u.name, id) });
      else if (read(after, f) !== read(before, f))
        exp.push({ op: "update", what: `${id.kind} ${id.name} (${u.name}): changed in the render`, match: objMatch(u.name, id) });
    }
    for (const f of old.objects ?? []) {
      if ((u.objects ?? []).includes(f)) continue;
      const id = objectId(before, f);
      exp.push({ op: "delete", what: `${id.kind} ${id.name} (${u.name}): gone from the render`, match: objMatch(u.name, id) });
    }
  }
  if (u.kind === "RemoteManifest" && JSON.stringify(u.urls) !== JSON.stringify(old.urls))
    exp.push({ op: "replace", what: `remote manifest ${u.name}: URL changed`, match: (_t, name) => name === u.name });
  return exp;
}

/** What the render diff says `pulumi preview` must do after the day-2 change. */
function expectedSteps(before: RenderedStack, after: RenderedStack): ExpectedStep[] {
  const b = new Map(before.units.map((u) => [u.name, u]));
  const exp: ExpectedStep[] = [];
  for (const u of after.units) {
    const old = b.get(u.name);
    exp.push(...(old ? changedUnitSteps(before, after, old, u) : newUnitSteps(after, u)));
  }
  for (const u of before.units)
    if (!after.units.some((x) => x.name === u.name))
      exp.push({ op: "delete", what: `unit ${u.name} gone from the render`, match: (_t, name) => name === u.name || name.startsWith(`${u.name}:`) });
  return exp;
}

/** A realistic new compute node: a sibling compute node's roles, labels and zone, the next name and IP. */
function newComputeNode(stackFilePath: string, environment: string): { entry: Record<string, unknown>; name: string } {
  const nodes = readStackConfig(stackFilePath)["openkeel:nodes"] as InventoryNode[];
  const sibling = [...nodes].reverse().find((n) => (n.roles ?? []).includes("compute"));
  if (!sibling) throw new Error("the stack has no compute node to model the new one on");
  const names = new Set(nodes.map((n) => n.name));
  let name: string;
  if (environment === "kind-lab") {
    // kind names workers <cluster>-worker, -worker2, …; a kind worker gets the compute role
    const controlPlane = nodes.find((n) => n.kubernetesControlPlane);
    if (!controlPlane) throw new Error("the kind stack has no kubernetesControlPlane node to name the new worker after");
    const cluster = controlPlane.name.replace(/-control-plane\d*$/, "");
    const workers = nodes.filter((n) => /-worker\d*$/.test(n.name)).length;
    name = `${cluster}-worker${workers === 0 ? "" : workers + 1}`;
    return { name, entry: { name, roles: ["compute"] } };
  }
  const m = /^(.*?)(\d+)$/.exec(sibling.name);
  if (!m) throw new Error(`cannot derive a name from ${sibling.name}`);
  let i = Number(m[2]) + 1;
  while (names.has((name = `${m[1]}${String(i).padStart(m[2].length, "0")}`))) i++;
  const ips = nodes.map((n) => n.internalIP).filter((x): x is string => typeof x === "string" && /^\d+\.\d+\.\d+\.\d+$/.test(x));
  const base = (sibling.internalIP as string).split(".").slice(0, 3).join(".");
  const used = new Set(ips);
  let last = Math.max(...ips.filter((x) => x.startsWith(`${base}.`)).map((x) => Number(x.split(".")[3])));
  let ip: string;
  while (used.has((ip = `${base}.${++last}`)));
  const entry: Record<string, unknown> = { name, internalIP: ip, roles: [...(sibling.roles ?? [])] };
  if (sibling.zone) entry.zone = sibling.zone;
  if (sibling.labels && Object.keys(sibling.labels).length) entry.labels = { ...sibling.labels };
  // the same provider networks as its sibling: a chassis with distributed floating IPs (D3) needs them
  if (sibling.bridgeMappings !== undefined) entry.bridgeMappings = sibling.bridgeMappings;
  // the same kind of machine: the links its sibling's host network declares (the host contract)
  if (sibling.hostNetwork !== undefined) entry.hostNetwork = sibling.hostNetwork;
  return { name, entry };
}

/**
 * The new node in the copy's inventory and in the cluster; the renders before and after. The Plan
 * of the copy's stack file (with openkeel:mirror set) is what pulumi deployed; the render before
 * the change is taken from it too, so that the diff holds the day-2 change only.
 */
async function addComputeNode(r: StackRun, rendered: RenderedStack): Promise<{ day1?: RenderedStack; day2?: RenderedStack; name: string }> {
  const out: { day1?: RenderedStack; day2?: RenderedStack; name: string } = { name: "" };
  await r.step("day 2: add a compute node (inventory + cluster), re-render", async (s) => {
    const file = stackFile(r.project, r.stack);
    out.day1 = await render(r, path.dirname(file), path.join(r.work, "rendered-day1"), "render-day1");
    const { entry, name } = newComputeNode(file, rendered.index.environment);
    out.name = name;
    mutateStackConfig(file, "nodes", (nodes) => [...(nodes as unknown[]), entry]);
    out.day2 = await render(r, path.dirname(file), path.join(r.work, "rendered-day2"), "render-day2");
    const spec = nodeSpecs(out.day2).find((n) => n.name === name)!;
    await registerNodes(r.kube!, [spec]);
    s.summary = `${name} ${JSON.stringify(entry)}`;
    s.detail.push(
      `registered ${name}: ${Object.entries(spec.labels)
        .map(([k, v]) => (v ? `${k}=${v}` : k))
        .join(", ")}; taints ${spec.taints.map((t) => `${t.key}:${t.effect}`).join(", ") || "none"}`,
    );
  });
  return out;
}

/** A step of `pulumi preview --json` (neither same nor read). */
export interface PreviewChange {
  op: string;
  type: string;
  name: string;
  urn: string;
}

/**
 * `pulumi preview --json` after a change proposes exactly the steps the render diff from `before`
 * to `after` expects (a step named `title`, its log `logName`); returns the engine's changes.
 */
export async function previewShowsExactly(r: StackRun, before: RenderedStack, after: RenderedStack, title: string, logName: string): Promise<PreviewChange[]> {
  let out: PreviewChange[] = [];
  await r.step(title, async (s) => {
    const exp = expectedSteps(before, after);
    const res = await pulumi(["preview", "--json"], r.project, r.p!, r.log(logName));
    s.log = res.log;
    if (res.code !== 0) throw new Error(`pulumi preview --json exited ${res.code}:\n${previewErrors(res).join("\n")}`);
    const { steps, changeSummary } = previewSteps(res.stdout);
    const changes = steps.filter((x) => x.op !== "same" && x.op !== "read");
    out = changes;
    const unexpected = changes.filter((c) => !exp.some((e) => e.op === c.op && e.match(c.type, c.name)));
    const missing = exp.filter((e) => !changes.some((c) => c.op === e.op && e.match(c.type, c.name)));
    s.summary = `engine: ${Object.entries(changeSummary)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}; expected ${exp.length} change(s) from the render diff`;
    s.detail.push(...exp.map((e) => `expected ${e.op}: ${e.what}`));
    s.detail.push(...changes.map((c) => `engine ${c.op}: ${c.type} ${c.name}`));
    if (unexpected.length || missing.length) {
      s.ok = false;
      s.detail.push(...unexpected.map((c) => `UNEXPECTED ${c.op} ${c.type} ${c.name}`), ...missing.map((e) => `MISSING ${e.op}: ${e.what}`));
    }
  });
  return out;
}

/** README step 11. Returns the render the cluster holds afterwards (the day-2 one, when it ran). */
export async function dayTwo(r: StackRun, rendered: RenderedStack): Promise<RenderedStack> {
  if (r.o.kubeconfig) {
    r.report.steps.push({
      name: "day 2: add a compute node",
      seconds: 0,
      ok: true,
      skipped: true,
      detail: ["skipped with --kubeconfig: a node of an existing cluster (kind) must join for real; add one and rerun the e2e"],
    });
    return rendered;
  }
  const { day1, day2, name } = await addComputeNode(r, rendered);
  if (!day2) return rendered;
  await previewShowsExactly(r, day1!, day2, "day 2: pulumi preview shows exactly the expected steps", "preview-day2");
  await r.step("day 2: pulumi up --yes --skip-preview --policy-pack policy", async (s) => {
    // the preview was the step before; the update itself is what is measured here
    const res = await pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy"], r.project, r.p!, r.log("up-day2"), { timeoutMs: 20 * 60_000 });
    recordRun(s, res);
  });
  await r.checkStep("checks after day 2", () => checkAfterUp(r, day2, `after day 2 (${name})`));
  return day2;
}
