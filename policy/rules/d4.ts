// D4: the HTTP metadata service (169.254.169.254): the metadata agent is enabled on every
// hypervisor, and its shared secret (metadata_proxy_shared_secret, shared with Nova's metadata
// API) is a Pulumi secret generated per stack, never a plaintext value in the program.
import { RESERVED_TAINT_KEY } from "../../config/roles";
import { chartOf, type Finding, RANDOM_PASSWORD_TYPE, type ResourceView, stackRule, UNKNOWN, valuesOf, valuesPath, walk } from "./common";
import { NEUTRON_CHART, NOVA_CHART } from "./charts";
import { neutronReleases, neutronView } from "./neutron";
import { describePlacement, onlyOn } from "./placement";
import { patchedPlacement } from "./post-render";

const SHARED_SECRET_KEY = /shared[-_]?secret/i;

/** Every value under a `…sharedSecret…` key of a release (path → value). */
function sharedSecrets(r: ResourceView): { path: string[]; value: unknown }[] {
  const out: { path: string[]; value: unknown }[] = [];
  walk(valuesOf(r), (path, value) => {
    const key = path[path.length - 1];
    if (key !== undefined && SHARED_SECRET_KEY.test(key) && (value === null || typeof value !== "object")) out.push({ path, value });
  });
  return out;
}

/** Where the metadata agent runs: § 5.2 lists no metadata agent, so only its release's post-render patch places it. */
function agentPlacementFindings(resources: ResourceView[], r: ResourceView): Finding[] {
  const { name, placement: agent, targets, misses, problem } = patchedPlacement(resources, r, "DaemonSet", "metadata-agent");
  if (problem) return [problem];
  const findings: Finding[] = [...misses];
  if (!onlyOn(agent, "compute")) {
    findings.push({
      urn: r.urn,
      message: `${r.name}: the metadata agent lands on ${describePlacement(agent)} (DaemonSet ${name} as its post-render patch leaves it, the release's patches targeting ${targets}; the chart places it nowhere, § 5.2)`,
      fix: "place it with role: compute (placement.metadataAgent, which the release's post-render patch carries): one agent per hypervisor serves the VMs of that node",
    });
  }
  if (!agent.tolerationKeys.includes(RESERVED_TAINT_KEY)) {
    findings.push({
      urn: r.urn,
      message: `${r.name}: the metadata agent does not tolerate ${RESERVED_TAINT_KEY}: VMs evacuated to a Masakari reserved host (§ 5.6) would get no metadata`,
      fix: `add {key: ${RESERVED_TAINT_KEY}, operator: Exists, effect: NoSchedule} to placement.metadataAgent.extraTolerations`,
    });
  }
  return findings;
}

function metadataAgentFindings(resources: ResourceView[], r: ResourceView): Finding[] {
  const n = neutronView(r);
  const findings: Finding[] = [];
  if (n.enabled("metadataAgent") !== true) {
    findings.push({
      urn: r.urn,
      message: `${r.name}: the metadata agent is not enabled (metadataAgent.enabled is ${JSON.stringify(n.enabled("metadataAgent") ?? null)})`,
      fix: "set placement.metadataAgent.enabled: true (the release writes metadataAgent.enabled from it; D4: VMs get http://169.254.169.254)",
    });
  } else findings.push(...agentPlacementFindings(resources, r));
  const secrets = sharedSecrets(r);
  if (secrets.length === 0) {
    findings.push({
      urn: r.urn,
      message: `${r.name}: no metadata proxy shared secret in the values`,
      fix: "set metadataAgent.sharedSecret from the stack secret (secretRef)",
    });
  }
  for (const s of secrets) {
    // the generated secret of a stack's first preview: the engine makes it during the update
    if (s.value === UNKNOWN) continue;
    if (typeof s.value !== "string" || s.value.length < 16) {
      findings.push({
        urn: r.urn,
        message: `${r.name}: values.${valuesPath(s.path)} is empty or too short for an HMAC key`,
        fix: "set it from the generated stack secret (secretRef('metadata-proxy-shared-secret'))",
      });
    }
  }
  return findings;
}

/**
 * Policies see secrets unwrapped, so secrecy is checked by origin: every shared secret in the
 * neutron and nova values must be the result of one of the stack's generated passwords (random's
 * `result` is always a secret output), and neutron's and nova's must be the same value.
 */
function secretOriginFindings(resources: ResourceView[]): Finding[] {
  const generated = new Set(
    resources
      .filter((r) => r.type === RANDOM_PASSWORD_TYPE)
      .map((r) => r.props.result)
      .filter((v) => typeof v === "string"),
  );
  const findings: Finding[] = [];
  const seen: { r: ResourceView; value: unknown }[] = [];
  for (const r of resources) {
    const chart = chartOf(r);
    if (chart !== NEUTRON_CHART && chart !== NOVA_CHART) continue;
    for (const s of sharedSecrets(r)) {
      if (s.value === UNKNOWN) continue;
      seen.push({ r, value: s.value });
      if (!generated.has(s.value as string)) {
        findings.push({
          urn: r.urn,
          message: `${r.name}: values.${valuesPath(s.path)} is a plaintext value, not the stack's generated secret`,
          fix: "use secretRef('metadata-proxy-shared-secret') in the Plan: the Pulumi layer turns it into a RandomPassword kept as a Pulumi secret",
        });
      }
    }
  }
  const distinct = new Set(seen.map((s) => s.value));
  if (distinct.size > 1) {
    findings.push({
      urn: seen[0].r.urn,
      message: `the metadata shared secrets differ between ${[...new Set(seen.map((s) => s.r.name))].join(" and ")}: Nova would reject every signed metadata request`,
      fix: "use the same secretRef in the neutron metadata agent and the nova metadata API",
    });
  }
  return findings;
}

export const d4MetadataAgent = stackRule(
  "D4",
  "d4-metadata-agent",
  "the metadata agent is enabled on compute nodes (its release's post-render patch), Masakari reserved hosts included, and has its shared secret",
  (resources) => neutronReleases(resources).flatMap((r) => metadataAgentFindings(resources, r)),
);

// A plaintext secret is wrong in every environment.
export const d4MetadataSecret = stackRule(
  "D4",
  "d4-metadata-secret",
  "the metadata proxy shared secret is the stack's generated Pulumi secret, the same for neutron and nova, never plaintext",
  secretOriginFindings,
  "everywhere",
);
