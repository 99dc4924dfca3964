// Upgrade rules: which version steps upstream supports for a pinned component, what must happen
// first, what an operator does by hand, and where upstream says so. The rules are data, one per pin
// of platform/versions.ts, in platform/upgrade-rules.ts (UPGRADE_RULES lists them); this module
// reads pins as leaves (one version each) and judges a step between two sets of pins: the committed state's (the base
// branch in a PR, the last deployed commit otherwise: review/committed-pins.ts) and the change's.
// Pure: pins in, steps and problems out.
import type { Check, Problem } from "../config/problems";
import { PINNED_VERSION } from "../config/schema";
import type { RenderedFiles, RenderedIndex } from "../render/rendered";
import { isPlainObject } from "../config/plain";

/**
 * How far one change may move a pin (upstream's supported upgrade path):
 * - `minor`: one minor release at a time (1.11.x → 1.12.y; patches of a minor in any order upward);
 * - `patch`: within its minor series only (a series move is a planned migration: add its `paths`);
 * - `any`: no step rule upstream, or nothing deployed (build tools, schema commits).
 */
export type UpgradeStep = "minor" | "patch" | "any";

/** Where a component's CRDs come from, and so whether an upgrade changes them. */
export type CrdSource =
  /** templated by the chart: `helm upgrade` upgrades them with the release */
  | "chart"
  /** held by the release manifest: applied with it */
  | "manifest"
  /** a chart or unit of their own, applied before the operator (the Plan's order) */
  | "own-unit"
  /** the chart's crds/ folder, which Helm installs once and never upgrades: a manual step */
  | "manual"
  /** the component defines none */
  | "none";

/** Where the release notes of a version are: a GitHub repository's release tags, or a URL template. */
export type ReleaseNotes =
  /** `https://github.com/<github>/releases/tag/<tag>`; `tag` is a template of `{version}` (e.g. `v{version}`). */
  | { github: string; tag: string }
  /** A URL template of `{version}` (a project that publishes its notes outside GitHub). */
  | { url: string };

export interface UpgradeRule {
  /** As the docs name it, e.g. `Longhorn`. */
  component: string;
  /**
   * The pins of platform/versions.ts it governs, by export name (`NAME.key` for one entry of a
   * record of pins, such as TOOLS). The first one's version is the component's.
   */
  pins: readonly string[];
  step: UpgradeStep;
  /**
   * Steps upstream documents beyond `step` (minor series, `major.minor`), e.g. RabbitMQ's 4.0 → 4.2.
   * @default none
   */
  paths?: readonly { from: string; to: string }[];
  /**
   * Whether a lower version is acceptable (build tools); upstream supports no downgrade of a deployed component.
   * @default false
   */
  downgrade?: boolean;
  /**
   * Every pin of the rule carries the same version (the CRDs chart and its operator).
   * @default false
   */
  together?: boolean;
  /**
   * A skew this pin must keep with another pin (kubectl within one minor of the cluster's Kubernetes).
   * @default none
   */
  skew?: { pin: string; minors: number; why: string };
  /** Release notes of a version; absent for pins that are no release (a host name, a commit). */
  notes?: ReleaseNotes;
  crds: CrdSource;
  /**
   * Units, or placement components (`<unit>/<name>`), whose workloads roll besides the units that
   * carry the pin (an operator's upgrade rolls the workloads of the CR it reconciles).
   * @default the units whose rendered files carry the pin
   */
  rolls?: readonly string[];
  /**
   * What must happen before the new version is applied (upstream's order), as instructions.
   * @default none
   */
  first?: readonly string[];
  /**
   * Steps after `pulumi up` that nothing automates, as instructions.
   * @default none
   */
  manual?: readonly string[];
  /**
   * Whether its pins reach a cluster; build tools and schema locations do not, and no stack shows them.
   * @default true
   */
  deployed?: boolean;
  /** The upstream document the step rule comes from (`repo@commit path` or URL), with the sentence that says it. */
  source: string;
}

/** A pin as a leaf: one version (what a step compares) and its detail (a digest, a URL). */
export interface PinLeaf {
  /** `LONGHORN_CHART`, `SNAPSHOT_CRDS[2]`, `TOOLS.kubeconform`. */
  path: string;
  version: string;
  /** What else identifies it: an image's digest, a manifest's URL. */
  detail?: string;
  /** The pin as written (what a render of it carries). */
  value: unknown;
}

/** The exports of platform/versions.ts as plain data (a commit's, or this checkout's). */
export type PinExports = Readonly<Record<string, unknown>>;

/** One pin's version: a string is its own, a chart/manifest/OLM pin has `version`, an image `tag`. */
function leafOf(path: string, v: unknown): PinLeaf | undefined {
  if (typeof v === "string") return { path, version: v, value: v };
  if (!isPlainObject(v)) return undefined;
  if (typeof v.version === "string") return { path, version: v.version, ...(typeof v.url === "string" ? { detail: v.url } : {}), value: v };
  if (typeof v.tag === "string") return { path, version: v.tag, ...(typeof v.digest === "string" ? { detail: v.digest } : {}), value: v };
  return undefined;
}

/**
 * The leaves of an export: itself, each element of a list, or each entry of a record of pins (`NAME.key`);
 * none for what is no pin (a function, a rule).
 */
export function pinLeaves(name: string, value: unknown): PinLeaf[] {
  const own = leafOf(name, value);
  if (own) return [own];
  if (Array.isArray(value)) return value.flatMap((v, i) => leafOf(`${name}[${i}]`, v) ?? []);
  if (isPlainObject(value) && !isUpgradeRule(value)) return Object.entries(value).flatMap(([k, v]) => leafOf(`${name}.${k}`, v) ?? []);
  return [];
}

export function isUpgradeRule(v: unknown): v is UpgradeRule {
  return isPlainObject(v) && typeof v.component === "string" && typeof v.step === "string" && Array.isArray(v.pins);
}

/** Every pin leaf of a set of exports, by path. */
export function allLeaves(exports: PinExports): Map<string, PinLeaf> {
  return new Map(Object.entries(exports).flatMap(([name, v]) => pinLeaves(name, v).map((l) => [l.path, l] as const)));
}

/** The leaves a rule governs: each named export's leaves, or the one entry `NAME.key` names. */
export function ruleLeaves(rule: UpgradeRule, exports: PinExports): PinLeaf[] {
  const leaves = allLeaves(exports);
  return rule.pins.flatMap((p) => [...leaves.values()].filter((l) => l.path === p || l.path.startsWith(`${p}[`) || l.path.startsWith(`${p}.`)));
}

interface Version {
  major: number;
  minor: number;
  patch: number;
}

/** `v1.12.1`, `1.12.1`, `4.1.8-management`, `v4.3.0-thick`: the numbers; undefined for a commit or a host. */
export function parseVersion(v: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$/.exec(v);
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3] ?? 0) } : undefined;
}

const COMMIT = /^[0-9a-f]{40}$/;

/** What is wrong with one pin as written, or undefined: a version (x.y.z), a commit (40 hex digits), or neither (a host, a repository). */
function pinShapeProblem(leaf: PinLeaf): { key: string; message: string; fix: string } | undefined {
  const structured = typeof leaf.value === "object";
  const key = structured ? `${leaf.path}.${"tag" in (leaf.value as object) ? "tag" : "version"}` : leaf.path;
  const shown = JSON.stringify(leaf.version);
  if (!structured && leaf.path.endsWith("_COMMIT")) {
    if (COMMIT.test(leaf.version)) return undefined;
    return { key, message: `${shown} is not a full commit hash (40 lowercase hex digits)`, fix: "pin the whole hash of the commit (git rev-parse <ref>)" };
  }
  if (!structured && !/_VERSION$/.test(leaf.path)) return undefined;
  if (PINNED_VERSION.test(leaf.version)) {
    const url = (leaf.value as { url?: unknown }).url;
    if (typeof url !== "string" || url.includes(leaf.version)) return undefined;
    return {
      key: `${leaf.path}.url`,
      message: `${JSON.stringify(url)} does not carry the version ${leaf.version} it pins`,
      fix: `write the URL with the version it pins (\${...} of the version's constant)`,
    };
  }
  const seriesOnly = /^v?\d+\.\d+$/.test(leaf.version);
  return {
    key,
    message: `${shown} is not an exact release version (x.y.z, with an optional leading v and -suffix, as 1.12.1, v1.16.2, 4.1.8-management)`,
    fix: seriesOnly
      ? `pin one release of that series, its full version as upstream tags it (${leaf.version}.<patch>)`
      : "pin the full version of one release, as upstream tags it (never a range, a series or a floating tag such as latest)",
  };
}

/**
 * The pins of platform/versions.ts that are not written as pins (a version `"1.13"`, a short
 * commit): the mistake of whoever edits that file, named by the pin's key. Every stack installs
 * them, so every command refuses them before planning (exit 2), instead of failing deep inside with
 * a trace. A string pin is judged by its name: `*_VERSION` a version, `*_COMMIT` a commit, any
 * other (a host, a repository) as it is; a chart, manifest, image or OLM pin by its version or tag.
 */
export function pinProblems(exports: PinExports): Problem[] {
  return [...allLeaves(exports).values()]
    .flatMap((leaf) => {
      const p = pinShapeProblem(leaf);
      return p ? [{ file: VERSIONS_FILE, path: p.key, message: p.message, fix: p.fix }] : [];
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

const series = (v: Version) => `${v.major}.${v.minor}`;
const order = (a: Version, b: Version) => a.major - b.major || a.minor - b.minor || a.patch - b.patch;

/** One pin that moved between the committed state and the change. */
export interface PinMove {
  path: string;
  from: string;
  to: string;
  /** The detail changed with it (a new digest under the same tag is a move too). */
  detailFrom?: string | undefined;
  detailTo?: string | undefined;
}

/** A component whose pins moved: what the preview shows and the checks judge. */
export interface ComponentUpgrade {
  rule: UpgradeRule;
  moves: PinMove[];
  /** `upgrade`, `downgrade`, or `rebuild` (same version, other digest or URL); the first move's. */
  direction: "upgrade" | "downgrade" | "rebuild" | "change";
  /** The release-notes links of the versions the step passes, the target's last, and a compare view. */
  notes: { label: string; url: string }[];
  /** Refused steps, with the fix. */
  problems: Check[];
}

export const UPGRADE_STEP_CODE = "upgrade-step";
export const VERSIONS_FILE = "platform/versions.ts";
/** Where the upgrade rules of those pins are (read alone, as VERSIONS_FILE is). */
export const UPGRADE_RULES_FILE = "platform/upgrade-rules.ts";

const notesUrl = (n: ReleaseNotes, version: string) =>
  "github" in n ? `https://github.com/${n.github}/releases/tag/${n.tag.replace("{version}", version)}` : n.url.replace("{version}", version);

/**
 * The notes of every version a step passes that is known offline: the first release of each minor
 * it enters (`x.y.0`, where a minor's upgrade notes are), the target, and, on GitHub, the compare
 * view between the two tags, which lists every release tag in between (patch releases are not
 * known without asking upstream).
 */
export function releaseNotes(n: ReleaseNotes | undefined, from: string, to: string): { label: string; url: string }[] {
  if (!n) return [];
  const a = parseVersion(from);
  const b = parseVersion(to);
  const out: { label: string; url: string }[] = [];
  if (a && b && order(a, b) < 0 && a.major === b.major) {
    const prefix = /^v/.test(to) ? "v" : "";
    for (let minor = a.minor + 1; minor <= b.minor; minor++) {
      const first = `${prefix}${b.major}.${minor}.0`;
      if (first !== to) out.push({ label: first, url: notesUrl(n, first) });
    }
  }
  out.push({ label: to, url: notesUrl(n, to) });
  if ("github" in n) {
    const tag = (v: string) => n.tag.replace("{version}", v);
    out.push({ label: `${tag(from)}…${tag(to)}`, url: `https://github.com/${n.github}/compare/${tag(from)}...${tag(to)}` });
  }
  return out;
}

function stepProblem(rule: UpgradeRule, move: PinMove, message: string, fix: string): Check {
  return { level: "error", code: UPGRADE_STEP_CODE, file: VERSIONS_FILE, path: move.path, message: `${message} (${rule.source})`, fix };
}

const documented = (rule: UpgradeRule, a: Version, b: Version) => (rule.paths ?? []).some((p) => p.from === series(a) && p.to === series(b));

/** Why a move is refused by its rule, or undefined when upstream supports it. */
function judgeMove(rule: UpgradeRule, move: PinMove): Check | undefined {
  const a = parseVersion(move.from);
  const b = parseVersion(move.to);
  const name = `${rule.component} ${move.from} → ${move.to}`;
  if (!a || !b) {
    if (rule.step === "any") return undefined;
    return stepProblem(rule, move, `${name}: not versions the rule can compare`, `pin a release version (x.y.z) in ${VERSIONS_FILE}`);
  }
  if (order(b, a) < 0) {
    if (rule.downgrade) return undefined;
    return stepProblem(rule, move, `${name} is a downgrade, which upstream does not support`, `keep ${move.from} (restore from a backup to go back)`);
  }
  if (rule.step === "any" || documented(rule, a, b)) return undefined;
  if (a.major !== b.major) {
    return stepProblem(
      rule,
      move,
      `${name} changes the major version, and the rule names no supported path to ${series(b)}`,
      `read upstream's upgrade notes for ${series(b)}, upgrade along the path they name, and record it in the rule's paths (${UPGRADE_RULES_FILE})`,
    );
  }
  if (rule.step === "patch" && a.minor !== b.minor) {
    return stepProblem(
      rule,
      move,
      `${name} leaves the ${series(a)} series, which is a planned migration, never a pin bump`,
      `stay on ${series(a)}.x; to migrate, follow the rule's source for ${series(a)} → ${series(b)} and add { from: "${series(a)}", to: "${series(b)}" } to its paths`,
    );
  }
  if (rule.step === "minor" && b.minor > a.minor + 1) {
    const next = `${a.major}.${a.minor + 1}`;
    const skipped = Array.from({ length: b.minor - a.minor - 1 }, (_, i) => `${a.major}.${a.minor + 1 + i}`).join(", ");
    return stepProblem(
      rule,
      move,
      `${name} skips ${skipped}: upstream supports one minor release at a time`,
      `upgrade to ${next}.x first (${move.path} in ${VERSIONS_FILE}), deploy it, then to ${move.to}`,
    );
  }
  return undefined;
}

/** The head's own consistency: pins that move together, a skew kept with another pin. */
function headProblems(rule: UpgradeRule, head: PinExports): Check[] {
  const leaves = ruleLeaves(rule, head);
  const out: Check[] = [];
  if (rule.together && new Set(leaves.map((l) => l.version)).size > 1) {
    out.push({
      level: "error",
      code: UPGRADE_STEP_CODE,
      file: VERSIONS_FILE,
      path: leaves[0].path,
      message: `${rule.component}: ${leaves.map((l) => `${l.path} ${l.version}`).join(", ")} differ, and upstream releases them together (${rule.source})`,
      fix: `pin one version in all of ${rule.pins.join(", ")}`,
    });
  }
  if (rule.skew && leaves[0]) {
    const other = allLeaves(head).get(rule.skew.pin);
    const a = parseVersion(leaves[0].version);
    const b = other && parseVersion(other.version);
    if (a && b && (a.major !== b.major || Math.abs(a.minor - b.minor) > rule.skew.minors)) {
      out.push({
        level: "error",
        code: UPGRADE_STEP_CODE,
        file: VERSIONS_FILE,
        path: leaves[0].path,
        message: `${rule.component} ${leaves[0].version} is more than ${rule.skew.minors} minor away from ${rule.skew.pin} ${other!.version}: ${rule.skew.why}`,
        fix: `move ${leaves[0].path} and ${rule.skew.pin} in one change, ${rule.skew.minors} minor apart at most`,
      });
    }
  }
  return out;
}

function direction(moves: PinMove[]): ComponentUpgrade["direction"] {
  const m = moves[0];
  if (m.from === m.to) return "rebuild";
  const a = parseVersion(m.from);
  const b = parseVersion(m.to);
  if (!a || !b) return "change";
  return order(b, a) < 0 ? "downgrade" : "upgrade";
}

/**
 * The components whose pins moved from `base` to `head`, each with the notes of the versions it
 * passes and the steps its rule refuses; the rules are the head's (a change may correct a rule, in
 * review). A pin new in the head is an install, not an upgrade; one gone is a removal (the removal
 * guard's).
 */
export function componentUpgrades(base: PinExports, head: PinExports, rules: readonly UpgradeRule[]): ComponentUpgrade[] {
  const before = allLeaves(base);
  const out: ComponentUpgrade[] = [];
  for (const rule of rules) {
    const moves: PinMove[] = [];
    for (const leaf of ruleLeaves(rule, head)) {
      const old = before.get(leaf.path);
      if (!old || (old.version === leaf.version && old.detail === leaf.detail)) continue;
      moves.push({ path: leaf.path, from: old.version, to: leaf.version, detailFrom: old.detail, detailTo: leaf.detail });
    }
    const consistency = headProblems(rule, head);
    if (moves.length === 0) {
      if (consistency.length > 0) out.push({ rule, moves, direction: "change", notes: [], problems: consistency });
      continue;
    }
    const first = moves[0];
    // pins of one rule that move alike (the six CRD files of one release) are judged once
    const distinct = moves.filter((m, i) => moves.findIndex((o) => o.from === m.from && o.to === m.to) === i);
    const problems = [...distinct.flatMap((m) => judgeMove(rule, m) ?? []), ...consistency];
    out.push({ rule, moves, direction: direction(moves), notes: first.from === first.to ? [] : releaseNotes(rule.notes, first.from, first.to), problems });
  }
  return out;
}

/** What a stack's render carries, unit by unit: where a pin lands (the preview's and the checks' scope). */
export interface StackUse {
  units: { name: string; phase: string; chart?: { repository: string; chart: string }; urls?: string[]; texts: string[] }[];
  /** The node configuration's files (Talos, kind). */
  nodeConfig: string[];
}

/** A render's use of pins, from its index and its files (path → text). */
export function stackUse(index: RenderedIndex, files: RenderedFiles): StackUse {
  const text = (f: string | undefined) => (f === undefined ? [] : [files.get(f) ?? ""]);
  return {
    units: index.phases.flatMap((ph) =>
      ph.units.map((u) => ({
        name: u.name,
        phase: ph.name,
        ...(u.kind === "HelmRelease" ? { chart: { repository: u.chart.repository, chart: u.chart.chart } } : {}),
        ...(u.kind === "RemoteManifest" ? { urls: u.urls } : {}),
        texts: u.kind === "HelmRelease" ? text(u.values) : u.kind === "Manifests" ? u.objects.flatMap(text) : [],
      })),
    ),
    nodeConfig: (index.nodeConfig ?? []).flatMap(text),
  };
}

/** The text a render of a pin holds: an image's reference, a CSV's name, a plain string; none for a chart or a URL (the index has those). */
function marker(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (!isPlainObject(v)) return undefined;
  if (typeof v.startingCSV === "string") return v.startingCSV;
  if (typeof v.repository === "string" && typeof v.tag === "string") return `${v.repository}:${v.tag}`;
  return undefined;
}

/** Whether one unit of a render carries a pin. */
function carries(u: StackUse["units"][number], v: unknown): boolean {
  if (isPlainObject(v) && typeof v.chart === "string") return u.chart?.chart === v.chart && u.chart.repository === v.repository;
  // a release line of charts (the OpenKeel charts): every chart of its name, from whichever repository the stack names
  if (isPlainObject(v) && typeof v.prefix === "string") return u.chart?.chart.startsWith(v.prefix) ?? false;
  if (isPlainObject(v) && typeof v.url === "string") return u.urls?.includes(v.url) ?? false;
  const m = marker(v);
  return m !== undefined && u.texts.some((t) => t.includes(m));
}

/** Where a rule's pins (the head's) land in a stack: its units, in install order, and whether its node configuration holds one. */
export function ruleScope(rule: UpgradeRule, head: PinExports, use: StackUse): { units: StackUse["units"]; nodeConfig: boolean } {
  const values = ruleLeaves(rule, head).map((l) => l.value);
  const markers = values.flatMap((v) => marker(v) ?? []);
  return {
    units: use.units.filter((u) => values.some((v) => carries(u, v))),
    nodeConfig: use.nodeConfig.some((t) => markers.some((m) => t.includes(m))),
  };
}

/** Whether a stack installs anything a rule governs. */
export function ruleApplies(rule: UpgradeRule, head: PinExports, use: StackUse): boolean {
  if (rule.deployed === false) return false;
  const scope = ruleScope(rule, head, use);
  return scope.units.length > 0 || scope.nodeConfig;
}
