// E2E STAND-IN for NHC's admission webhook (never used outside `npm run e2e`): vnodehealthcheck.kb.io,
// which the NHC CSV registers (failurePolicy Fail, CREATE UPDATE DELETE of nodehealthchecks:
// node-healthcheck-operator v0.12.0 bundle/manifests/node-healthcheck-operator.clusterserviceversion.yaml
// 664-685; the OLM stand-in installs it, the live webhooks point it at the admission stand-in).
// Its decision while a check remediates is platform/medik8s-webhook.ts nhcAdmission
// (internal/webhook/v1alpha1/nodehealthcheck_webhook.go 76-103, 211-232); a refusal is answered as
// controller-runtime v0.22.5, NHC's pin, answers it (pkg/webhook/admission/validator_custom.go
// 117-124: Denied; response.go 35-37, 63-82: allowed false, code 403, reason Forbidden, the error as
// the message). Its validation of the object itself (105-118) is not stood in for: our checks pass it.
import { nhcAdmission } from "../../platform/medik8s-webhook";
import { NHC_WEBHOOK } from "../standins/olm";
import type { AdmissionStandIn } from "./admission";

type Json = Record<string, unknown>;

/** The admission stand-in decides NHC's webhook as upstream does (registered for the whole run: with no remediation in flight it admits). */
export function registerNhcWebhookRule(admission: AdmissionStandIn): void {
  admission.handlersByWebhook.set(NHC_WEBHOOK, async (review) => {
    const req = (review.request ?? {}) as Json;
    const refusal = nhcAdmission(String(req.operation), req.oldObject, req.object);
    const what = `${String(req.operation)} NodeHealthCheck ${String(req.name)}${req.dryRun ? " (dry run)" : ""}`;
    const response = refusal
      ? { uid: req.uid, allowed: false, status: { code: 403, reason: "Forbidden", message: refusal } }
      : { uid: req.uid, allowed: true, status: { code: 200 } };
    return {
      body: { apiVersion: review.apiVersion ?? "admission.k8s.io/v1", kind: "AdmissionReview", response },
      what: refusal ? `${what}: DENIED (403): ${refusal}` : `${what}: allowed`,
    };
  });
}
