// README step 11f (issue 45 item 4): a change that reshapes a NodeHealthCheck while the check
// remediates a node, on the real API server, and what the operator sees. NHC's webhook (its CSV's
// vnodehealthcheck.kb.io, failurePolicy Fail, which the OLM stand-in installs and the live webhooks
// point at the admission stand-in) decides here as upstream does (./nhc-webhook.ts). NHC's
// controller does not run: the
// remediation in flight is the status it writes (patchStatus, internal/controller/
// nodehealthcheck_controller.go 735-751; api/v1alpha1/nodehealthcheck_types.go 305-356), through
// the status subresource, and its end the status it writes once the node is healthy and the
// remediation gone (276-291: the node counted healthy again, out of unhealthyNodes).
import * as fs from "node:fs";
import * as path from "node:path";
import { IN_FLIGHT_JSONPATH, IN_FLIGHT_QUERY } from "../../platform/medik8s-webhook";
import { isQuorumGroup, nhcGroupOf } from "../../platform/medik8s-groups";
import { NHC_WEBHOOK } from "../standins/olm";
import { nhcStep, up } from "./day2-transitions";
import type { KubeObject } from "./kube";
import { run } from "./proc";
import { mutateStackConfig, stackFile } from "./project";
import { pulumi } from "./pulumi";
import { readPlacement, type RenderedStack } from "./rendered";
import { errorLines, recordRun, render, type StackRun } from "./stack-run";
import { labelSelectorQuery, type LabelSelector } from "./transitions-judge";

type Json = Record<string, unknown>;

const NHC_PATH = "/apis/remediation.medik8s.io/v1alpha1/nodehealthchecks";
const UP_TIMEOUT_MS = 20 * 60_000;

/** The change: a check of a role without a quorum, of three nodes or more, in a stack without zones; its first two nodes in one zone. */
interface Plan {
  check: string;
  zoneA: string[];
  /** the node whose remediation is in flight: one the check keeps */
  remediated: string;
}

export function planOf(rendered: RenderedStack): Plan | undefined {
  const p = readPlacement(rendered);
  if (p.nodes.some((n) => n.zone !== undefined)) return undefined;
  for (const c of p.components.filter((x) => x.kind === "NodeHealthCheck")) {
    const nodes = p.nodes.filter((n) => c.eligible.includes(n.name));
    const group = nodes[0] && nhcGroupOf(nodes[0]);
    if (nodes.length < 3 || group === undefined || isQuorumGroup(group)) continue;
    return { check: c.name.split("/").slice(-2)[0], zoneA: nodes.slice(0, 2).map((n) => n.name), remediated: nodes[2].name };
  }
  return undefined;
}

/**
 * The zone of each node: the check's first two in zone-a, the remediated node in zone-b (so the
 * check keeps it and its selector changes: a check left without nodes is deleted instead, which
 * the webhook refuses with another message), the others alternately zone-b and zone-a (every node
 * has a zone: zone-missing).
 */
export function zoneOf(plan: Plan, nodes: readonly string[]): Map<string, string> {
  let i = 0;
  const zone = (n: string) => (plan.zoneA.includes(n) ? "zone-a" : n === plan.remediated ? "zone-b" : i++ % 2 === 0 ? "zone-b" : "zone-a");
  return new Map(nodes.map((n) => [n, zone(n)]));
}

function addZones(r: StackRun, plan: Plan): void {
  mutateStackConfig(stackFile(r.project, r.stack), "nodes", (nodes) => {
    const zones = zoneOf(
      plan,
      (nodes as Json[]).map((n) => n.name as string),
    );
    return (nodes as Json[]).map((n) => ({ ...n, zone: zones.get(n.name as string) }));
  });
}

/** The runbook's step 1 (docs/node-lifecycle.md, changing the health checks): each check and its remediations in flight. */
async function inFlight(r: StackRun, logName: string): Promise<Map<string, string>> {
  const res = await run("kubectl", ["get", "nodehealthchecks", "-o", `jsonpath=${IN_FLIGHT_JSONPATH}`, "--kubeconfig", r.kubeconfig], { log: r.log(logName) });
  if (res.code !== 0) throw new Error(`kubectl get nodehealthchecks exited ${res.code}: ${res.stderr.slice(-300)}`);
  return new Map(
    res.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => [l.split("\t")[0], l.split("\t")[1] ?? ""]),
  );
}

/** The status NHC writes while it remediates `node` with our SNR template (patchStatus 735-751), or once it is over (null: the fields go). */
function remediationStatus(node: string | undefined): Json {
  if (!node) return { status: { unhealthyNodes: null, phase: "Enabled", reason: "NHC is enabled, no ongoing remediation" } };
  const resource = { apiVersion: "self-node-remediation.medik8s.io/v1alpha1", kind: "SelfNodeRemediation", namespace: "medik8s", name: node };
  return {
    status: {
      unhealthyNodes: [{ name: node, remediations: [{ resource, started: new Date().toISOString() }] }],
      phase: "Remediating",
      reason: "NHC is remediating 1 nodes",
    },
  };
}

async function setRemediation(r: StackRun, check: string, node: string | undefined): Promise<void> {
  const res = await r.kube!.request("PATCH", `${NHC_PATH}/${check}/status`, remediationStatus(node), "application/merge-patch+json");
  if (res.status >= 300) throw new Error(`PATCH NodeHealthCheck ${check} status: ${res.status} ${res.text.slice(0, 300)}`);
}

/** Each live check and the nodes the API server selects for it. */
async function liveSelections(r: StackRun): Promise<string[]> {
  const out: string[] = [];
  for (const nhc of await r.kube!.list<KubeObject & { spec?: { selector?: LabelSelector } }>(NHC_PATH)) {
    const q = labelSelectorQuery(nhc.spec?.selector ?? {});
    const nodes = (await r.kube!.list(`/api/v1/nodes?labelSelector=${encodeURIComponent(q)}`)).map((n) => n.metadata.name);
    out.push(`${nhc.metadata.name}: ${nodes.join(", ") || "no node"}`);
  }
  return out;
}

const selectorOf = async (r: StackRun, check: string) =>
  JSON.stringify((await r.kube!.get<{ spec?: { selector?: unknown } }>(`${NHC_PATH}/${check}`))?.spec?.selector);

/** 11f: a remediation in flight; the change's render, its refused `pulumi up`, the runbook, `pulumi up` again. Returns the render the cluster holds afterwards. */
export async function heldCheckChange(r: StackRun, deployed: RenderedStack): Promise<RenderedStack> {
  const earlier = r.report.steps.some((x) => !x.ok && x.name.startsWith("day 2"));
  const plan = r.o.transitions && !r.o.kubeconfig && !earlier && deployed.index.environment === "talos-production" ? planOf(deployed) : undefined;
  if (!plan) {
    r.report.steps.push({
      name: "day 2: a NodeHealthCheck reshaped while it remediates",
      seconds: 0,
      ok: true,
      skipped: true,
      detail: [
        earlier
          ? "an earlier day-2 step failed: the cluster is not in the state this step starts from"
          : "production stacks without zones on the e2e's own cluster, with day-2 transitions, and a check of three nodes of a role without a quorum",
      ],
    });
    return deployed;
  }
  const { check, remediated } = plan;
  let rendered: RenderedStack | undefined;
  const before = await selectorOf(r, check);
  const held = await r.step(`day 2: ${check} remediates ${remediated}; zones under ${plan.zoneA.join(", ")}: render, pulumi up refused`, async (s) => {
    await setRemediation(r, check, remediated);
    s.detail.push(`NHC stand-in: status.unhealthyNodes of ${check}: ${remediated}, its SelfNodeRemediation in flight (phase Remediating)`);
    addZones(r, plan);
    // the render on disk is what the verdict judges the change against (outside git): what is deployed
    const out = path.join(r.work, "rendered-held-change");
    fs.cpSync(path.dirname(deployed.dir), out, { recursive: true });
    rendered = await render(r, path.dirname(stackFile(r.project, r.stack)), out, "render-held-change");
    const said = r
      .logText("render-held-change")
      .split("\n")
      .filter((l) => l.includes("[nhc-held-change]"));
    r.report.check(
      `the render's verdict warns that ${check} is held while it remediates (nhc-held-change)`,
      said.some((l) => l.includes(`${check} (selector)`)),
      said,
    );
    const res = await pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy"], r.project, r.p!, r.log("up-held-change"), {
      timeoutMs: UP_TIMEOUT_MS,
    });
    recordRun(s, res, false);
    const seen = errorLines(res.stdout + res.stderr).filter((l) => l.includes(NHC_WEBHOOK));
    r.report.check(
      `pulumi up is refused by NHC's webhook while ${check} remediates: "admission webhook "${NHC_WEBHOOK}" denied the request: selector update prohibited due to running remediation"`,
      res.code !== 0 &&
        seen.some((l) => l.includes(`admission webhook "${NHC_WEBHOOK}" denied the request: selector update prohibited due to running remediation`)),
      [`exit ${res.code}; what the operator sees:`, ...seen],
    );
    const kept = (await selectorOf(r, check)) === before;
    r.report.check(`${check} keeps the selector it had (the update refused)`, kept, [before]);
    s.detail.push("halfway, what each NodeHealthCheck selects now (the API server's query):", ...(await liveSelections(r)));
  });
  if (!held.ok || !rendered) return rendered ?? deployed;
  await r.step(`day 2: the runbook's query names the remediation; once it is over, pulumi up again`, async (s) => {
    const during = await inFlight(r, "in-flight-during");
    r.report.check(`the runbook's query (${IN_FLIGHT_QUERY}) names ${remediated} on ${check}'s line`, during.get(check) === remediated, [
      ...[...during].map(([c, x]) => `${c}\t${x}`),
    ]);
    await setRemediation(r, check, undefined);
    s.detail.push(`NHC stand-in: ${remediated} healthy again, its remediation gone (status.unhealthyNodes emptied, phase Enabled)`);
    const after = await inFlight(r, "in-flight-after");
    r.report.check(`the runbook's query then names no remediation on ${check}'s line`, after.has(check) && after.get(check) === "", [
      ...[...after].map(([c, x]) => `${c}\t${x}`),
    ]);
    await up(r, s, "up-held-change-again");
  });
  await nhcStep(r, rendered, "after the held change went through");
  return rendered;
}
