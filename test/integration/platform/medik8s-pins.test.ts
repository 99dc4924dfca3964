// Issue 14, item 7: the Medik8s pins hold. The Subscriptions ask for the pinned startingCSV with
// Manual approval, and the approver Job approves the InstallPlans made only of pinned versions: its
// script is run here against a stand-in kubectl that plays OLM (plans, approvals, installs). And the
// SNR agent's own tolerations in the placement model are upstream's DaemonSet's.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { APPROVER_SCRIPT, SNR_AGENT_UPSTREAM } from "../../../platform/medik8s";
import { MEDIK8S_NHC, MEDIK8S_NMO, MEDIK8S_SNR } from "../../../platform/versions";
import { findUnit, phase, type ManifestsUnit } from "../../../plan/plan";
import { object, planOf } from "../../helpers/plans";
import { REPO } from "../../helpers/stacks";

const PINNED = [MEDIK8S_SNR, MEDIK8S_NHC, MEDIK8S_NMO].map((p) => p.startingCSV);

describe("the Medik8s Subscriptions and their approver", () => {
  const plan = planOf("prod-medium");

  it("every Subscription asks for its pinned CSV with Manual approval", () => {
    for (const pin of [MEDIK8S_SNR, MEDIK8S_NHC, MEDIK8S_NMO]) {
      const sub = object(plan, "Subscription", pin.package, "medik8s-operators");
      expect(sub.spec).toMatchObject({ name: pin.package, startingCSV: pin.startingCSV, installPlanApproval: "Manual" });
    }
  });

  it("the approver runs beside the Subscriptions (neither waits for the other), with the pinned CSVs and its script", () => {
    const units = phase(plan, "crds-operators").units;
    const approver = findUnit(plan, "medik8s-install-plan-approver") as ManifestsUnit;
    const operators = findUnit(plan, "medik8s-operators")!;
    expect(units.indexOf(approver)).toBeGreaterThan(-1);
    expect(operators.dependsOn).not.toContain(approver.name);
    expect(approver.dependsOn).not.toContain(operators.name);
    const job = approver.objects.find((o) => o.kind === "Job") as any;
    const env = Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: any) => [e.name, e.value]));
    expect(env).toMatchObject({ NAMESPACE: "medik8s", PINNED_CSVS: PINNED.join(" ") });
    expect((approver.objects.find((o) => o.kind === "ConfigMap") as any).data["approve.sh"]).toBe(APPROVER_SCRIPT);
    const role = approver.objects.find((o) => o.kind === "Role") as any;
    expect(role.rules.flatMap((r: any) => r.resources)).toEqual(["installplans", "subscriptions"]);
  });
});

/** A kubectl that answers from a JSON state file and plays OLM: an approved plan installs its CSVs. */
const FAKE_KUBECTL = `#!/usr/bin/env node
const fs = require("node:fs");
const file = process.env.FAKE_STATE;
const state = JSON.parse(fs.readFileSync(file, "utf8"));
const argv = process.argv.slice(2);
state.calls.push(argv.join(" "));
if (argv[0] === "get" && argv[1] === "installplans") {
  for (const p of state.plans) if (!p.approved) process.stdout.write(p.name + " " + p.csvs.join(" ") + "\\n");
} else if (argv[0] === "get" && argv[1] === "subscriptions") {
  process.stdout.write(state.installed.join(" "));
} else if (argv[0] === "patch" && argv[1] === "installplan") {
  const p = state.plans.find((x) => x.name === argv[2]);
  p.approved = true;
  for (const csv of p.csvs) {
    const pkg = csv.replace(/\\.v\\d.*$/, "");
    state.installed = state.installed.filter((c) => c.replace(/\\.v\\d.*$/, "") !== pkg).concat(csv);
  }
} else {
  process.stderr.write("unexpected kubectl " + argv.join(" ") + "\\n");
  process.exit(2);
}
fs.writeFileSync(file, JSON.stringify(state));
`;

interface Plan {
  name: string;
  csvs: string[];
  approved?: boolean;
}

function approve(plans: Plan[], installed: string[] = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openkeel-approver-"));
  const kubectl = path.join(dir, "kubectl");
  fs.writeFileSync(kubectl, FAKE_KUBECTL, { mode: 0o755 });
  const script = path.join(dir, "approve.sh");
  fs.writeFileSync(script, APPROVER_SCRIPT);
  const stateFile = path.join(dir, "state.json");
  fs.writeFileSync(stateFile, JSON.stringify({ plans, installed, calls: [] }));
  const r = spawnSync("bash", [script], {
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${dir}:${process.env.PATH}`,
      FAKE_STATE: stateFile,
      NAMESPACE: "medik8s",
      PINNED_CSVS: PINNED.join(" "),
      POLLS: "3",
      POLL_SECONDS: "0",
    },
  });
  const state = JSON.parse(fs.readFileSync(stateFile, "utf8"));
  return {
    code: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    approved: (state.plans as Plan[]).filter((p) => p.approved).map((p) => p.name),
    installed: state.installed as string[],
    calls: state.calls as string[],
  };
}

describe("the approver's script, against a stand-in OLM", () => {
  it("approves the plan of the three pinned versions, and ends once they are installed", () => {
    const r = approve([{ name: "install-aaaaa", csvs: [...PINNED] }]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.approved).toEqual(["install-aaaaa"]);
    expect(r.installed.sort()).toEqual([...PINNED].sort());
    expect(r.calls).toContain('patch installplan install-aaaaa -n medik8s --type merge -p {"spec":{"approved":true}}');
  });

  it("plans made one by one are approved one by one", () => {
    const r = approve(PINNED.map((csv, i) => ({ name: `install-${i}`, csvs: [csv] })));
    expect(r.code, r.stderr).toBe(0);
    expect(r.approved).toEqual(["install-0", "install-1", "install-2"]);
  });

  it("never approves an upgrade past a pin, alone or bundled with a pinned version", () => {
    const past = MEDIK8S_NHC.startingCSV.replace(/v\d+\.\d+\.\d+$/, "v9.9.9");
    const r = approve([
      { name: "install-upgrade", csvs: [past] },
      { name: "install-mixed", csvs: [MEDIK8S_SNR.startingCSV, past] },
    ]);
    expect(r.approved).toEqual([]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`left unapproved: InstallPlan install-mixed (${MEDIK8S_SNR.startingCSV} ${past}) is not only pinned versions`);
    expect(r.stderr).toContain("not installed after 3 polls:");
  });

  it("once the pins are installed, a pending upgrade stays pending and the Job ends", () => {
    const past = MEDIK8S_NMO.startingCSV.replace(/v\d+\.\d+\.\d+$/, "v9.9.9");
    const r = approve([{ name: "install-upgrade", csvs: [past] }], [...PINNED]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.approved).toEqual([]);
    expect(r.installed).toEqual(PINNED);
  });
});

describe("the SNR agent in the placement model", () => {
  it("has the tolerations and affinity of upstream's DaemonSet template, before customDsTolerations", () => {
    const text = fs.readFileSync(path.join(REPO, "test/fixtures/upstream/self-node-remediation-deamonset.v0.13.0.yaml"), "utf8");
    // the operator's Go template placeholders are not YAML: any scalar stands in for them here
    const ds = parse(text.replace(/\{\{\.\w+\}\}/g, "x"));
    expect(SNR_AGENT_UPSTREAM.tolerations).toEqual(ds.spec.template.spec.tolerations);
    expect(SNR_AGENT_UPSTREAM.affinity).toEqual(ds.spec.template.spec.affinity);
  });
});
