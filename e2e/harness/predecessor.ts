// `npm run e2e -- --from-predecessors` (issue 37 item 3): Renovate's path on a deployed cluster. The
// stack is first deployed by the current program with every upstream artifact at its predecessor,
// then the real project applies today's pins on the same state in one `pulumi up`: the program is
// the same, only platform/versions.ts differs. The predecessors are what the mirror folder holds
// beside each pin (../shared/mirror/README.md: the newest patch of the previous minor, or the
// release before the pin), found there, not listed here:
//   a chart: the highest version below the pin in its repository's index.yaml;
//   a release manifest: the highest version folder below the pin's, beside it at the same place of
//     the URL, that holds the same file;
//   an image whose GitHub project the mirror holds files of (Multus: ghcr.io/<org>/<repo> and
//     raw.githubusercontent.com/<org>/<repo>/<tag>/): the highest tag below the pin's, the pin's
//     suffix kept (`-thick`).
// The copy's platform/versions.ts has each pin's literal replaced by its predecessor (the
// `readAt` of a host facts row, where a fact was read, is platform/host-facts.ts's or its component's module's and stays), and its render must show every
// planned move and nothing else.
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { mirroredPath } from "./mirror";
import { copyProject } from "./project";
import { readDocs, type RenderedStack } from "./rendered";

/** One pin moved to its predecessor. */
export interface PinMove {
  kind: "chart" | "manifest" | "image";
  /** the chart's name, the manifest's URL, the image's repository */
  what: string;
  from: string;
  to: string;
}

/** `v1.16.2`, `26.6.0`, `v4.3.0-thick` → [1, 16, 2] … (the release part, numbers only); undefined if not a version. */
export function versionParts(v: string): number[] | undefined {
  const m = /^v?(\d+(?:\.\d+)*)(?:-.*)?$/.exec(v);
  return m ? m[1].split(".").map(Number) : undefined;
}

export function compareVersions(a: string, b: string): number {
  const pa = versionParts(a) ?? [];
  const pb = versionParts(b) ?? [];
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/** The highest of `candidates` below `pin` (versions only), or undefined. */
export function predecessorOf(pin: string, candidates: readonly string[]): string | undefined {
  return candidates
    .filter((c) => versionParts(c) && compareVersions(c, pin) < 0)
    .sort(compareVersions)
    .at(-1);
}

function chartPredecessor(mirrorDir: string, repository: string, chart: string, version: string): string | undefined {
  const index = mirroredPath(mirrorDir, `${repository.replace(/\/+$/, "")}/index.yaml`);
  if (!fs.existsSync(index)) return undefined;
  const entries = ((parse(fs.readFileSync(index, "utf8")) as { entries?: Record<string, { version: string }[]> }).entries ?? {})[chart] ?? [];
  return predecessorOf(
    version,
    entries.map((e) => String(e.version)),
  );
}

/** The version folders beside `dir`'s segment `version`, each with `rest` under it. */
function siblingVersions(parent: string, rest: string[]): string[] {
  if (!fs.existsSync(parent)) return [];
  return fs.readdirSync(parent).filter((d) => fs.existsSync(path.join(parent, d, ...rest)));
}

function manifestPredecessor(mirrorDir: string, url: string, version: string): string | undefined {
  const u = new URL(url);
  const segments = u.pathname.split("/").filter(Boolean);
  const at = segments.indexOf(version);
  if (at < 0) return undefined;
  const parent = path.join(mirrorDir, "files", u.host, ...segments.slice(0, at));
  return predecessorOf(version, siblingVersions(parent, segments.slice(at + 1)));
}

function imagePredecessor(mirrorDir: string, image: string): PinMove | undefined {
  const m = /^ghcr\.io\/([^/]+)\/([^/:@]+):(v?\d[^@]*)/.exec(image);
  if (!m) return undefined;
  const [, org, repo, tag] = m;
  const suffix = /^v?\d+(?:\.\d+)*(-.*)?$/.exec(tag)?.[1] ?? "";
  const release = tag.slice(0, tag.length - suffix.length);
  const dirs = [
    path.join(mirrorDir, "files", "raw.githubusercontent.com", org, repo),
    path.join(mirrorDir, "files", "github.com", org, repo, "releases", "download"),
  ];
  const tags = dirs.flatMap((d) => (fs.existsSync(d) ? fs.readdirSync(d) : []));
  if (!tags.includes(release)) return undefined;
  const to = predecessorOf(release, tags);
  return to ? { kind: "image", what: `ghcr.io/${org}/${repo}`, from: tag, to: `${to}${suffix}` } : undefined;
}

/** The images of a render's objects (containers and init containers of every pod template). */
function renderedImages(r: RenderedStack): string[] {
  const images = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        if (k === "image" && typeof x === "string") images.add(x);
        else walk(x);
      }
  };
  for (const u of r.units) for (const f of u.objects ?? []) readDocs(path.join(r.dir, f)).forEach(walk);
  return [...images].sort();
}

/** What a stack's pins move to, and what has no predecessor in the mirror folder. */
export function predecessorMoves(r: RenderedStack, mirrorDir: string): { moves: PinMove[]; none: string[] } {
  const moves: PinMove[] = [];
  const none: string[] = [];
  const seen = new Set<string>();
  const add = (m: PinMove | undefined, what: string) => {
    if (!m) none.push(what);
    else if (!seen.has(`${m.kind} ${m.what}`)) {
      seen.add(`${m.kind} ${m.what}`);
      moves.push(m);
    }
  };
  for (const u of r.units) {
    if (u.kind === "HelmRelease" && u.chart && !u.chart.chart.startsWith("openkeel-")) {
      const { chart, repository, version } = u.chart;
      const to = chartPredecessor(mirrorDir, repository, chart, version);
      add(to ? { kind: "chart", what: chart, from: version, to } : undefined, `chart ${chart} ${version}`);
    }
    if (u.kind === "RemoteManifest")
      for (const url of u.urls ?? []) {
        const to = manifestPredecessor(mirrorDir, url, u.version!);
        add(to ? { kind: "manifest", what: url, from: u.version!, to } : undefined, `manifest ${url}`);
      }
  }
  for (const image of renderedImages(r)) {
    const m = imagePredecessor(mirrorDir, image);
    if (m) add(m, image);
  }
  return { moves, none };
}

/**
 * platform/versions.ts with each move's `"from"` literal replaced by `"to"`; a version found nowhere
 * is a problem. The tags the host facts were read at (`readAt`) are platform/host-facts.ts's and the
 * components' modules', which the copy keeps: a fact stays what it was read at.
 */
export function withPredecessors(versionsTs: string, moves: readonly PinMove[]): { text: string; problems: string[] } {
  const problems: string[] = [];
  let lines = versionsTs.split("\n");
  for (const from of [...new Set(moves.map((m) => m.from))]) {
    const tos = [...new Set(moves.filter((m) => m.from === from).map((m) => m.to))];
    if (tos.length > 1)
      problems.push(`"${from}" is pinned by several artifacts whose predecessors differ (${tos.join(", ")}): one literal cannot move to both`);
    const to = tos[0];
    let n = 0;
    lines = lines.map((l) => {
      if (!l.includes(`"${from}"`)) return l;
      n++;
      return l.split(`"${from}"`).join(`"${to}"`);
    });
    if (n === 0) problems.push(`platform/versions.ts has no literal "${from}" to move to "${to}"`);
  }
  return { text: lines.join("\n"), problems };
}

/** What differs between two renders' artifacts: chart versions, manifest URLs, images. */
export function artifactDiff(before: RenderedStack, after: RenderedStack): string[] {
  const artifacts = (r: RenderedStack) =>
    new Set([
      ...r.units.flatMap((u) => (u.kind === "HelmRelease" && u.chart ? [`chart ${u.chart.chart} ${u.chart.version}`] : [])),
      ...r.units.flatMap((u) => (u.urls ?? []).map((x) => `manifest ${x}`)),
      ...renderedImages(r).map((i) => `image ${i}`),
    ]);
  const a = artifacts(before);
  const b = artifacts(after);
  return [...[...a].filter((x) => !b.has(x)).map((x) => `- ${x}`), ...[...b].filter((x) => !a.has(x)).map((x) => `+ ${x}`)];
}

/** The current program with a stack's pins at their predecessors, in its own folder. */
export class PredecessorProgram {
  readonly servedRealManifests = true;
  moves: PinMove[] = [];
  none: string[] = [];
  modules = "the current node_modules linked";

  constructor(
    readonly dir: string,
    readonly chartsDir: string,
    private readonly repoRoot: string,
  ) {}

  /** The copy, its versions.ts moved to the predecessors of what `current` deploys. */
  prepare(current: RenderedStack, mirrorDir: string): void {
    ({ moves: this.moves, none: this.none } = predecessorMoves(current, mirrorDir));
    if (this.moves.length === 0) throw new Error(`the mirror folder ${mirrorDir} holds no predecessor of any pin of ${current.index.stack}`);
    fs.rmSync(this.dir, { recursive: true, force: true });
    copyProject(this.repoRoot, this.dir);
    const file = path.join(this.dir, "platform", "versions.ts");
    const { text, problems } = withPredecessors(fs.readFileSync(file, "utf8"), this.moves);
    if (problems.length) throw new Error(problems.join("; "));
    fs.writeFileSync(file, text);
  }
}
