// The stack bound to another cluster (openkeel:cluster of each render's index), a warning of a
// change (review/preview.ts lists it among its findings).
import type { Check } from "../config/problems";
import type { RenderedStack } from "../render/rendered";

/**
 * The stack bound to another cluster: the context, the API server or a pinned kube-system UID
 * changes (pinning a UID for the first time is no move). Worth a reviewer's second look.
 */
export function bindingFindings(base: RenderedStack, head: RenderedStack): Check[] {
  const b: Record<string, string | undefined> = base.index.cluster ?? {};
  const h: Record<string, string | undefined> = head.index.cluster ?? {};
  const moved = ["context", "apiServer", "kubeSystemUID"].filter((k) => b[k] !== undefined && b[k] !== h[k]);
  if (moved.length === 0) return [];
  return [
    {
      level: "warning",
      code: "cluster-binding",
      message: `the stack is bound to another cluster: ${moved.map((k) => `openkeel:cluster.${k} ${String(b[k])} → ${h[k] === undefined ? "(unset)" : String(h[k])}`).join(", ")}`,
      reason: "pulumi up of the merge will talk to that cluster, with this stack's state",
      fix: "make sure the new binding is the cluster this stack's state describes (a rebuilt cluster: pulumi refresh after the merge)",
    },
  ];
}
