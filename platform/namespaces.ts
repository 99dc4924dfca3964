// The namespaces of the platform releases, with their pod-security labels. Helm never creates
// them (deploy.ts), so the labels are there before the first pod. Deleting a namespace deletes
// everything in it, Longhorn's volumes included: protected.
import type { K8sObject, ManifestsUnit } from "../plan/plan";

export const PLATFORM_NAMESPACES_UNIT = "platform-namespaces";

export function platformNamespacesUnit(namespaces: K8sObject[]): ManifestsUnit {
  return {
    kind: "Manifests",
    name: PLATFORM_NAMESPACES_UNIT,
    type: "openkeel:platform:Namespaces",
    protect: true,
    objects: namespaces,
  };
}
