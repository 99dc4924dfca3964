// What a change does to the OpenKeel releases, as warnings with their reason (review/preview.ts lists
// them among a change's findings): a service that goes away, a quorum whose member count changes
// (Galera, RabbitMQ, OVN central, a service's quorum component); and each service's own checks of a
// change, `changeFindings` of its descriptor (openkeel/service.ts): this module names no service.
import { formatPath, type Check } from "../config/problems";
import { INFRASTRUCTURE_UNIT, QUORUM_MEMBERS } from "../openkeel/infrastructure";
import { RELEASE_TYPE, releaseName } from "../openkeel/names";
import { releaseService } from "../openkeel/registry";
import type { OpenKeelService } from "../openkeel/service";
import { OPENKEEL_SERVICES } from "../openkeel/services";
import type { Index, UnitChange, ValuesChange } from "./preview-model";

/** Galera, RabbitMQ, OVN central: where their member counts are in the values, and what a change of it does. */
interface QuorumValue {
  unit: string;
  path: string[];
  name: string;
  note: string;
}

const QUORUM_NOTES: Record<string, { name: string; note: string }> = {
  mariadb: { name: "Galera (MariaDB)", note: "a Galera cluster keeps working while a majority of its members is up" },
  rabbitmq: {
    name: "RabbitMQ",
    note: "quorum queues need a majority of their replicas, and the RabbitMQ cluster operator refuses to scale a cluster down (rabbitmq/cluster-operator controllers/reconcile_scale_down.go)",
  },
  ovnCentral: {
    name: "OVN central",
    note: "the northbound and southbound databases are RAFT clusters, and a member the StatefulSet stops still counts until it leaves the cluster (ovs-appctl cluster/leave): after a scale-down the members left may be no majority of the cluster they know",
  },
};

function quorumValues(): QuorumValue[] {
  const out: QuorumValue[] = QUORUM_MEMBERS.map((m) => ({ unit: INFRASTRUCTURE_UNIT, path: ["infrastructure", m, "replicas"], ...QUORUM_NOTES[m] }));
  for (const { name: service, components } of OPENKEEL_SERVICES) {
    for (const [component, c] of Object.entries(components)) {
      if (c.replicas !== "quorum") continue;
      const known = QUORUM_NOTES[component] ?? { name: `${service} ${component}`, note: "its members replicate their state and need a majority up" };
      out.push({ unit: releaseName(service), path: [component, "replicas"], ...known });
    }
  }
  return out;
}

/** Failures a quorum of `n` members survives. */
const tolerates = (n: number) => Math.max(0, Math.floor((n - 1) / 2));

export function quorumFindings(values: ValuesChange[]): Check[] {
  const out: Check[] = [];
  for (const q of quorumValues()) {
    const at = formatPath(q.path);
    const v = values.find((x) => x.unit === q.unit && x.op === "change");
    const c = v?.changes.find((x) => x.op === "change" && formatPath(x.path) === at);
    if (!c || typeof c.before !== "number" || typeof c.after !== "number") continue;
    const even = c.after > 1 && c.after % 2 === 0 ? "; an even count can split into two halves that both stop" : "";
    out.push({
      level: "warning",
      code: "quorum-members",
      message: `${q.name}: ${c.before} → ${c.after} members (${at} of ${q.unit})`,
      reason: `it survives ${tolerates(c.before)} failed member(s) before and ${tolerates(c.after)} after; ${q.note}${even}`,
      fix: `if ${q.name} is not meant to have ${c.after} member(s), restore what sets the count: a replicas override in openkeel:services, or the controlPlane nodes it follows (3 from 3 on, else 1)`,
    });
  }
  return out;
}

export function serviceFindings(units: UnitChange[], bi: Index, hi: Index): Check[] {
  const out: Check[] = [];
  for (const u of units) {
    const unit = bi.units.get(u.name);
    if (u.op !== "remove" || unit?.type !== RELEASE_TYPE) continue;
    const service = u.name.replace(/^openkeel-/, "");
    const role = releaseService(u.name)?.requiredRole;
    const had = (idx: Index) => idx.nodes.filter((n) => role !== undefined && n.roles.includes(role)).map((n) => n.name);
    let why = "the stack no longer enables it (openkeel:services)";
    let fix = `if the cloud still needs it, enable it again (openkeel:services.${service})`;
    if (role && had(hi).length === 0 && had(bi).length > 0) {
      const lost = had(bi).map((n) => (hi.nodes.some((x) => x.name === n) ? `${n} lost it` : `${n} left the inventory`));
      why = `no node has the ${role} role any more (${lost.join(", ")}), and ${service} runs only where one has it (topology/services.ts)`;
      fix = `if the cloud still needs it, give a node the ${role} role`;
    }
    out.push({
      level: "warning",
      code: "service-removed",
      message: `service ${service} goes away: \`pulumi up\` uninstalls release ${unit.release ?? u.name}`,
      reason: `${why}; its API leaves the cloud`,
      fix,
    });
  }
  return out;
}

/** Each service's own checks of a change (`changeFindings` of its descriptor: Swift's rings), in install order. */
export function serviceChangeFindings(bi: Index, hi: Index, where: string, services: readonly OpenKeelService[] = OPENKEEL_SERVICES): Check[] {
  return services.flatMap((s) => s.changeFindings?.(bi, hi, where) ?? []);
}
