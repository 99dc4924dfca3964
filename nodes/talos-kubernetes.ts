// The Kubernetes a Talos machine runs, pinned (KUBERNETES_VERSION) rather than left to whichever
// talosctl generates the config: the images `talosctl gen config --kubernetes-version <version>`
// writes, as the group patches of nodes/talos.ts carry them. Read at siderolabs/talos@v1.13.9:
// pkg/machinery/config/generate/init.go:28 (machine.kubelet.image, every machine type; worker.go:32
// the same), :149-160 (cluster.apiServer, controllerManager, proxy and scheduler images: the control
// plane only; a worker's cluster section has none, worker.go:96-110), each `<image>:v<version>` of
// pkg/machinery/constants/constants.go:374-387.
import { KUBERNETES_VERSION } from "../platform/versions";
import type { TalosMachine } from "../render/rendered";

const KUBELET_IMAGE = "ghcr.io/siderolabs/kubelet";
const CONTROL_PLANE_IMAGES = {
  apiServer: "registry.k8s.io/kube-apiserver",
  controllerManager: "registry.k8s.io/kube-controller-manager",
  proxy: "registry.k8s.io/kube-proxy",
  scheduler: "registry.k8s.io/kube-scheduler",
} as const;

/** `machine.kubelet.image` of every machine. */
export function kubeletImage(version = KUBERNETES_VERSION): string {
  return `${KUBELET_IMAGE}:v${version}`;
}

/** The `cluster` keys of a machine type's images: the control plane's four, none for a worker. */
export function clusterImages(machineType: TalosMachine["machineType"], version = KUBERNETES_VERSION): Record<string, { image: string }> {
  if (machineType !== "controlplane") return {};
  return Object.fromEntries(Object.entries(CONTROL_PLANE_IMAGES).map(([key, image]) => [key, { image: `${image}:v${version}` }]));
}
