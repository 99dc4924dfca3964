// The Kubernetes of every Talos machine is KUBERNETES_VERSION, as `talosctl gen config
// --kubernetes-version` writes it (nodes/talos-kubernetes.ts): the kubelet image of every group
// patch, the control plane's four images on control-plane groups only, and the version in
// talos/machines.yaml. Talos' own check of those images: test/integration/tools/talos-machinery.test.ts.
import { describe, expect, it } from "vitest";
import { clusterImages, kubeletImage } from "../../nodes/talos-kubernetes";
import { talosNodeConfig } from "../../nodes/talos";
import { resolveStack } from "../../environments";
import { KUBERNETES_VERSION } from "../../platform/versions";
import { PRODUCTION_STACKS, shippedConfig } from "../helpers/stacks";

describe("the images talosctl gen config --kubernetes-version writes (siderolabs/talos@v1.13.9 pkg/machinery/config/generate)", () => {
  it("the kubelet of every machine; the API server, controller manager, kube-proxy and scheduler of the control plane only", () => {
    expect(kubeletImage("1.36.3")).toBe("ghcr.io/siderolabs/kubelet:v1.36.3");
    expect(clusterImages("controlplane", "1.36.3")).toEqual({
      apiServer: { image: "registry.k8s.io/kube-apiserver:v1.36.3" },
      controllerManager: { image: "registry.k8s.io/kube-controller-manager:v1.36.3" },
      proxy: { image: "registry.k8s.io/kube-proxy:v1.36.3" },
      scheduler: { image: "registry.k8s.io/kube-scheduler:v1.36.3" },
    });
    expect(clusterImages("worker", "1.36.3")).toEqual({});
  });
});

it("the production stacks have control-plane and worker groups both (each branch below is seen)", () => {
  const types = PRODUCTION_STACKS.flatMap((stack) => {
    const cfg = shippedConfig(stack);
    const doc = talosNodeConfig(cfg, resolveStack(cfg).topology).files.find((f) => f.path === "talos/machines.yaml")!.documents[0] as {
      machines: Record<string, { machineType: string }>;
    };
    return Object.values(doc.machines).map((m) => m.machineType);
  });
  expect(new Set(types)).toEqual(new Set(["controlplane", "worker"]));
});

describe.each(PRODUCTION_STACKS)("the Kubernetes version of %s's Talos machines", (stack) => {
  const cfg = shippedConfig(stack);
  const files = talosNodeConfig(cfg, resolveStack(cfg).topology).files;
  const machinesFile = files.find((f) => f.path === "talos/machines.yaml")!.documents[0] as {
    kubernetesVersion: string;
    machines: Record<string, { group: string; machineType: string }>;
  };

  it("is KUBERNETES_VERSION in machines.yaml and in the images of every group patch, by machine type", () => {
    expect(machinesFile.kubernetesVersion).toBe(KUBERNETES_VERSION);
    const groups = new Map(Object.values(machinesFile.machines).map((m) => [m.group, m.machineType]));
    expect(groups.size).toBeGreaterThan(0);
    for (const [group, machineType] of groups) {
      const patch = files.find((f) => f.path === `talos/patches/${group}.yaml`)!.documents.find((d) => d.kind === undefined) as any;
      expect(patch.machine.kubelet.image, group).toBe(`ghcr.io/siderolabs/kubelet:v${KUBERNETES_VERSION}`);
      const images = Object.fromEntries(
        ["apiServer", "controllerManager", "proxy", "scheduler"].flatMap((k) => (patch.cluster[k] ? [[k, patch.cluster[k].image]] : [])),
      );
      expect(images, group).toEqual(
        machineType === "controlplane"
          ? {
              apiServer: `registry.k8s.io/kube-apiserver:v${KUBERNETES_VERSION}`,
              controllerManager: `registry.k8s.io/kube-controller-manager:v${KUBERNETES_VERSION}`,
              proxy: `registry.k8s.io/kube-proxy:v${KUBERNETES_VERSION}`,
              scheduler: `registry.k8s.io/kube-scheduler:v${KUBERNETES_VERSION}`,
            }
          : {},
      );
    }
  });

  it("no node's own patch names another image", () => {
    for (const f of files.filter((x) => x.path.startsWith("talos/nodes/")))
      for (const d of f.documents as any[]) expect(d.machine?.kubelet?.image, f.path).toBeUndefined();
  });
});
