// The e2e artifact mirror: an HTTP server on 127.0.0.1 with the layout of `openkeel:mirror`
// (stacks/README.md): `/charts/index.yaml` + `/charts/<name>-<version>.tgz` (a flat Helm
// repository holding every chart a rendered stack asks for, at the version it asks for) and
// `/files/<host>/<path>` (every remote manifest). The mirror folder (../shared/mirror, or --mirror /
// OPENKEEL_MIRROR) holds each pinned file at `files/<host>/<path>` of its URL, and each chart
// repository as `files/<repository host>/<path>/index.yaml` with its archives. Upstream charts are
// the real archives of that folder, byte for byte: the flat repository's entry for one is the
// upstream index's own entry, its digest checked against the archive and its URL the flat
// repository's (an air-gapped mirror proxying several repositories under one path does the same).
// OpenKeel charts are the contract charts of e2e/charts/: nothing real can exist for them (no
// public index or archive). Files are served as they are but for one e2e-only rewrite: every
// webhook's clientConfig points at the admission stand-in (./admission.ts); a Helm release's
// webhooks are pointed there once they exist (admission.ts LiveWebhooks). Only without a mirror
// folder (--kubeconfig, unless --mirror) do charts and manifests get the stand-ins of
// e2e/standins/. Every request is recorded for the report.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import { STAND_IN_CHARTS, STAND_IN_FILES, standInFileYaml } from "../standins/artifacts";
import { rewriteForAdmission, type AdmissionStandIn } from "./admission";
import { tgz } from "./tar";
import { readDocs, type RenderedStack } from "./rendered";

export const CONTRACT_CHARTS_DIR = path.resolve(__dirname, "../charts");

export interface MirroredArtifact {
  /** chart `<name>-<version>` or file `<host>/<path>` */
  id: string;
  source: "contract chart" | "stand-in chart" | "stand-in manifest" | "upstream manifest" | "upstream chart";
  /** What a stand-in stands for; for an upstream manifest, where it comes from and what the e2e changed. */
  standsFor: string;
}

/** The file of a mirror folder (`files/<host>/<path>`) that holds what `url` serves. */
export function mirroredPath(mirrorDir: string, url: string): string {
  const u = new URL(url);
  return path.join(mirrorDir, "files", u.host, ...u.pathname.split("/").filter(Boolean));
}

interface ChartEntry {
  name: string;
  version: string;
  body: Buffer;
  /** An upstream chart's entry in its repository's index.yaml (its metadata served as upstream wrote it). */
  upstream?: Record<string, unknown>;
}

/** A chart of the mirror folder's copy of its Helm repository: the archive, and the index entry that lists it. */
export interface UpstreamChart {
  body: Buffer;
  entry: Record<string, unknown>;
  /** the archive's file in the mirror folder */
  file: string;
  index: string;
}

/**
 * The real archive of chart `name` at `version` from the mirror folder's copy of `repository`
 * (`files/<host>/<path>/index.yaml`, the entry's first URL mapped into the folder the same way),
 * its sha256 the entry's digest; a string says why there is none.
 */
export function upstreamChart(mirrorDir: string, repository: string, name: string, version: string): UpstreamChart | string {
  const index = mirroredPath(mirrorDir, `${repository.replace(/\/+$/, "")}/index.yaml`);
  if (!fs.existsSync(index)) return `${index} does not exist (the mirror folder has no copy of the Helm repository ${repository})`;
  const entries = ((parse(fs.readFileSync(index, "utf8")) as { entries?: Record<string, Record<string, unknown>[]> }).entries ?? {})[name] ?? [];
  const entry = entries.find((e) => String(e.version) === version);
  if (!entry) return `${index} lists no ${name} ${version} (it has ${entries.map((e) => String(e.version)).join(", ") || "no version of it"})`;
  const url = (entry.urls as string[] | undefined)?.[0];
  if (!url || !/^https?:\/\//.test(url)) return `${index}: ${name} ${version} has no absolute URL (${url ?? "none"})`;
  const file = mirroredPath(mirrorDir, url);
  if (!fs.existsSync(file)) return `${file} does not exist (${index} lists ${name} ${version} at ${url})`;
  const body = fs.readFileSync(file);
  const digest = createHash("sha256").update(body).digest("hex");
  if (entry.digest !== undefined && entry.digest !== digest) return `${file}: sha256 ${digest}, ${index} says ${String(entry.digest)} for ${name} ${version}`;
  return { body, entry, file, index };
}

function listFiles(dir: string, rel = ""): string[] {
  return fs
    .readdirSync(path.join(dir, rel), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(dir, path.join(rel, e.name)) : [path.join(rel, e.name)]))
    .sort();
}

function chartYaml(name: string, version: string, description: string): string {
  return stringify({ apiVersion: "v2", name, version, description, type: "application", annotations: { "e2e.openkeel.io/stand-in": "true" } });
}

/** Where a packaged contract chart has the shared § 5.2 helper (`openkeel.workload`), written once in `_shared/`. */
export const CONTRACT_HELPER = "templates/_openkeel.tpl";

/**
 * A contract chart of e2e/charts/<name> (or of `root`: an old ref's), packaged at `version`, with the
 * shared helper of `root`'s `_shared/` added to its templates: the charts carry no copy of it. A
 * chart of an old ref carried its own, which the mirror then held equal to the shared one: it still does.
 */
export function contractChart(name: string, version: string, root = CONTRACT_CHARTS_DIR): Buffer {
  const dir = path.join(root, name);
  const shared = path.join(root, "_shared", "_openkeel.tpl");
  const helper = fs.readFileSync(shared, "utf8");
  const own = path.join(dir, CONTRACT_HELPER);
  if (fs.existsSync(own) && fs.readFileSync(own, "utf8") !== helper)
    throw new Error(`${own} differs from ${shared}: delete it (the shared helper is added when the chart is packaged)`);
  const files: [string, string | Buffer][] = listFiles(dir)
    .filter((f) => f !== CONTRACT_HELPER)
    .map((f) => {
      let content: string | Buffer = fs.readFileSync(path.join(dir, f));
      if (f === "Chart.yaml") content = content.toString("utf8").replace(/^version: .*$/m, `version: ${version}`);
      return [`${name}/${f}`, content];
    });
  files.push([`${name}/${CONTRACT_HELPER}`, helper]);
  // Chart.yaml first, as `helm package` writes it
  files.sort(([a], [b]) => (a.endsWith("/Chart.yaml") ? -1 : b.endsWith("/Chart.yaml") ? 1 : a.localeCompare(b)));
  return tgz(files);
}

function standInChart(name: string, version: string, schemasDir: string): Buffer {
  const s = STAND_IN_CHARTS[name];
  const files = s.files(schemasDir);
  return tgz([
    [`${name}/Chart.yaml`, chartYaml(name, version, `E2E STAND-IN for the ${s.standsFor}; never used outside npm run e2e`)],
    ...Object.entries(files).map(([f, c]) => [`${name}/${f}`, c] as [string, string]),
  ]);
}

export class Mirror {
  private charts = new Map<string, ChartEntry>();
  private files = new Map<string, string>();
  /** What an upgrade run's old program is served instead, until upgrade() (addReleasedStack). */
  private releasedFiles = new Map<string, string>();
  private releasedCharts = new Map<string, ChartEntry>();
  readonly artifacts: MirroredArtifact[] = [];
  readonly problems: string[] = [];
  readonly requests: { path: string; status: number }[] = [];
  private server?: http.Server;
  url = "";

  /**
   * @param mirrorDir the folder of the real release manifests (`files/<host>/<path>`); a manifest it lacks gets a stand-in (all of them without a folder)
   * @param admission where the served manifests' webhooks are pointed (without it, a manifest with a webhook is refused)
   */
  constructor(
    private readonly schemasDir: string,
    readonly mirrorDir: string | undefined,
    private readonly admission?: AdmissionStandIn,
  ) {}

  /** Add every chart and remote manifest a rendered stack asks for. */
  addStack(r: RenderedStack): void {
    for (const u of r.units) {
      if (u.kind === "HelmRelease" && u.chart) this.addChart(u.chart.chart, u.chart.version, u.chart.repository);
      if (u.kind === "RemoteManifest") for (const url of u.urls ?? []) this.addFile(url);
    }
  }

  /**
   * An upgrade run's old program, deployed as its release was proven (upgrade.ts): until upgrade(),
   * the charts its own e2e had as contract charts (`chartsDir`: the old ref's e2e/charts) are
   * served from there, and, when its e2e predates the mirror folder (`standInManifests`), its
   * remote manifests as stand-ins; everything else as addStack.
   */
  addReleasedStack(r: RenderedStack, o: { chartsDir: string; standInManifests: boolean }): void {
    for (const u of r.units) {
      if (u.kind === "HelmRelease" && u.chart) this.addReleasedChart(u.chart.chart, u.chart.version, u.chart.repository, o.chartsDir);
      for (const url of u.kind === "RemoteManifest" ? (u.urls ?? []) : []) {
        if (o.standInManifests) this.addReleasedFile(url);
        else this.addFile(url);
      }
    }
  }

  private addReleasedChart(name: string, version: string, repository: string, chartsDir: string): void {
    const id = `${name}-${version}`;
    if (!fs.existsSync(path.join(chartsDir, name, "Chart.yaml"))) return this.addChart(name, version, repository);
    if (this.releasedCharts.has(id)) return;
    this.releasedCharts.set(id, { name, version, body: contractChart(name, version, chartsDir) });
    this.artifacts.push({
      id,
      source: "contract chart",
      standsFor: `${name}, until the upgrade for the old program only: its own contract chart (${chartsDir}/${name})`,
    });
  }

  private addReleasedFile(url: string): void {
    const base = path.posix.basename(new URL(url).pathname);
    const key = `${new URL(url).host}${new URL(url).pathname}`;
    const body = standInFileYaml(base, this.schemasDir);
    if (body === undefined) this.problems.push(`no stand-in for remote manifest ${url} (the old program's e2e served one)`);
    else if (!this.releasedFiles.has(key)) {
      this.releasedFiles.set(key, body);
      this.artifacts.push({
        id: key,
        source: "stand-in manifest",
        standsFor: `until the upgrade, for the old program only: ${STAND_IN_FILES[base].standsFor}`,
      });
    }
  }

  /** From now on every remote manifest is what the current program is served (the end of addReleasedStack's stand-ins). */
  upgrade(): void {
    this.releasedFiles.clear();
    this.releasedCharts.clear();
  }

  /**
   * A chart the render asks for: an OpenKeel chart's contract chart; an upstream chart's real archive
   * from the mirror folder (a folder without it is a problem, never a silent stand-in); without a
   * mirror folder, the upstream chart's stand-in.
   */
  private addChart(name: string, version: string, repository: string): void {
    const id = `${name}-${version}`;
    if (this.charts.has(id)) return;
    if (fs.existsSync(path.join(CONTRACT_CHARTS_DIR, name, "Chart.yaml"))) {
      this.charts.set(id, { name, version, body: contractChart(name, version) });
      this.artifacts.push({
        id,
        source: "contract chart",
        standsFor: `${name} (e2e/charts/${name}): the OpenKeel charts have no public index or archive, so nothing real can be installed`,
      });
    } else if (this.mirrorDir !== undefined) {
      const real = upstreamChart(this.mirrorDir, repository, name, version);
      if (typeof real === "string") {
        this.problems.push(`no real chart ${name} ${version} of ${repository}: ${real}`);
        return;
      }
      this.charts.set(id, { name, version, body: real.body, upstream: real.entry });
      this.artifacts.push({
        id,
        source: "upstream chart",
        standsFor: `${name} ${version} of ${repository}: ${real.file} (sha256 ${String(real.entry.digest ?? "not in the index")}, as ${real.index} lists it), served unchanged`,
      });
    } else if (STAND_IN_CHARTS[name]) {
      this.charts.set(id, { name, version, body: standInChart(name, version, this.schemasDir) });
      this.artifacts.push({ id, source: "stand-in chart", standsFor: `${STAND_IN_CHARTS[name].standsFor} — no mirror folder (--mirror)` });
    } else {
      this.problems.push(`no contract chart or stand-in for chart ${name} ${version}`);
    }
  }

  private addFile(url: string): void {
    const u = new URL(url);
    const key = `${u.host}${u.pathname}`;
    if (this.files.has(key)) return;
    const real = this.mirrorDir === undefined ? undefined : mirroredPath(this.mirrorDir, url);
    if (real !== undefined && fs.existsSync(real)) {
      this.addUpstreamFile(key, real);
      return;
    }
    const base = path.posix.basename(u.pathname);
    const body = standInFileYaml(base, this.schemasDir);
    if (body === undefined) {
      this.problems.push(`no stand-in for remote manifest ${url}`);
      return;
    }
    this.files.set(key, body);
    const why = real === undefined ? "no mirror folder (--mirror)" : `${real} does not exist`;
    this.artifacts.push({ id: key, source: "stand-in manifest", standsFor: `${STAND_IN_FILES[base].standsFor} — ${why}` });
  }

  /** A real manifest of the mirror folder, its webhooks pointed at the admission stand-in (the only change). */
  private addUpstreamFile(key: string, file: string): void {
    const text = fs.readFileSync(file, "utf8");
    const objects = readDocs(file);
    const endpoint = this.admission?.endpoint ?? { url: "https://admission-stand-in.invalid", caBundle: "" };
    const { rewritten, problems } = rewriteForAdmission(objects, endpoint, key);
    this.problems.push(...problems);
    if (rewritten.length > 0 && !this.admission) this.problems.push(`${key} has webhooks and the mirror has no admission stand-in to point them at`);
    this.admission?.webhooks.push(...rewritten);
    // unchanged files are served byte for byte; a rewritten one as the same objects re-serialized
    this.files.set(key, rewritten.length === 0 ? text : objects.map((o) => `---\n${stringify(o, { lineWidth: 0 })}`).join(""));
    const changed = rewritten.length
      ? `; e2e rewrite: the clientConfig of ${rewritten.map((w) => `${w.configuration}/${w.webhook}`).join(", ")} → the admission stand-in`
      : "; served unchanged";
    this.artifacts.push({ id: key, source: "upstream manifest", standsFor: `${objects.length} objects from ${file}${changed}` });
  }

  /** The body the mirror serves for a remote manifest URL (undefined when it has no stand-in). */
  fileBody(url: string): string | undefined {
    const u = new URL(url);
    return this.releasedFiles.get(`${u.host}${u.pathname}`) ?? this.files.get(`${u.host}${u.pathname}`);
  }

  /** The body it serves for a URL when that is the real upstream manifest (not a stand-in). */
  servedUpstream(url: string): string | undefined {
    const u = new URL(url);
    const key = `${u.host}${u.pathname}`;
    return this.artifacts.some((a) => a.id === key && a.source === "upstream manifest") ? this.files.get(key) : undefined;
  }

  private index(): string {
    const entries: Record<string, unknown[]> = {};
    const served = new Map([...this.charts, ...this.releasedCharts]);
    for (const c of [...served.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      (entries[c.name] ??= []).push({
        ...(c.upstream ?? { apiVersion: "v2", name: c.name, version: c.version, type: "application", created: "2026-01-01T00:00:00Z" }),
        digest: createHash("sha256").update(c.body).digest("hex"),
        urls: [`${this.url}/charts/${c.name}-${c.version}.tgz`],
      });
    }
    return stringify({ apiVersion: "v1", entries, generated: "2026-01-01T00:00:00Z" });
  }

  async start(): Promise<string> {
    this.server = http.createServer((req, res) => {
      const p = decodeURIComponent((req.url ?? "/").split("?")[0]);
      let status = 404;
      let body: string | Buffer = "not in the e2e mirror\n";
      let type = "text/plain";
      if (p === "/charts/index.yaml") {
        status = 200;
        body = this.index();
        type = "application/x-yaml";
      } else if (p.startsWith("/charts/") && p.endsWith(".tgz")) {
        const id = p.slice("/charts/".length, -".tgz".length);
        const c = this.releasedCharts.get(id) ?? this.charts.get(id);
        if (c) {
          status = 200;
          body = c.body;
          type = "application/gzip";
        }
      } else if (p.startsWith("/files/")) {
        const key = p.slice("/files/".length);
        const f = this.releasedFiles.get(key) ?? this.files.get(key);
        if (f !== undefined) {
          status = 200;
          body = f;
          type = "application/x-yaml";
        }
      }
      this.requests.push({ path: p, status });
      res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
      res.end(req.method === "HEAD" ? undefined : body);
    });
    await new Promise<void>((ok) => this.server!.listen(0, "127.0.0.1", ok));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections?.();
    await new Promise<void>((ok) => this.server!.close(() => ok()));
  }
}
