// The public ingress VIP (D8) where an installed component gives a LoadBalancer Service its address
// (StackContext loadBalancer: MetalLB with a pool, platform/metallb.ts). The infrastructure chart
// runs the ingress as a host-network DaemonSet on the controlPlane and network nodes and reads no
// Service key (§ 5.2: `ingress.placement` only), so this repository writes the LoadBalancer Service
// itself and selects the ingress pods by the labels every OpenKeel chart gives its workloads
// (`app.kubernetes.io/instance` the release, `app.kubernetes.io/component` the component key): our
// contract for the chart (docs/openkeel-values.md). `externalTrafficPolicy: Local` keeps the
// client's address and makes only nodes with a ready ingress pod announce the VIP.
import { type K8sObject, manifestsUnit, type ManifestsUnit } from "../plan/plan";
import type { StackContext } from "../platform/context";
import { INFRASTRUCTURE_UNIT } from "./infrastructure";
import { OPENKEEL_NAMESPACE } from "./names";

export const INGRESS_SERVICE_UNIT = "openkeel-ingress-vip";
export const INGRESS_SERVICE = "openkeel-ingress";

/** The ingress Service of type LoadBalancer; none where no installed component gives it an address (no MetalLB pool). */
export function ingressServiceUnits(ctx: StackContext): ManifestsUnit[] {
  if (!ctx.loadBalancer) return [];
  const service: K8sObject = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: INGRESS_SERVICE, namespace: OPENKEEL_NAMESPACE },
    spec: {
      type: "LoadBalancer",
      externalTrafficPolicy: "Local",
      selector: { "app.kubernetes.io/instance": INFRASTRUCTURE_UNIT, "app.kubernetes.io/component": "ingress" },
      ports: [{ name: "https", port: 443, targetPort: 443, protocol: "TCP" }],
    },
  };
  // Pulumi waits for its endpoints and its address: it uses the release whose pods it selects, and MetalLB's pool (plan/needs.ts)
  return [manifestsUnit(INGRESS_SERVICE_UNIT, "openkeel:openkeel:IngressVip", [service])];
}
