// `openkeel:cluster`: the cluster a stack deploys to. The kube context the Kubernetes provider uses
// (explicitly, never the ambient current context) and what identifies that cluster: the API server
// URL the context must point at and, once known, the UID of its kube-system Namespace (created
// with the cluster, never recreated). The Pulumi program checks them before it registers any unit
// (components/cluster.ts); a mismatch stops it. Offline scripts never contact a cluster.
import { z } from "zod";

/** `https://host[:port][/path]`: what a kubeconfig's `clusters[].cluster.server` holds. */
const API_SERVER = /^https:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?(\/[A-Za-z0-9._~%/-]*)?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const clusterSchema = z.strictObject({
  /** The kubeconfig context `pulumi preview/up` uses for this stack. */
  context: z.string().regex(/^\S+$/, { message: "is not a kube context name (no spaces). Fix: write the name `kubectl config get-contexts` lists" }),
  /** The API server URL the context must point at (`kubectl config view -o jsonpath='{.clusters[*].cluster.server}'`). */
  apiServer: z
    .string()
    .regex(API_SERVER, {
      message:
        "is not an API server URL. Fix: write https://<control-plane endpoint>[:port] as the kubeconfig's cluster.server has it, e.g. https://10.30.0.10:6443",
    })
    .optional(),
  /** The live cluster's kube-system Namespace UID (`kubectl get namespace kube-system -o jsonpath='{.metadata.uid}'`). */
  kubeSystemUID: z
    .string()
    .regex(UUID, {
      message: "is not a Namespace UID (lower-case 8-4-4-4-12 hex). Fix: copy it from kubectl get namespace kube-system -o jsonpath='{.metadata.uid}'",
    })
    .optional(),
});
export type ClusterConfig = z.infer<typeof clusterSchema>;

/** A server URL as compared: without a trailing slash. */
export function normalizeServer(url: string): string {
  return url.replace(/\/+$/, "");
}
