// E2E STAND-IN CONTROLLER (never used outside `npm run e2e`): plays the operators the e2e cluster
// does not run, only where the program waits on them.
//   OLM          a Subscription without status.installedCSV → the operator's CRDs (built from
//                ../shared/schemas, as its CSV would install them) and its ClusterServiceVersion
//                (phase Installing), then status.installedCSV = spec.startingCSV (what
//                `pulumi.com/waitFor: jsonpath={.status.installedCSV}` waits for); for
//                self-node-remediation and node-healthcheck-operator, what the CSV's install creates
//                (../standins/olm.ts OPERATOR_INSTALLS): its webhook Service and configurations at
//                once, its Deployment its startupSeconds later (SNR's: its pods' start-up); the CSV
//                Succeeded once that Deployment is available (NMO's at once): what the program's
//                medik8s-installed unit waits for
//   SNR operator once its Deployment is available: the `self-node-remediation-config` object it
//                creates at start-up (the program patches it)
//   virt-operator / cdi-operator: condition Available=True on KubeVirt and CDI (what
//                `pulumi.com/waitFor: condition=Available` waits for), through the status
//                subresource where the CRD has one (KubeVirt), else on the object itself (the real
//                CDI CRD of cdi-operator.yaml declares none)
//   mariadb-operator / RabbitMQ cluster operator: the StatefulSet each builds from a MariaDB or
//                RabbitmqCluster CR (../standins/operators.ts), so that the real scheduler places
//                Galera and RabbitMQ from the CRs as the release applied them, post-render patches included
//   MetalLB      a LoadBalancer Service without an address → the first address of the stack's pool
//                `openkeel-public` in status.loadBalancer (Pulumi waits for the Service's address)
// Usage: tsx standin-controller.ts <kubeconfig> <schemas dir> <log file (JSON lines)>
// Every action is one line of the log; the driver lists them in the report.
import * as fs from "node:fs";
import { crdFor, KINDS } from "../standins/crds";
import { Kube, type KubeObject } from "./kube";
import { galeraStatefulSet, rabbitmqStatefulSet, type OperatorCr } from "../standins/operators";
import { csvObject, operatorDeployment, OPERATOR_INSTALLS, SNR_INSTALL, webhookObjects, type OperatorInstall } from "../standins/olm";

const [kubeconfig, schemasDir, logFile] = process.argv.slice(2);
if (!kubeconfig || !schemasDir || !logFile) {
  console.error("usage: standin-controller.ts <kubeconfig> <schemas dir> <log file>");
  process.exit(2);
}
const kube = new Kube(kubeconfig);
const done = new Set<string>();

/** An OLM Subscription, the fields OLM reads and writes. */
interface Subscription extends KubeObject {
  spec?: { name?: string; startingCSV?: string };
  status?: { installedCSV?: string };
}

function log(action: string, object: string, detail = ""): void {
  fs.appendFileSync(logFile, `${JSON.stringify({ time: new Date().toISOString(), action, object, detail })}\n`);
}

async function ensureCrds(pkg: string): Promise<void> {
  for (const k of KINDS.medik8s[pkg] ?? []) {
    const crd = crdFor(schemasDir, k, `stand-in for the CRDs OLM installs with ${pkg}`);
    const name = (crd.metadata as { name: string }).name;
    const r = await kube.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    if (r.status === 201) log("create CRD", name, `as the CSV of ${pkg} would (from ../shared/schemas)`);
    // wait until established: the Subscription is reported installed only after its CRDs serve
    for (let i = 0; i < 100; i++) {
      const got = await kube.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      if (got?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")) break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
  }
}

/** When each install's Deployment is due (its pods' start-up after the webhooks exist), by package and namespace. */
const installDue = new Map<string, { at: number; config: Record<string, unknown> }>();
const dueKey = (pkg: string, ns: string) => `${pkg}/${ns}`;
const installOf = (pkg: string) => OPERATOR_INSTALLS.find((i) => i.package === pkg);

async function install(i: OperatorInstall, ns: string, config: Record<string, unknown>): Promise<void> {
  for (const o of webhookObjects(i, ns)) {
    const r = await kube.create(o.path, o.body);
    const meta = o.body.metadata as { name?: string; generateName?: string };
    if (r.status === 201)
      log("create", `${String(o.body.kind)} ${meta.name ?? `${meta.generateName}…`}`, `as OLM's install of the ${i.package} CSV does (its webhookdefinitions)`);
  }
  installDue.set(dueKey(i.package, ns), { at: Date.now() + i.startupSeconds * 1000, config });
}

async function subscriptions(): Promise<void> {
  for (const s of await kube.list<Subscription & { spec?: { config?: Record<string, unknown> } }>("/apis/operators.coreos.com/v1alpha1/subscriptions")) {
    const ns = s.metadata.namespace;
    const id = `Subscription ${ns}/${s.metadata.name}`;
    if (s.status?.installedCSV) continue;
    const pkg = s.spec?.name as string;
    const csv = s.spec?.startingCSV ?? `${pkg}.stand-in`;
    await ensureCrds(pkg);
    const created = await kube.create(`/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions`, csvObject(ns!, csv, pkg));
    if (created.status === 201) log("create", `ClusterServiceVersion ${ns}/${csv}`, "as OLM's InstallPlan does");
    await setCsvPhase(ns!, csv, "Installing", "InstallSucceeded", "waiting for install components to report healthy");
    const i = installOf(pkg);
    if (i) await install(i, ns!, s.spec?.config ?? {});
    const now = new Date().toISOString();
    await kube.mergePatch(`/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/subscriptions/${s.metadata.name}/status`, {
      status: { installedCSV: csv, currentCSV: csv, state: "AtLatestKnown", lastUpdated: now },
    });
    log("set status.installedCSV", id, csv);
  }
}

async function setCsvPhase(ns: string, csv: string, phase: string, reason: string, message: string): Promise<void> {
  const now = new Date().toISOString();
  await kube.mergePatch(`/apis/operators.coreos.com/v1alpha1/namespaces/${ns}/clusterserviceversions/${csv}/status`, {
    status: { phase, reason, message, lastUpdateTime: now, lastTransitionTime: now },
  });
  log(`set status.phase ${phase}`, `ClusterServiceVersion ${ns}/${csv}`, message);
}

/** An install's Deployment, created once due; whether it is available. */
async function deployed(i: OperatorInstall, ns: string): Promise<boolean> {
  const due = installDue.get(dueKey(i.package, ns));
  const dep = await kube.get<KubeObject & { status?: { availableReplicas?: number } }>(`/apis/apps/v1/namespaces/${ns}/deployments/${i.deployment}`);
  if (dep) return (dep.status?.availableReplicas ?? 0) >= 1;
  if (due && Date.now() >= due.at) {
    await kube.create(`/apis/apps/v1/namespaces/${ns}/deployments`, operatorDeployment(i, ns, due.config));
    log(
      "create",
      `Deployment ${ns}/${i.deployment}`,
      `as OLM's install does, ${i.startupSeconds} s after the webhooks (its pods' start-up); the Subscription's spec.config scheduling`,
    );
  }
  return false;
}

/** Each CSV still installing: Succeeded once its Deployment is available (an install's, created when due), the SNR config created then. */
async function csvs(): Promise<void> {
  interface Csv extends KubeObject {
    status?: KubeObject["status"] & { phase?: string };
  }
  for (const c of await kube.list<Csv>("/apis/operators.coreos.com/v1alpha1/clusterserviceversions")) {
    const ns = c.metadata.namespace!;
    if (c.status?.phase !== "Installing") continue;
    const i = OPERATOR_INSTALLS.find((x) => c.metadata.name.startsWith(`${x.package}.`));
    if (i && !(await deployed(i, ns))) continue;
    if (i === SNR_INSTALL) {
      // the SNR operator creates its configuration at start-up (the program only patches it)
      const r = await kube.create(`/apis/self-node-remediation.medik8s.io/v1alpha1/namespaces/${ns}/selfnoderemediationconfigs`, {
        apiVersion: "self-node-remediation.medik8s.io/v1alpha1",
        kind: "SelfNodeRemediationConfig",
        metadata: { name: "self-node-remediation-config", namespace: ns, labels: { "e2e.openkeel.io/stand-in": "true" } },
        spec: {},
      });
      if (r.status === 201) log("create", `SelfNodeRemediationConfig ${ns}/self-node-remediation-config`, "as the SNR operator does at start-up");
    }
    await setCsvPhase(
      ns,
      c.metadata.name,
      "Succeeded",
      "InstallSucceeded",
      i
        ? "install strategy completed with no errors (its Deployment available)"
        : "install strategy completed with no errors (no install strategy stood in for)",
    );
  }
}

async function available(apiPath: string, kind: string): Promise<void> {
  for (const o of await kube.list(apiPath)) {
    const ns = o.metadata.namespace;
    const id = `${kind} ${ns ? `${ns}/` : ""}${o.metadata.name}`;
    if (o.status?.conditions?.some((c) => c.type === "Available" && c.status === "True")) continue;
    const now = new Date().toISOString();
    const cond = (type: string, status: string, reason: string) => ({
      type,
      status,
      reason,
      message: "e2e stand-in controller",
      lastProbeTime: now,
      lastTransitionTime: now,
    });
    const self = ns ? apiPath.replace(/\/([a-z]+)$/, `/namespaces/${ns}/$1/${o.metadata.name}`) : `${apiPath}/${o.metadata.name}`;
    const patch = {
      status: {
        phase: "Deployed",
        conditions: [
          cond("Available", "True", "AllComponentsReady"),
          cond("Progressing", "False", "AllComponentsReady"),
          cond("Degraded", "False", "AllComponentsReady"),
        ],
      },
    };
    const viaStatus = await kube.request("PATCH", `${self}/status`, patch, "application/merge-patch+json");
    if (viaStatus.status === 404) await kube.mergePatch(self, patch);
    else if (viaStatus.status >= 300) throw new Error(`PATCH ${self}/status: ${viaStatus.status} ${viaStatus.text.slice(0, 500)}`);
    const where = viaStatus.status === 404 ? "on the object (its CRD has no status subresource)" : "through the status subresource";
    log("set condition Available=True", id, `as the operator would once its components run; ${where}`);
  }
}

const standIn = (o: { metadata?: { annotations?: Record<string, string> } } | undefined) => o?.metadata?.annotations?.["e2e.openkeel.io/stand-in"];

/**
 * The operators' StatefulSets, once per CR (the CRs' scheduling is set at creation: nothing here
 * updates). A StatefulSet of that name the operator did not build is waited out, not taken for
 * its own: before an upgrade (`--upgrade-from`), the old contract chart rendered the StatefulSets
 * itself, and its release's upgrade deletes them; the operator then builds its own.
 */
async function operatorStatefulSets(apiPath: string, build: (cr: OperatorCr) => Record<string, unknown>): Promise<void> {
  for (const cr of await kube.list<OperatorCr & KubeObject>(apiPath)) {
    const ns = cr.metadata.namespace ?? "default";
    const id = `StatefulSet ${ns}/${cr.metadata.name}`;
    if (done.has(id)) continue;
    const sts = build(cr) as KubeObject;
    const r = await kube.create(`/apis/apps/v1/namespaces/${ns}/statefulsets`, sts);
    if (r.status === 201) log("create", id, `as the operator builds it from ${cr.kind} ${cr.metadata.name}`);
    const live = r.status === 409 ? await kube.get<KubeObject>(`/apis/apps/v1/namespaces/${ns}/statefulsets/${cr.metadata.name}`) : undefined;
    if (r.status === 201 || (live && standIn(live) === standIn(sts))) done.add(id);
    else if (live && !done.has(`waits ${id}`)) {
      done.add(`waits ${id}`);
      log("wait", id, "a StatefulSet of that name the operator did not build exists (an earlier contract chart's): built once it is gone");
    }
  }
}

interface Pool extends KubeObject {
  spec?: { addresses?: string[] };
}

/** The first address of a pool entry (`a.b.c.d/len` or `first-last`). */
const firstAddress = (entry: string) => entry.split(/[/-]/)[0].trim();

async function loadBalancers(): Promise<void> {
  const pool = await kube.get<Pool>("/apis/metallb.io/v1beta1/namespaces/metallb-system/ipaddresspools/openkeel-public");
  const entry = pool?.spec?.addresses?.[0];
  if (!entry) return;
  for (const svc of await kube.list<KubeObject & { spec?: { type?: string }; status?: { loadBalancer?: { ingress?: unknown[] } } }>("/api/v1/services")) {
    if (svc.spec?.type !== "LoadBalancer" || (svc.status?.loadBalancer?.ingress?.length ?? 0) > 0) continue;
    const id = `Service ${svc.metadata.namespace}/${svc.metadata.name}`;
    await kube.mergePatch(`/api/v1/namespaces/${svc.metadata.namespace}/services/${svc.metadata.name}/status`, {
      status: { loadBalancer: { ingress: [{ ip: firstAddress(entry) }] } },
    });
    log("set status.loadBalancer", id, `as MetalLB's controller would, from pool openkeel-public (${entry})`);
  }
}

let stopping = false;
process.on("SIGTERM", () => (stopping = true));
process.on("SIGINT", () => (stopping = true));

(async () => {
  log("start", "stand-in controller", `pid ${process.pid}`);
  while (!stopping) {
    for (const [name, step] of [
      ["subscriptions", subscriptions],
      ["csvs", csvs],
      ["kubevirt", () => available("/apis/kubevirt.io/v1/kubevirts", "KubeVirt")],
      ["cdi", () => available("/apis/cdi.kubevirt.io/v1beta1/cdis", "CDI")],
      ["mariadb", () => operatorStatefulSets("/apis/k8s.mariadb.com/v1alpha1/mariadbs", galeraStatefulSet)],
      ["rabbitmq", () => operatorStatefulSets("/apis/rabbitmq.com/v1beta1/rabbitmqclusters", rabbitmqStatefulSet)],
      ["metallb", loadBalancers],
    ] as [string, () => Promise<void>][]) {
      try {
        await step();
      } catch (e) {
        const msg = (e as Error).message;
        if (!done.has(msg)) log("error", name, msg.slice(0, 300)); // the API server may be restarting
        done.add(msg);
      }
    }
    await new Promise((ok) => setTimeout(ok, 1000));
  }
  log("stop", "stand-in controller");
  kube.close();
})();
