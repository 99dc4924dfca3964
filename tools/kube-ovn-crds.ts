// Kube-OVN's CRDs at the pinned chart's version, for what no schema folder has: the kubeovn.io
// group (the Subnet that makes Kube-OVN the IPAM of the Multus attachments, platform/kube-ovn.ts).
// Neither ../shared/schemas nor datreeio/CRDs-catalog holds it, so `npm run tools` fetches the
// module github.com/kubeovn/kube-ovn at KUBE_OVN_CHART's version through the Go module proxy
// (`go mod download`, checked against sum.golang.org like the tools), copies the chart's own CRD
// file (charts/kube-ovn/templates/kube-ovn-crd.yaml, plain YAML) into .tools/, and converts its
// CRDs to strict JSON schemas the way the medik8s CRDs are (tools/upstream-schemas.ts). Validation
// reads them from there; the e2e's Kube-OVN stand-in chart serves the CRD file itself.
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { KUBE_OVN_CHART } from "../platform/versions";
import { goModDownload, ToolError, TOOLS_DIR, type ModuleDownload } from "./tools";
import { manifestCrdSchemas } from "./upstream-schemas";

export const KUBE_OVN_MODULE = "github.com/kubeovn/kube-ovn";
/** The CRD file of the chart, inside the module. */
export const KUBE_OVN_CRD_FILE = "charts/kube-ovn/templates/kube-ovn-crd.yaml";
/** The API group whose schemas the folder holds (none of the other schema locations has it). */
export const KUBE_OVN_GROUP = "kubeovn.io";
/** The kinds validation and the e2e need: the objects this repository writes. */
export const KUBE_OVN_KINDS = ["Subnet"] as const;

/** `.tools/kube-ovn-<version>/`: the CRD file, schemas/crds/kubeovn.io/*.json and SOURCES.json. */
export function kubeOvnCrdsDir(toolsDir = TOOLS_DIR, version = KUBE_OVN_CHART.version): string {
  return path.join(toolsDir, `kube-ovn-${version}`);
}

/** The schema folder (crds/<group>/<kind>_<version>.json, the layout of ../shared/schemas/crds). */
export function kubeOvnSchemasDir(toolsDir = TOOLS_DIR): string {
  return path.join(kubeOvnCrdsDir(toolsDir), "schemas");
}

export function kubeOvnCrdPath(toolsDir = TOOLS_DIR): string {
  return path.join(kubeOvnCrdsDir(toolsDir), "kube-ovn-crd.yaml");
}

export interface KubeOvnCrds {
  dir: string;
  built: boolean;
}

/**
 * The folder of kubeOvnCrdsDir(), built unless it is there: written into a temporary folder
 * renamed into place, so an interrupted build leaves nothing half-made.
 */
export function ensureKubeOvnCrds(toolsDir = TOOLS_DIR, download: ModuleDownload = (m, v) => goModDownload(m, v, "Kube-OVN's CRDs")): KubeOvnCrds {
  const dir = kubeOvnCrdsDir(toolsDir);
  if (fs.existsSync(path.join(dir, "SOURCES.json"))) return { dir, built: false };
  fs.mkdirSync(toolsDir, { recursive: true });
  const { version } = KUBE_OVN_CHART;
  const mod = download(KUBE_OVN_MODULE, version);
  const source = path.join(mod.dir, KUBE_OVN_CRD_FILE);
  if (!fs.existsSync(source))
    throw new ToolError(`${KUBE_OVN_MODULE}@${version} has no ${KUBE_OVN_CRD_FILE}. Fix: check KUBE_OVN_CHART in platform/versions.ts`);
  const text = fs.readFileSync(source, "utf8");
  const schemas = manifestCrdSchemas(text);
  const missing = KUBE_OVN_KINDS.filter((k) => !schemas.some((s) => s.file === `crds/${KUBE_OVN_GROUP}/${k.toLowerCase()}_v1.json`));
  if (missing.length > 0)
    throw new ToolError(
      `${KUBE_OVN_MODULE}@${version} ${KUBE_OVN_CRD_FILE} defines no ${missing.join(", ")} of ${KUBE_OVN_GROUP}/v1. Fix: check KUBE_OVN_CHART`,
    );
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  for (const s of schemas) {
    const file = path.join(tmp, "schemas", s.file);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(s.schema, null, 2)}\n`);
  }
  fs.writeFileSync(path.join(tmp, "kube-ovn-crd.yaml"), text);
  const sha256 = crypto.createHash("sha256").update(text).digest("hex");
  fs.writeFileSync(
    path.join(tmp, "SOURCES.json"),
    `${JSON.stringify({ module: `${KUBE_OVN_MODULE}@${version}`, sum: mod.sum, file: KUBE_OVN_CRD_FILE, sha256 }, null, 2)}\n`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
  return { dir, built: true };
}

/** The path of the built CRD file, or a ToolError saying to run `npm run tools`. */
export function requireKubeOvnCrds(toolsDir = TOOLS_DIR): string {
  if (!fs.existsSync(path.join(kubeOvnCrdsDir(toolsDir), "SOURCES.json")))
    throw new ToolError(
      `${kubeOvnCrdsDir(toolsDir)}: Kube-OVN's CRDs (${KUBE_OVN_MODULE}@${KUBE_OVN_CHART.version}) are not there. Fix: run \`npm run tools\`.`,
    );
  return kubeOvnCrdPath(toolsDir);
}
