// Kubernetes' label keys, and strict zod schemas of the scheduling structures a placement may carry
// raw (§ 5.1: nodeSelector, tolerations, affinity, topologySpreadConstraints). Field lists follow the
// Kubernetes API of KUBERNETES_VERSION (the strict JSON schemas kubeconform judges by): a field at
// the wrong level, such as nodeSelectorTerms directly under nodeAffinity, is exactly what a chart
// silently drops.
import { z } from "zod";

/** A DNS subdomain (RFC 1123): node names and label key prefixes. */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;

export function isLabelKey(key: string): boolean {
  const parts = key.split("/");
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1];
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name)) return false;
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) return false;
  }
  return true;
}

export const labelKey = z.string().refine(isLabelKey, {
  message: "is not a valid label key ([prefix/]name). Fix: correct the key",
});

const effect = z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]);

export const tolerationSchema = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(["Exists", "Equal"]).optional(),
  value: z.string().optional(),
  effect: effect.optional(),
  tolerationSeconds: z.number().int().optional(),
});

const selectorOperator = z.enum(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]);

const nodeSelectorRequirement = z.strictObject({
  key: z.string(),
  operator: selectorOperator,
  values: z.array(z.string()).optional(),
});

const nodeSelectorTerm = z.strictObject({
  matchExpressions: z.array(nodeSelectorRequirement).optional(),
  matchFields: z.array(nodeSelectorRequirement).optional(),
});

const labelSelectorSchema = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z
    .array(z.strictObject({ key: z.string(), operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]), values: z.array(z.string()).optional() }))
    .optional(),
});

const podAffinityTerm = z.strictObject({
  labelSelector: labelSelectorSchema.optional(),
  matchLabelKeys: z.array(z.string()).optional(),
  mismatchLabelKeys: z.array(z.string()).optional(),
  namespaceSelector: labelSelectorSchema.optional(),
  namespaces: z.array(z.string()).optional(),
  topologyKey: z.string(),
});

const weight = z.number().int().min(1).max(100);

const podAffinity = z.strictObject({
  requiredDuringSchedulingIgnoredDuringExecution: z.array(podAffinityTerm).optional(),
  preferredDuringSchedulingIgnoredDuringExecution: z.array(z.strictObject({ weight, podAffinityTerm })).optional(),
});

export const affinitySchema = z.strictObject({
  nodeAffinity: z
    .strictObject({
      requiredDuringSchedulingIgnoredDuringExecution: z.strictObject({ nodeSelectorTerms: z.array(nodeSelectorTerm).min(1) }).optional(),
      preferredDuringSchedulingIgnoredDuringExecution: z.array(z.strictObject({ weight, preference: nodeSelectorTerm })).optional(),
    })
    .optional(),
  podAffinity: podAffinity.optional(),
  podAntiAffinity: podAffinity.optional(),
});

export const topologySpreadConstraintSchema = z.strictObject({
  maxSkew: z.number().int().min(1),
  topologyKey: z.string(),
  whenUnsatisfiable: z.enum(["DoNotSchedule", "ScheduleAnyway"]),
  labelSelector: labelSelectorSchema.optional(),
  matchLabelKeys: z.array(z.string()).optional(),
  minDomains: z.number().int().min(1).optional(),
  nodeAffinityPolicy: z.enum(["Honor", "Ignore"]).optional(),
  nodeTaintsPolicy: z.enum(["Honor", "Ignore"]).optional(),
});

/** A label selector map: valid keys, any (valid) value. */
export const nodeSelectorSchema = z.record(labelKey, z.string());
