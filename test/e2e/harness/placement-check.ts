// Placement proven by the real scheduler: where the pods of every component were bound, against
// rendered/<stack>/placement.md. For the contract charts' components (pods labelled
// app.kubernetes.io/instance=<release>, app.kubernetes.io/component=<placement key>) and for the
// Deployments/DaemonSets/StatefulSets this repository writes as objects. A pod bound where the
// report says `·`, a DaemonSet that covers other nodes than the report's `●`, a Pending pod, a
// component of the report without pods or pods of a component the report lacks: each is a
// disagreement between our model and the scheduler.
import * as path from "node:path";
import type { Kube } from "./kube";
import type { PlacementReport, PlacementRow, RenderedStack } from "./rendered";
import { readDocs } from "./rendered";

type Obj = Record<string, any>;

interface PlacementFinding {
  component: string;
  problem: string;
}

export interface PlacementResult {
  checked: string[];
  findings: PlacementFinding[];
  storage: { object: string; storageClass: string; exists: boolean }[];
}

function podReason(p: Obj): string {
  const c = (p.status?.conditions ?? []).find((x: Obj) => x.type === "PodScheduled");
  return c ? `${c.reason ?? ""}: ${c.message ?? ""}` : `phase ${p.status?.phase}`;
}

function eligibleNodes(row: PlacementRow): string[] {
  return Object.entries(row.eligible)
    .filter(([, ok]) => ok)
    .map(([n]) => n)
    .sort();
}

interface Group {
  component: string;
  kinds: Set<string>;
  pods: Obj[];
  daemonSets: Obj[];
  workloads: Obj[];
}

export async function checkPlacement(kube: Kube, r: RenderedStack, report: PlacementReport): Promise<PlacementResult> {
  const rows = new Map(report.rows.map((x) => [x.component, x]));
  const groups = new Map<string, Group>();
  const group = (c: string) => {
    let g = groups.get(c);
    if (!g) groups.set(c, (g = { component: c, kinds: new Set(), pods: [], daemonSets: [], workloads: [] }));
    return g;
  };

  // contract charts: every workload and pod labelled by release and placement key
  const sel = "labelSelector=e2e.openkeel.io%2Fcontract-chart";
  const [pods, dss, deps, stss] = await Promise.all([
    kube.list(`/api/v1/pods?${sel}`),
    kube.list(`/apis/apps/v1/daemonsets?${sel}`),
    kube.list(`/apis/apps/v1/deployments?${sel}`),
    kube.list(`/apis/apps/v1/statefulsets?${sel}`),
  ]);
  const key = (o: Obj) => `${o.metadata.labels["app.kubernetes.io/instance"]}/${o.metadata.labels["app.kubernetes.io/component"]}`;
  for (const p of pods) group(key(p)).pods.push(p);
  for (const w of [...dss, ...deps, ...stss]) {
    const g = group(key(w));
    g.kinds.add(w.kind ?? (dss.includes(w) ? "DaemonSet" : deps.includes(w) ? "Deployment" : "StatefulSet"));
    g.workloads.push(w);
    if (dss.includes(w)) g.daemonSets.push(w);
  }

  // workloads this repository writes as objects: <unit>/<object name> rows
  for (const u of r.units) {
    for (const f of u.objects ?? []) {
      for (const o of readDocs(path.join(r.dir, f)) as Obj[]) {
        if (!["Deployment", "DaemonSet", "StatefulSet"].includes(o.kind)) continue;
        const component = `${u.name}/${o.metadata.name}`;
        if (!rows.has(component)) continue;
        const ns = o.metadata.namespace ?? "default";
        const plural = `${o.kind.toLowerCase()}s`;
        const live = await kube.get<Obj>(`/apis/apps/v1/namespaces/${ns}/${plural}/${o.metadata.name}`);
        const g = group(component);
        g.kinds.add(o.kind);
        if (!live) continue;
        g.workloads.push(live);
        if (o.kind === "DaemonSet") g.daemonSets.push(live);
        const matchLabels = live.spec.selector.matchLabels as Record<string, string>;
        const q = Object.entries(matchLabels)
          .map(([k, v]) => `${k}=${v}`)
          .join(",");
        g.pods.push(...(await kube.list(`/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(q)}`)));
      }
    }
  }

  const findings: PlacementFinding[] = [];
  const checked: string[] = [];
  for (const g of [...groups.values()].sort((a, b) => a.component.localeCompare(b.component))) {
    const row = rows.get(g.component);
    if (!row) {
      findings.push({
        component: g.component,
        problem: `the cluster runs ${g.pods.length} pod(s) of ${[...g.kinds].join("/")} ${g.component}, placement.md has no row for it`,
      });
      continue;
    }
    const allowed = eligibleNodes(row);
    const bound = g.pods.filter((p) => p.spec.nodeName);
    const pending = g.pods.filter((p) => !p.spec.nodeName);
    const where = [...new Set(bound.map((p) => p.spec.nodeName as string))].sort();
    checked.push(`${g.component} (${[...g.kinds].join("/")}): pods on ${where.join(", ") || "no node"}; placement.md ● ${allowed.join(", ") || "none"}`);
    // a DaemonSet's misplaced pods are reported once, by the coverage comparison below
    for (const p of g.daemonSets.length > 0 ? [] : bound) {
      if (!row.eligible[p.spec.nodeName]) {
        findings.push({
          component: g.component,
          problem: `DISAGREEMENT: the scheduler bound ${p.metadata.name} to ${p.spec.nodeName}; placement.md says · there (● only on ${allowed.join(", ") || "no node"})`,
        });
      }
    }
    for (const p of pending) {
      findings.push({
        component: g.component,
        problem: `pod ${p.metadata.name} is Pending: ${podReason(p)} (placement.md names no reason; ● on ${allowed.join(", ") || "no node"})`,
      });
    }
    if (g.daemonSets.length > 0) {
      const extra = where.filter((n) => !allowed.includes(n));
      const missing = allowed.filter((n) => !where.includes(n));
      if (extra.length || missing.length) {
        findings.push({
          component: g.component,
          problem: `DISAGREEMENT: DaemonSet covers ${where.join(", ") || "no node"}; placement.md marks ${allowed.join(", ") || "no node"}${extra.length ? ` (extra: ${extra.join(", ")})` : ""}${missing.length ? ` (missing: ${missing.join(", ")})` : ""}`,
        });
      }
    }
    if (g.workloads.length === 0) findings.push({ component: g.component, problem: "placement.md lists it, the cluster has no such workload" });
  }
  // OpenKeel rows of the report with no workload at all
  for (const row of report.rows) {
    if (!row.component.startsWith("openkeel-")) continue;
    if (!groups.has(row.component))
      findings.push({ component: row.component, problem: `placement.md lists ${row.kind} ${row.component}, the contract chart created no such workload` });
  }

  // StatefulSets record the storage class they would claim: it must exist
  const classes = new Set((await kube.list("/apis/storage.k8s.io/v1/storageclasses")).map((s) => s.metadata.name as string));
  const storage = stss
    .filter((s) => s.metadata.annotations?.["e2e.openkeel.io/storage-class"])
    .map((s) => {
      const sc = s.metadata.annotations?.["e2e.openkeel.io/storage-class"] as string;
      return { object: `StatefulSet ${s.metadata.namespace}/${s.metadata.name}`, storageClass: sc, exists: classes.has(sc) };
    });
  return { checked, findings, storage };
}

/**
 * What the API server kept of each object: every leaf of the object as written (rendered objects,
 * and the objects of the contract charts' Helm releases) must be in the live object with the same
 * value. A structural CRD schema prunes unknown fields silently; this catches it.
 */
export function compareLeaves(written: unknown, live: unknown, at = ""): string[] {
  if (typeof written === "string" && /^<pulumi-secret:/.test(written)) return [];
  if (written === null || typeof written !== "object") {
    if (live === undefined) return [`${at}: missing in the cluster (pruned?)`];
    // the API server normalises quantities and int-or-strings; compare as strings
    return String(written) === String(live) ? [] : [`${at}: written ${JSON.stringify(written)}, cluster has ${JSON.stringify(live)}`];
  }
  if (Array.isArray(written)) {
    if (!Array.isArray(live)) return written.length === 0 ? [] : [`${at}: missing in the cluster (pruned?)`];
    return written.flatMap((w, i) => compareLeaves(w, live[i], `${at}[${i}]`));
  }
  if (live === null || typeof live !== "object") return Object.keys(written as object).length === 0 ? [] : [`${at}: missing in the cluster (pruned?)`];
  return Object.entries(written as Record<string, unknown>).flatMap(([k, v]) => compareLeaves(v, (live as Record<string, unknown>)[k], at ? `${at}.${k}` : k));
}
