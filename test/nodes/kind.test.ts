// The lab's kind cluster config: pinned node image, kind's node names, own-prefix labels, the
// NodePorts published one entry per port on the loopback, registration taints on workers.
import { isError } from "../../config/problems";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import type { LoadedConfig } from "../../config/schema";
import { KIND_API_VERSION, KIND_CONFIG_PATH, kindClusterConfig, kindNodeConfig, kindNodeNames } from "../../nodes/kind";
import { LAB_NODE_PORTS } from "../../openkeel/endpoints";
import { roleLabelKey } from "../../config/roles";
import { planStack, resolveStack } from "../../environments";
import { KIND_NODE_IMAGE, KIND_VERSION } from "../../platform/versions";
import { mutatedConfig, REPO, shippedConfig } from "../helpers/stacks";

function kindConfig(cfg: LoadedConfig): any {
  // Node-level config does not depend on where pods land: only the errors of other checks matter here
  // (a test stack may taint roles that share nodes, which the placement checks refuse).
  const { plan, problems } = planStack(cfg);
  const errors = problems.filter((c) => isError(c) && !c.code?.startsWith("placement-"));
  expect(errors, JSON.stringify(errors)).toEqual([]);
  const files = plan ? plan.nodeConfig!.files : kindNodeConfig(cfg, resolveStack(cfg).topology).files;
  expect(files.map((f) => f.path)).toEqual([KIND_CONFIG_PATH]);
  return files[0].documents[0];
}

function checkCodes(cfg: LoadedConfig, level: "error" | "warning"): string[] {
  return planStack(cfg)
    .problems.filter((c) => c.level === level)
    .map((c) => c.code!);
}

const lab = shippedConfig("lab");

describe("kind cluster config of the lab", () => {
  const config = kindConfig(lab);

  it("is a kind v1alpha4 Cluster named after the control-plane node, so kind's node names are the inventory's", () => {
    expect(config.apiVersion).toBe(KIND_API_VERSION);
    expect(config.kind).toBe("Cluster");
    expect(config.name).toBe("openkeel-lab");
    expect(kindNodeNames(config.name, lab.nodes)).toEqual(lab.nodes.map((n) => n.name));
    expect(config.nodes.map((n: any) => n.role)).toEqual(lab.nodes.map((n) => (n.kubernetesControlPlane ? "control-plane" : "worker")));
  });

  it("pins every node to kind's node image by digest", () => {
    expect(KIND_VERSION).toMatch(/^v\d+\.\d+\.\d+$/);
    expect(KIND_NODE_IMAGE.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    for (const n of config.nodes) expect(n.image).toBe(`kindest/node:${KIND_NODE_IMAGE.tag}@${KIND_NODE_IMAGE.digest}`);
  });

  it("publishes every NodePort from 30500 to 30998 once, on 127.0.0.1, one entry per port", () => {
    const mappings = config.nodes[0].extraPortMappings;
    const count = LAB_NODE_PORTS.last - LAB_NODE_PORTS.first + 1;
    expect(count).toBe(499);
    expect(mappings).toHaveLength(count);
    const ports = mappings.map((m: any) => m.hostPort);
    expect(new Set(ports).size).toBe(count);
    expect(Math.min(...ports)).toBe(30500);
    expect(Math.max(...ports)).toBe(30998);
    for (const m of mappings) {
      expect(m).toEqual({ containerPort: m.hostPort, hostPort: m.hostPort, listenAddress: "127.0.0.1", protocol: "TCP" });
    }
  });

  it("labels the node with its role labels under the own prefix, never node-role.kubernetes.io or node-restriction.kubernetes.io", () => {
    const labels = config.nodes[0].labels;
    expect(Object.keys(labels).sort()).toEqual(lab.nodes[0].roles.map((r) => roleLabelKey(r, "default")).sort());
    for (const k of Object.keys(labels)) expect(k.startsWith("node-role.openkeel.io/")).toBe(true);
  });

  it("is committed as rendered/lab/kind/cluster.yaml and parses back to the same document", () => {
    const text = fs.readFileSync(path.join(REPO, "rendered/lab", KIND_CONFIG_PATH), "utf8");
    const docs = parseAllDocuments(text).map((d) => d.toJS());
    expect(docs).toEqual([config]);
    expect(text).toMatch(/kind create cluster --config rendered\/lab\/kind\/cluster\.yaml/);
  });
});

describe("kind cluster config of other labs", () => {
  const withWorkers = (mutate: (r: any) => void = () => {}) =>
    mutatedConfig("lab", (r) => {
      r.nodes.push({ name: "openkeel-lab-worker", roles: ["compute"], zone: "a" });
      r.nodes.push({ name: "openkeel-lab-worker2", roles: ["storage"], labels: { "node-role.kubernetes.io/worker": "", "openkeel.io/disk": "ssd" } });
      r.nodes[0].zone = "a";
      r.nodes[2].zone = "a";
      mutate(r);
    });

  it("publishes the NodePorts from the control-plane node only (a host port can be published once)", () => {
    const config = kindConfig(withWorkers());
    expect(config.nodes.map((n: any) => (n.extraPortMappings ?? []).length)).toEqual([499, 0, 0]);
  });

  it("labels workers with what a kubelet may set: roles, zone, own labels; not node-role.kubernetes.io/*", () => {
    const config = kindConfig(withWorkers());
    expect(config.nodes[1].labels).toEqual({ "node-role.openkeel.io/compute": "", "topology.kubernetes.io/zone": "a" });
    expect(config.nodes[2].labels).toEqual({ "node-role.openkeel.io/storage": "", "openkeel.io/disk": "ssd", "topology.kubernetes.io/zone": "a" });
  });

  it("with the hardened profile, role labels are left to the node-roles phase", () => {
    const config = kindConfig(mutatedConfig("lab", (r) => (r.labelProfile = "hardened")));
    expect(config.nodes[0].labels).toBeUndefined();
  });

  it("registers tainted workers with their role taints (JoinConfiguration), and warns about the control plane", () => {
    const cfg = withWorkers((r) => (r.taints = ["compute", "controlPlane"]));
    const config = kindConfig(cfg);
    const patches = config.nodes[1].kubeadmConfigPatches;
    expect(patches).toHaveLength(1);
    expect(parseAllDocuments(patches[0]).map((d) => d.toJS())).toEqual([
      { kind: "JoinConfiguration", nodeRegistration: { taints: [{ key: "node-role.openkeel.io/compute", effect: "NoSchedule" }] } },
    ]);
    expect(config.nodes[2].kubeadmConfigPatches).toBeUndefined();
    expect(config.nodes[0].kubeadmConfigPatches).toBeUndefined();
    const warning = planStack(cfg).problems.find((c) => c.code === "kind-control-plane-taints")!;
    expect(warning.level).toBe("warning");
    expect(warning.fix).toMatch(
      /kubectl taint nodes openkeel-lab-control-plane node-role\.kubernetes\.io\/control-plane:NoSchedule- node-role\.openkeel\.io\/control-plane=:NoSchedule/,
    );
  });

  it("the single-node lab needs no taint fix-up; a control-plane node with roles among workers does", () => {
    expect(checkCodes(lab, "warning")).toEqual([]);
    expect(checkCodes(withWorkers(), "warning")).toEqual(["kind-control-plane-taints"]);
  });

  it("a node named otherwise than kind will name it stops the plan", () => {
    const cfg = withWorkers((r) => (r.nodes[2].name = "lab-storage"));
    const err = planStack(cfg).problems.find((c) => c.code === "kind-node-name")!;
    expect(err.level).toBe("error");
    expect(err.path).toBe("openkeel:nodes[2].name");
    expect(err.message).toMatch(/'lab-storage' will be named 'openkeel-lab-worker2'/);
    expect(planStack(cfg).plan).toBeUndefined();
  });

  it("a first control-plane node not named <cluster>-control-plane stops the plan", () => {
    const cfg = mutatedConfig("lab", (r) => (r.nodes[0].name = "lab-1"));
    expect(checkCodes(cfg, "error")).toEqual(["kind-node-name"]);
  });

  it("the builder itself refuses an inventory kind cannot name (the check runs first)", () => {
    const cfg = mutatedConfig("lab", (r) => (r.nodes[0].name = "lab-1"));
    expect(() => kindClusterConfig(cfg, resolveStack(cfg).topology)).toThrow(/no kind cluster name/);
  });

  it("a lab without a Kubernetes control-plane node stops the plan", () => {
    const cfg = mutatedConfig("lab", (r) => (r.nodes[0].kubernetesControlPlane = false));
    expect(checkCodes(cfg, "error")).toEqual(["kind-control-plane"]);
  });
});
