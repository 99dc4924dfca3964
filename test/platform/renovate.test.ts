// renovate.json finds every pin (issue 24, item 5): each custom manager's patterns, applied to the
// files its managerFilePatterns select as Renovate applies them (every match of every matchString,
// the templates filled from the named groups), find each pin of the upgrade rules of
// platform/versions.ts exactly once and each *_VERSION of the workflows exactly once; a pin no
// manager can update is named below with why. The config's shape is checked here, offline: the
// renovate package (its validator) is not a dependency of this repository.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ruleLeaves, type PinLeaf } from "../../platform/upgrades";
import * as versions from "../../platform/versions";
import { UPGRADE_RULES } from "../../platform/upgrade-rules";
import { REPO } from "../helpers/stacks";
import { isPlainObject } from "../../config/plain";

interface CustomManager {
  customType: string;
  description: string;
  managerFilePatterns: string[];
  matchStrings: string[];
  datasourceTemplate?: string;
  depNameTemplate?: string;
  packageNameTemplate?: string;
  currentValueTemplate?: string;
  registryUrlTemplate?: string;
  versioningTemplate?: string;
  extractVersionTemplate?: string;
}
interface PackageRule {
  description: string;
  matchPackageNames?: string[];
  matchDatasources?: string[];
  matchManagers?: string[];
  matchDepNames?: string[];
  separateMultipleMinor?: boolean;
  groupName?: string;
  [key: string]: unknown;
}
interface RenovateConfig {
  customManagers: CustomManager[];
  packageRules: PackageRule[];
  [key: string]: unknown;
}

/** One dependency a manager extracts, its templates filled (what Renovate would look up). */
interface Extraction {
  manager: number;
  file: string;
  text: string;
  depName?: string;
  packageName?: string;
  currentValue?: string;
  currentDigest?: string;
  datasource?: string;
  extractVersion?: string;
}

/** Pins no manager updates, each with why (a test below keeps this list true). */
const NOT_MANAGED: Record<string, string> = {
  OPENKEEL_CHARTS: "the project's own charts (one release line): no public registry is known (UNVERIFIED in platform/versions.ts), nothing to look up",
  OPENKEEL_CHART_REPOSITORY: "their registry (the same reason)",
  TALOS_IMAGE_FACTORY: "a host name, no release",
};
const notManaged = (leaf: PinLeaf) => Object.keys(NOT_MANAGED).some((k) => (k.endsWith(".*") ? leaf.path.startsWith(k.slice(0, -1)) : leaf.path === k));

const DATASOURCES = new Set(["helm", "github-releases", "github-tags", "docker", "node-version", "golang-version", "go", "npm", "git-refs"]);

function loadConfig(file = path.join(REPO, "renovate.json")): RenovateConfig {
  return JSON.parse(fs.readFileSync(file, "utf8")) as RenovateConfig;
}

/** Renovate's `/…/` pattern strings as RegExps (the only form renovate.json uses). */
function filePattern(p: string): RegExp {
  const m = /^\/(.*)\/$/.exec(p);
  if (!m) throw new Error(`managerFilePatterns: ${p} is no /regex/`);
  return new RegExp(m[1]);
}

/** Every file of the checkout a manager reads (the two folders that hold pins). */
function candidateFiles(): string[] {
  const workflows = fs.readdirSync(path.join(REPO, ".github/workflows")).map((f) => `.github/workflows/${f}`);
  return ["platform/versions.ts", ...workflows];
}

const fill = (template: string | undefined, groups: Record<string, string | undefined>) =>
  template?.replace(/\{\{\{?(\w+)\}?\}\}/g, (_, k: string) => groups[k] ?? "");

type Read = (file: string) => string;
const readRepo: Read = (f) => fs.readFileSync(path.join(REPO, f), "utf8");

/** What a config's custom managers extract from the files: every match of every matchString. */
function extract(config: RenovateConfig, read: Read = readRepo): Extraction[] {
  const out: Extraction[] = [];
  config.customManagers.forEach((m, manager) => {
    const files = candidateFiles().filter((f) => m.managerFilePatterns.some((p) => filePattern(p).test(f)));
    for (const file of files) {
      const text = read(file);
      for (const s of m.matchStrings) {
        for (const match of text.matchAll(new RegExp(s, "g"))) {
          const g = match.groups ?? {};
          const depName = g.depName ?? fill(m.depNameTemplate, g);
          const groups = { ...g, depName };
          out.push({
            manager,
            file,
            text: match[0],
            depName,
            packageName: g.packageName ?? fill(m.packageNameTemplate, groups),
            currentValue: g.currentValue ?? fill(m.currentValueTemplate, groups),
            currentDigest: g.currentDigest,
            datasource: g.datasource ?? m.datasourceTemplate,
            extractVersion: g.extractVersion ?? m.extractVersionTemplate,
          });
        }
      }
    }
  });
  return out;
}

const VERSIONS_TS = fs.readFileSync(path.join(REPO, "platform/versions.ts"), "utf8");

/** The source of an export's declaration (up to the next export). */
function declaration(name: string): string {
  const start = VERSIONS_TS.indexOf(`export const ${name}`);
  const end = VERSIONS_TS.indexOf("\nexport ", start + 1);
  return start < 0 ? "" : VERSIONS_TS.slice(start, end < 0 ? undefined : end);
}

/** Whether an extraction is this pin: its version, and what names it (chart, image, module, package, release URL, constant). */
function isPin(leaf: PinLeaf, e: Extraction): boolean {
  if (e.file !== "platform/versions.ts") return false;
  const v = leaf.value;
  // a pin whose version is a constant's (`version: KUBEVIRT_VERSION`, `tag: EXTERNAL_SNAPSHOTTER_VERSION`): that constant's match
  const constant = /(?:^|\n)(?:export )?const (\w+) = /.exec(e.text)?.[1];
  if (constant && isPlainObject(v)) return e.currentValue === leaf.version && new RegExp(`\\b${constant}\\b`).test(declaration(leaf.path.split(/[.[]/)[0]));
  if (!isPlainObject(v)) {
    // a constant: a commit is a digest, a version its value; the match names the constant
    const name = leaf.path.split(/[.[]/)[0];
    return e.text.includes(name) && (e.currentValue === v || e.currentDigest === v);
  }
  if (e.currentValue !== leaf.version) return false;
  if (typeof v.chart === "string") return e.depName === v.chart;
  if (typeof v.repository === "string" && typeof v.tag === "string")
    return e.depName === v.repository && e.currentDigest === (typeof v.digest === "string" ? v.digest : undefined);
  if (typeof v.module === "string") return e.depName === v.module;
  if (typeof v.package === "string") return e.depName === v.package;
  // a release asset or a file at a tag: its URL names the repository the manager looks up
  if (typeof v.url === "string") return v.url.includes(`/${e.packageName ?? e.depName}/`);
  return false;
}

const config = loadConfig();
const extractions = extract(config);
const leaves = UPGRADE_RULES.flatMap((r) => ruleLeaves(r, versions));

/** Each pin's extractions: exactly one each, or a list of what is wrong. */
function pinProblems(cfg: RenovateConfig, read: Read = readRepo): string[] {
  const found = extract(cfg, read);
  return leaves
    .filter((l) => !notManaged(l))
    .flatMap((l) => {
      const n = found.filter((e) => isPin(l, e)).length;
      return n === 1 ? [] : [`${l.path} (${l.version}) matched ${n} times`];
    });
}

describe("renovate.json", () => {
  it("has the shape Renovate reads: regex managers over /regex/ file patterns, known datasources, a name and a value for each", () => {
    expect(config.$schema).toBe("https://docs.renovatebot.com/renovate-schema.json");
    for (const m of config.customManagers) {
      expect(m.customType, m.description).toBe("regex");
      expect(m.managerFilePatterns.length, m.description).toBeGreaterThan(0);
      m.managerFilePatterns.forEach(filePattern);
      expect(m.matchStrings.length, m.description).toBeGreaterThan(0);
      const captured = m.matchStrings.every((s) => s.includes("(?<datasource>"));
      expect(captured || DATASOURCES.has(m.datasourceTemplate ?? ""), `${m.description}: datasource ${m.datasourceTemplate}`).toBe(true);
      for (const s of m.matchStrings) {
        // the groups Renovate reads; JS RegExp and RE2 both take (?<name>…)
        const groups = [...s.matchAll(/\(\?<(\w+)>/g)].map((g) => g[1]);
        expect(
          groups.every((g) => ["depName", "packageName", "currentValue", "currentDigest", "registryUrl", "datasource", "extractVersion"].includes(g)),
          s,
        ).toBe(true);
        expect(groups.includes("depName") || m.depNameTemplate !== undefined, `${m.description}: no depName`).toBe(true);
        expect(groups.includes("currentValue") || m.currentValueTemplate !== undefined, `${m.description}: no currentValue`).toBe(true);
        // RE2 has no lookaround nor backreferences
        expect(s, m.description).not.toMatch(/\(\?(?:[=!]|<[=!])|\\[1-9]/);
      }
    }
  });

  it("every manager matches something, and every extraction is a pin of platform/versions.ts or a *_VERSION of a workflow", () => {
    config.customManagers.forEach((m, i) =>
      expect(
        extractions.some((e) => e.manager === i),
        m.description,
      ).toBe(true),
    );
    for (const e of extractions) {
      expect(DATASOURCES.has(e.datasource ?? ""), `${e.file}: ${e.text}: datasource ${e.datasource}`).toBe(true);
      const known = e.file.startsWith(".github/") ? /\b[A-Z_]+_VERSION:/.test(e.text) : leaves.some((l) => isPin(l, e));
      expect(known, `${e.file}: ${e.text}`).toBe(true);
    }
  });

  it("finds each pin of the upgrade rules exactly once (charts with their repository, manifests, images with digests, OLM packages, Talos, kind, tools, schema commits)", () => {
    expect(pinProblems(config)).toEqual([]);
    const managed = leaves.filter((l) => !notManaged(l));
    expect(managed.length).toBeGreaterThan(20);
    for (const l of leaves.filter(notManaged))
      expect(
        extractions.some((e) => isPin(l, e)),
        `${l.path} is listed as not managed`,
      ).toBe(false);
  });

  it("the Helm charts carry their repository, the images their digest", () => {
    for (const e of extractions.filter((x) => x.datasource === "helm")) {
      const pin = leaves.find((l) => isPin(l, e))!.value as { repository: string };
      const m = config.customManagers[e.manager];
      expect(/registryUrl/.test(m.matchStrings.join()) ? e.text : m.registryUrlTemplate, e.depName).toContain(pin.repository);
    }
    // Kubernetes' tags carry a v, its pin does not; external-snapshotter also tags its client/ modules
    const tagOf = (depName: string) => extractions.find((e) => e.depName === depName)!;
    const version = (e: Extraction, tag: string) => new RegExp(e.extractVersion ?? "^(?<version>.*)$").exec(tag)?.groups?.version;
    expect(version(tagOf("kubernetes/kubernetes"), `v${versions.KUBERNETES_VERSION}`)).toBe(versions.KUBERNETES_VERSION);
    expect(version(tagOf("kubernetes-csi/external-snapshotter"), "client/v8.2.0")).toBeUndefined();
    const kindNode = extractions.find((e) => e.depName === "kindest/node")!;
    expect(kindNode.currentDigest).toBe(versions.KIND_NODE_IMAGE.digest);
  });

  it("finds each *_VERSION of each workflow exactly once (Node.js, Go, the Pulumi CLI and plugins, kind)", () => {
    const workflows = candidateFiles().filter((f) => f.startsWith(".github/"));
    let seen = 0;
    for (const file of workflows) {
      const wf = parse(fs.readFileSync(path.join(REPO, file), "utf8")) as {
        env?: Record<string, string>;
        jobs: Record<string, { env?: Record<string, string> }>;
      };
      const envs = [wf.env ?? {}, ...Object.values(wf.jobs).map((j) => j.env ?? {})];
      for (const [key, value] of envs.flatMap((e) => Object.entries(e)).filter(([k, v]) => k.endsWith("_VERSION") && !String(v).includes("${{"))) {
        const n = extractions.filter((e) => e.file === file && e.text.startsWith(`${key}:`) && e.currentValue === value).length;
        expect(n, `${file}: ${key}`).toBe(1);
        seen++;
      }
    }
    expect(seen).toBeGreaterThanOrEqual(9);
  });

  it("a release's constant without its `// renovate:` line, or a pin matched twice, is named (the check trips)", () => {
    const unannotated: Read = (f) => readRepo(f).replace(/\/\/ renovate: [^\n]*\n(export const TALOS_VERSION = )/, "$1");
    expect(unannotated("platform/versions.ts")).not.toBe(VERSIONS_TS);
    expect(pinProblems(config, unannotated)).toEqual(["TALOS_VERSION (v1.13.9) matched 0 times", "TALOS_CONFIG_SCHEMA (v1.13.9) matched 0 times"]);
    const helm = config.customManagers.find((m) => m.datasourceTemplate === "helm" && !m.registryUrlTemplate)!;
    const loose = { ...helm, matchStrings: ['chart:\\s*"(?<depName>[^"]+)",\\s*version:\\s*"(?<currentValue>[^"]+)"'] };
    const twice = { ...config, customManagers: [...config.customManagers, loose] };
    expect(pinProblems(twice)).toEqual(expect.arrayContaining(["LONGHORN_CHART (1.12.1) matched 2 times"]));
  });

  it("one PR per minor step for every component whose upgrade rule steps one minor at a time", () => {
    const separated = new Set(config.packageRules.filter((r) => r.separateMultipleMinor).flatMap((r) => r.matchPackageNames ?? []));
    for (const rule of UPGRADE_RULES.filter((r) => r.step === "minor")) {
      const names = ruleLeaves(rule, versions).flatMap((l) => extractions.filter((e) => isPin(l, e)).map((e) => e.packageName ?? e.depName));
      expect(names.length, rule.component).toBeGreaterThan(0);
      for (const n of names) expect(separated.has(n!), `${rule.component}: ${n}`).toBe(true);
    }
  });

  it("every package rule names packages the managers find (a typo matches nothing)", () => {
    const names = new Set(extractions.flatMap((e) => [e.depName, e.packageName]));
    // the built-in npm, github-actions and gomod (tools/talos-validate/go.mod) managers find these
    for (const n of ["@pulumi/pulumi", "@pulumi/kubernetes", "@pulumi/random", "node", "go", "github.com/siderolabs/talos/pkg/machinery"]) names.add(n);
    for (const r of config.packageRules.filter((p) => !p.matchManagers)) {
      for (const n of r.matchPackageNames ?? []) expect(names.has(n), `${r.description}: ${n}`).toBe(true);
    }
  });
});
