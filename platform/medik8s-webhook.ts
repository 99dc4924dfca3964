// What NHC's admission webhook refuses while a NodeHealthCheck remediates a node (issue 45 item 4),
// and what a change that would meet it says: node-healthcheck-operator v0.12.0
// internal/webhook/v1alpha1/nodehealthcheck_webhook.go (the vnodehealthcheck.kb.io webhook of its
// CSV, failurePolicy Fail, CREATE UPDATE DELETE: bundle/manifests/
// node-healthcheck-operator.clusterserviceversion.yaml 664-685). ValidateUpdate (76-93) refuses a
// change of the selector, the remediation template or the escalating remediations
// (isRestrictedFieldUpdated, 211-223: "modifying these fields can cause dangling remediations"), and
// ValidateDelete (95-103) the deletion, while the check remediates: some node of
// status.unhealthyNodes has a remediation (isRemediating, 225-232; OngoingRemediationError, 41). A
// `pulumi up` that meets it stops there, with the rest of its deploy applied. The preview and the
// verdict say so (review/operator-findings.ts), with the runbook step (docs/node-lifecycle.md, changing the
// health checks); the e2e's admission stand-in decides as the webhook does (nhcAdmission).
import type { Check } from "../config/problems";
import { diff, type Change } from "../render/diff";
import type { CustomKinds, HeldChange } from "./context";
import { NHC_KIND } from "./medik8s-placement";

export const NHC_API_GROUP = "remediation.medik8s.io";
const WEBHOOK = "node-healthcheck-operator v0.12.0 internal/webhook/v1alpha1/nodehealthcheck_webhook.go";
/** OngoingRemediationError (41). */
const ONGOING = "prohibited due to running remediation";

/** The spec fields the webhook holds while the check remediates, with the name its message gives each (211-223). */
export const NHC_HELD_FIELDS: readonly (readonly [field: string, says: string])[] = [
  ["selector", "selector"],
  ["remediationTemplate", "remediation template"],
  ["escalatingRemediations", "escalating remediations"],
];

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

/** The held fields the changes of a check touch (render/diff.ts's, of the whole object), as the webhook's message names them. */
export function heldFields(changes: readonly Pick<Change, "path">[]): string[] {
  const touches = (field: string) => changes.some((c) => c.path.length === 0 || (c.path[0] === "spec" && (c.path.length === 1 || c.path[1] === field)));
  return NHC_HELD_FIELDS.filter(([f]) => touches(f)).map(([, says]) => says);
}

/** Whether a check remediates a node, by its status (isRemediating, 225-232). */
export function nhcRemediating(o: unknown): boolean {
  const status = isObj(o) && isObj(o.status) ? o.status : {};
  const nodes = Array.isArray(status.unhealthyNodes) ? status.unhealthyNodes : [];
  return nodes.some((n) => isObj(n) && Array.isArray(n.remediations) && n.remediations.length > 0);
}

/**
 * The webhook's answer to a request on a check beyond its validation of the object (105-118, which
 * our checks pass): the message it refuses with, or undefined. `old`: the object as stored (the
 * `oldObject` of an UPDATE or a DELETE); `object`: the new one of an UPDATE. ValidateUpdate judges
 * the new object's status, which an update of the main resource carries over from the stored one.
 */
export function nhcAdmission(operation: string, old: unknown, object: unknown): string | undefined {
  if (operation === "DELETE") return nhcRemediating(old) ? `deletion ${ONGOING}` : undefined;
  if (operation !== "UPDATE" || !nhcRemediating(object)) return undefined;
  // reflect.DeepEqual of each field (216-222): render/diff.ts tells a reordered list apart too
  const [field] = heldFields(diff(old, object));
  return field === undefined ? undefined : `${field} update ${ONGOING}`;
}

/** The runbook step's query: every check, a tab, the remediations it has in flight (none: nothing after the tab). */
export const IN_FLIGHT_JSONPATH = `{range .items[*]}{.metadata.name}{"\\t"}{.status.unhealthyNodes[*].remediations[*].resource.name}{"\\n"}{end}`;
export const IN_FLIGHT_QUERY = `kubectl get nodehealthchecks -o jsonpath='${IN_FLIGHT_JSONPATH}'`;

/**
 * The finding of a change that deletes checks or changes what they hold (one warning for all of
 * them): `pulumi up` stops on the first one that remediates when it runs.
 */
export function heldChangeFinding(changes: readonly HeldChange[]): Check[] {
  if (changes.length === 0) return [];
  const said = changes.map((c) => `${c.name} ${c.change === "deleted" ? "is deleted" : `(${c.change.join(", ")})`}`);
  return [
    {
      level: "warning",
      code: "nhc-held-change",
      message: `NodeHealthCheck ${said.join("; ")}: NHC's webhook refuses that while the check remediates a node ("deletion ${ONGOING}", "selector update ${ONGOING}": ${WEBHOOK} 76-103, 211-232), and \`pulumi up\` would stop there, the rest of the deploy applied (a new check beside the old one may then select the same nodes)`,
      reason: "a remediation in flight holds its check: the webhook keeps what would leave it dangling",
      fix: `before the deploy (the merge deploys it), check that none of them remediates: ${IN_FLIGHT_QUERY} lists no remediation on their lines; if one does, wait until its node is healthy and NHC has removed its remediation, then deploy; if \`pulumi up\` was refused anyway, wait the same and run it again (docs/node-lifecycle.md, "Changing the health checks")`,
    },
  ];
}

/** What the webhook holds of a NodeHealthCheck, for the review of a change (`customKinds` of the Medik8s descriptor). */
export const NHC_CUSTOM_KINDS: CustomKinds = { [`${NHC_API_GROUP}/${NHC_KIND}`]: { held: { fields: heldFields, finding: heldChangeFinding } } };
