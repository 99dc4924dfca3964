// The Pulumi resource graph of a checkout, as the engine names it, and what moving a deployed stack
// from one checkout's program to another's does to it: which resources of the old state the new
// program takes over (by URN or alias), and which it would delete or replace. A protected resource
// deleted or replaced without an alias, or an object that moves to another URN without one (the new
// URN's create takes the live object over by server-side apply, then the old URN's delete removes
// it), is an error; so is a Helm release that a renamed unit reinstalls (below: Helm knows a
// release by its name, not its URN). Each checkout runs its own program under the runtime mocks, in
// a child process (review/urn-graph-child.ts: this repository's mock runner, the checkout's
// index.ts and stacks).
//
// URNs as the engine makes them: `urn:pulumi:<stack>::<project>::<parent's qualified type>$<type>::<name>`,
// the root stack's type left out (the mocks' own URNs keep only the parent's type). Aliases as the
// engine resolves them (pulumi/pulumi v3.276.0 pkg/resource/deploy/step_generator.go): a resource
// tries its URN, then its aliases (a spec's empty fields are the resource's own; a parent that was
// itself aliased stands for its old URN), then the alias its parent matched, inherited (the child's
// name with the parent's name prefix replaced); it takes over the first the old state holds, and one
// old resource goes to one new resource. The objects a remote manifest applies (yaml/v2 ConfigFile,
// ConfigGroup: registered by the provider, never seen under the mocks) are modelled as one child per
// file, named `<prefix>:<objects of file>` as the provider prefixes its objects, protected like their
// parent; when their parent registers a transform, they carry the inherited form of each of its
// aliases (components/renames.ts, the one transform this program registers).
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { AliasSpec } from "../offline-engine/mock-run";
import { REPO_ROOT } from "../tools/tools";
import { tsCommand } from "../cli/ts-command";

/** One registration as the child reports it (no property values beyond what names an object). */
export interface Registration {
  type: string;
  name: string;
  /** The mocks' URN, and its parent's (what the child's references are). */
  urn: string;
  parent: string;
  protect: boolean;
  custom: boolean;
  aliases?: AliasSpec[] | undefined;
  transforms?: number | undefined;
  /** What names the object it manages: Kubernetes metadata, a Helm release (and its chart), the files of a remote manifest. */
  names?: { name?: string; namespace?: string; files?: string[]; chart?: string } | undefined;
}

export interface UrnNode {
  urn: string;
  type: string;
  name: string;
  /** The parent's URN; undefined for a root-level resource (its parent is the stack). */
  parent?: string;
  protect: boolean;
  aliases: AliasSpec[];
  /** It registered a transform (which its children's registrations run). */
  transforms: boolean;
  /** What it manages in the cluster (`apps/Deployment olm/olm-operator`), for a resource that manages one. */
  identity?: string;
  /** A modelled child of a remote manifest (one per file). */
  synthetic?: true;
  /** A Helm release's name, namespace and chart (repository and name, no version): Helm's own identity of it. */
  release?: { name: string; namespace: string; chart?: string };
}

export interface UrnGraph {
  stack: string;
  project: string;
  nodes: UrnNode[];
}

const STACK_TYPE = "pulumi:pulumi:Stack";
export const HELM_RELEASE = "kubernetes:helm.sh/v3:Release";
const REMOTE_MANIFESTS = new Set(["kubernetes:yaml/v2:ConfigFile", "kubernetes:yaml/v2:ConfigGroup"]);
/** The type token of a modelled child: the objects of one file of a remote manifest. */
export const FILE_OBJECTS_TYPE = "kubernetes:yaml/v2:FileObjects";

const qualifiedType = (urn: string) => urn.split("::")[2];
const urnName = (urn: string) => urn.slice(urn.lastIndexOf("::") + 2);

function makeUrn(stack: string, project: string, type: string, name: string, parent?: string): string {
  return `urn:pulumi:${stack}::${project}::${parent ? `${qualifiedType(parent)}$` : ""}${type}::${name}`;
}

/** A release URL without its version, so that the same file of another release is the same file. */
export function fileIdentity(url: string): string {
  return url.replace(/^[a-z]+:\/\//, "").replace(/\/v?\d+\.\d+(\.\d+)?[^/]*\//g, "/<version>/");
}

/** `apps/Deployment olm/olm-operator`, `helm release kube-system/kube-ovn`; undefined for what manages nothing. */
function identityOf(r: Registration): string | undefined {
  if (!r.custom || r.type.startsWith("pulumi:providers:")) return undefined;
  const where = `${r.names?.namespace ? `${r.names.namespace}/` : ""}${r.names?.name ?? ""}`;
  if (r.type === HELM_RELEASE) return `helm release ${where}`;
  const k8s = /^kubernetes:([^:]+)\/[^/:]+:(\w+)$/.exec(r.type);
  if (k8s && r.names?.name) return `${k8s[1]}/${k8s[2]} ${where}`;
  return `${r.type} ${r.name}`;
}

/** The graph of one stack's registrations, URNs as the engine makes them. */
export function urnGraph(stack: string, project: string, registrations: Registration[]): UrnGraph {
  const real = new Map<string, UrnNode>();
  const nodes: UrnNode[] = [];
  for (const r of registrations) {
    if (r.type === STACK_TYPE) continue;
    const parent = real.get(r.parent);
    const urn = makeUrn(stack, project, r.type, r.name, parent?.urn);
    const identity = identityOf(r);
    const node: UrnNode = {
      urn,
      type: r.type,
      name: r.name,
      ...(parent ? { parent: parent.urn } : {}),
      protect: r.protect,
      aliases: (r.aliases ?? []).map((a) => (a.parentUrn && real.has(a.parentUrn) ? { ...a, parentUrn: real.get(a.parentUrn)!.urn } : a)),
      transforms: (r.transforms ?? 0) > 0,
      ...(identity ? { identity } : {}),
      ...(r.type === HELM_RELEASE && r.names?.name
        ? { release: { name: r.names.name, namespace: r.names.namespace ?? "default", ...(r.names.chart ? { chart: r.names.chart } : {}) } }
        : {}),
    };
    real.set(r.urn, node);
    nodes.push(node);
    if (!REMOTE_MANIFESTS.has(r.type)) continue;
    for (const file of r.names?.files ?? []) {
      const name = `${r.name}:objects of ${fileIdentity(file)}`;
      nodes.push({
        urn: makeUrn(stack, project, FILE_OBJECTS_TYPE, name, urn),
        type: FILE_OBJECTS_TYPE,
        name,
        parent: urn,
        protect: r.protect,
        aliases: [],
        transforms: false,
        identity: `objects of ${fileIdentity(file)}`,
        synthetic: true,
      });
    }
  }
  return { stack, project, nodes };
}

/** What the move from one program to the other does to one resource of the old state. */
export interface UrnFinding {
  level: "error" | "warning";
  /** `moved`: re-registered under another URN without an alias; `deleted`: gone; `replaced`: taken over, managing another object. */
  what: "moved" | "deleted" | "replaced" | "claimed-twice";
  old: string;
  new?: string;
  protect: boolean;
  message: string;
  fix: string;
}

export interface UrnComparison {
  stack: string;
  /** Old URN → new URN, for each resource taken over by an alias. */
  aliased: { old: string; new: string }[];
  findings: UrnFinding[];
}

/** The engine's inherited alias: the child under its parent's old URN, its name prefix replaced. */
function inheritedAlias(g: UrnGraph, type: string, name: string, parentName: string, parentAlias: string): string {
  const aliasName = name.startsWith(parentName) ? urnName(parentAlias) + name.slice(parentName.length) : name;
  return makeUrn(g.stack, g.project, type, aliasName, parentAlias);
}

/** An alias spec as a URN (the engine's collapseAliasToUrn). */
function collapse(g: UrnGraph, n: UrnNode, a: AliasSpec, matched: Map<string, string>): string {
  if (a.urn) return a.urn;
  let parent = a.noParent ? undefined : (a.parentUrn ?? n.parent);
  if (parent && a.parentUrn && matched.has(parent)) parent = matched.get(parent);
  if (parent && qualifiedType(parent) === STACK_TYPE) parent = undefined;
  const urn = makeUrn(a.stack ?? g.stack, a.project ?? g.project, a.type ?? n.type, a.name ?? n.name, parent);
  return urn;
}

/** The URNs a new resource may take over, in the engine's order. */
function candidates(g: UrnGraph, n: UrnNode, byUrn: Map<string, UrnNode>, matched: Map<string, string>): string[] {
  const own = n.aliases.map((a) => collapse(g, n, a, matched));
  const out = [n.urn, ...own];
  const parent = n.parent ? byUrn.get(n.parent) : undefined;
  if (!parent) return out;
  const parentAlias = matched.get(parent.urn);
  if (parentAlias) {
    out.push(inheritedAlias(g, n.type, n.name, parent.name, parentAlias));
    for (const a of own) out.push(inheritedAlias(g, qualifiedType(a).split("$").pop()!, urnName(a), parent.name, parentAlias));
  }
  // the rename transform (components/renames.ts): the inherited form of each alias of the parent
  if (parent.transforms) for (const a of parent.aliases) out.push(inheritedAlias(g, n.type, n.name, parent.name, collapse(g, parent, a, matched)));
  return [...new Set(out)];
}

const FIX_ALIAS = "give the renamed resource its former URN as an alias (components/renames.ts: the unit, and what it was)";

/**
 * Helm names a release by its name and namespace, and refuses to install one that would hold an
 * object another release owns (its meta.helm.sh/release-name annotation); objects a chart names
 * after the release are made twice instead. The provider replaces a release whose name or namespace
 * changes, installing the new one before it uninstalls the old (pulumi-kubernetes
 * provider/pkg/provider/helm_release.go, Diff: forceNewFields .name and .namespace,
 * DeleteBeforeReplace false), and a release at a new URN without an alias is a new release. So a
 * renamed unit keeps both its Pulumi state (the alias) and its release's name.
 */
const helmName = (r: NonNullable<UrnNode["release"]>) => `${r.namespace}/${r.name}`;

/** What installing `now` beside `was`, then uninstalling `was`, does: the same words wherever it happens. */
const secondRelease = (was: NonNullable<UrnNode["release"]>, now: NonNullable<UrnNode["release"]>) =>
  `installs helm release ${helmName(now)} as a second release of that chart (Helm refuses it where both would hold the same object, and what the chart names after the release runs twice) and then uninstalls ${helmName(was)} with what it owns`;

/** The fix of a release that changed URN or name: an alias of its unit, and the release's name kept. */
function fixRelease(before: UrnGraph, old: UrnNode): string {
  const unit = before.nodes.find((n) => n.urn === old.parent);
  const former = unit ? `component: { type: "${unit.type}", name: "${unit.name}" }` : "its former URN";
  return `alias its unit in components/renames.ts (UNIT_RENAMES: the new unit's name and ${former}), and keep the Helm release's name ${old.release!.name} (helmReleaseUnit's \`release\` option, plan/plan.ts): an alias alone keeps the state, and the provider then replaces a release whose name changes`;
}

/**
 * A release of the old state that no resource takes over, and the new release that follows it (the
 * same Helm name, or the same chart: a renamed unit's; a stack installs each chart once); undefined
 * when none does.
 */
function releaseMoved(
  before: UrnGraph,
  old: UrnNode,
  after: UrnGraph,
  olds: ReadonlyMap<string, UrnNode>,
  matched: ReadonlyMap<string, string>,
): UrnFinding | undefined {
  const was = old.release!;
  const fresh = after.nodes.filter((n) => n.release && !olds.has(n.urn) && !matched.has(n.urn));
  const same = fresh.find((n) => helmName(n.release!) === helmName(was));
  const successor = same ?? fresh.find((n) => was.chart !== undefined && n.release!.chart === was.chart);
  if (!successor) return undefined;
  const message = same
    ? `helm release ${helmName(was)} moves from ${old.urn} to ${successor.urn} without an alias: pulumi up installs it again at the new URN, which Helm refuses (a release of that name is deployed), and the old URN's delete would uninstall it`
    : `helm release ${helmName(was)} (chart ${was.chart}) at ${old.urn} is taken over by no resource, and ${successor.urn} installs helm release ${helmName(successor.release!)} of the same chart without an alias: pulumi up ${secondRelease(was, successor.release!)}`;
  return { level: "error", what: "moved", old: old.urn, new: successor.urn, protect: old.protect, message, fix: fixRelease(before, old) };
}

/**
 * A release taken over whose Helm name changes in its namespace: a second release of the same chart
 * beside the first, which nothing deliberate asks for (a move to another namespace is a replacement
 * like any other: compareUrnGraphs' "replaced").
 */
function releaseRenamed(c: string, old: UrnNode, n: UrnNode): UrnFinding | undefined {
  const [was, now] = [old.release, n.release];
  if (!was || !now || was.namespace !== now.namespace || was.name === now.name) return undefined;
  return {
    level: "error",
    what: "replaced",
    old: c,
    new: n.urn,
    protect: old.protect,
    message: `${c} manages helm release ${helmName(was)}, and ${n.urn}, which takes it over, manages helm release ${helmName(now)}: the provider replaces a release whose name changes, so pulumi up ${secondRelease(was, now)}${old.protect ? "; for a protected resource it refuses" : ""}`,
    fix: `keep the Helm release's name ${was.name} (helmReleaseUnit's \`release\` option, plan/plan.ts); the alias in components/renames.ts stays`,
  };
}

/** What deploying `after`'s program on a stack that `before`'s program deployed does to the old resources. */
export function compareUrnGraphs(before: UrnGraph, after: UrnGraph): UrnComparison {
  const olds = new Map(before.nodes.map((n) => [n.urn, n]));
  const byUrn = new Map(after.nodes.map((n) => [n.urn, n]));
  const matched = new Map<string, string>();
  const claimedBy = new Map<string, string>();
  const findings: UrnFinding[] = [];
  for (const n of after.nodes) {
    const c = candidates(after, n, byUrn, matched).find((u) => olds.has(u));
    if (!c) continue;
    const earlier = claimedBy.get(c);
    if (earlier) {
      findings.push({
        level: "error",
        what: "claimed-twice",
        old: c,
        new: n.urn,
        protect: olds.get(c)!.protect,
        message: `${c} is claimed by ${earlier} and by ${n.urn}: the engine refuses the update`,
        fix: "alias each former resource from one resource only",
      });
      continue;
    }
    claimedBy.set(c, n.urn);
    if (c !== n.urn) matched.set(n.urn, c);
    const old = olds.get(c)!;
    const renamed = releaseRenamed(c, old, n);
    if (renamed) findings.push(renamed);
    else if (old.identity && n.identity && old.identity !== n.identity) {
      findings.push({
        level: old.protect ? "error" : "warning",
        what: "replaced",
        old: c,
        new: n.urn,
        protect: old.protect,
        message: `${c} manages ${old.identity}, and ${n.urn}, which takes it over, manages ${n.identity}: a replacement${old.protect ? ", which pulumi up refuses for a protected resource" : ""}`,
        fix: "keep the object's name and namespace, or replace it deliberately (docs/operating.md)",
      });
    }
  }
  for (const old of before.nodes) {
    if (claimedBy.has(old.urn)) continue;
    const release = old.release ? releaseMoved(before, old, after, olds, matched) : undefined;
    if (release) {
      findings.push(release);
      continue;
    }
    const successor = old.identity ? after.nodes.find((n) => n.identity === old.identity && !olds.has(n.urn) && !matched.has(n.urn)) : undefined;
    if (successor) {
      findings.push({
        level: "error",
        what: "moved",
        old: old.urn,
        new: successor.urn,
        protect: old.protect,
        message: `${old.identity} moves from ${old.urn} to ${successor.urn} without an alias: pulumi up creates the new URN (a server-side apply takes the live object over) and then deletes the old one${old.protect ? ", which it refuses for a protected resource" : ", and with it the object"}`,
        fix: FIX_ALIAS,
      });
    } else if (old.protect) {
      findings.push({
        level: "error",
        what: "deleted",
        old: old.urn,
        protect: true,
        message: `${old.urn} is protected and no resource of the new program takes it over: pulumi up refuses to delete it`,
        fix: `if it was renamed: ${FIX_ALIAS}; if it goes on purpose, follow docs/operating.md "Removing a unit that owns data"`,
      });
    }
  }
  return { stack: after.stack, aliased: [...matched].map(([n, o]) => ({ old: o, new: n })), findings };
}

/** The stdout of the child (review/urn-graph-child.ts): each stack's registrations, or what failed. */
interface ChildReport {
  project: string;
  stacks: { stack: string; registrations: Registration[] }[];
}

/**
 * The URN graph of every stack (or the named ones) of a checkout: its own index.ts and stacks/, run
 * under this repository's mocks in a child process (the checkout's node_modules must resolve, as
 * review/renders.ts's exportCommit links them).
 */
export function urnGraphsOf(checkout: string, stacks: string[] = []): Promise<UrnGraph[]> {
  const [node, args] = tsCommand(path.join(REPO_ROOT, "review", "urn-graph-child.ts"), [checkout, ...stacks]);
  if (!fs.existsSync(path.join(checkout, "index.ts"))) return Promise.reject(new Error(`${checkout}: no index.ts, so no Pulumi program to run`));
  return new Promise((resolve, reject) => {
    const p = spawn(node, args, { cwd: checkout, env: { ...process.env, OPENKEEL_PROGRESS: "0" } });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("error", reject);
    p.on("close", (code) => {
      if (code !== 0) return reject(new Error(`the program of ${checkout} did not run under the mocks (exit ${code}):\n${stderr.trim()}`));
      const report = JSON.parse(stdout) as ChildReport;
      resolve(report.stacks.map((s) => urnGraph(s.stack, report.project, s.registrations)));
    });
  });
}
