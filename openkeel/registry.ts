// The services of the registry (./services/index.ts) by name, release and chart: every name of a
// service (ServiceName, `openkeel:services.<name>`, `openkeel:charts.versions.<name>`) is one of
// its list.
import { OPENKEEL_SERVICES } from "./services";
import { releaseName } from "./names";
import type { OpenKeelService } from "./service";
import type { NodePortUse } from "./endpoints";

/** An OpenKeel service's name: one of the registry's. */
export type ServiceName = (typeof OPENKEEL_SERVICES)[number]["name"];

/** The service of that name. */
export function serviceNamed(name: ServiceName): OpenKeelService {
  return OPENKEEL_SERVICES.find((s) => s.name === name)!;
}

/** The service whose release a unit is, or undefined (the infrastructure release, a platform unit). */
export function releaseService(unit: string): OpenKeelService | undefined {
  return OPENKEEL_SERVICES.find((s) => releaseName(s.name) === unit);
}

/** The name of the service whose release a unit is, or undefined. */
export function serviceOfRelease(unit: string): ServiceName | undefined {
  return releaseService(unit)?.name as ServiceName | undefined;
}

/** The service whose chart this is, or undefined (the infrastructure chart). */
export function chartService(chart: string): OpenKeelService | undefined {
  return OPENKEEL_SERVICES.find((s) => s.chart === chart);
}

/**
 * Every public API's NodePort in the lab (https://127.0.0.1:<port>), from the descriptors: one block
 * of ten per service, in install order, so that a new API finds its number without renumbering. A
 * collision or a port outside the range among them is a bug here (test/openkeel/lab-endpoints.test.ts).
 */
export function labApiNodePorts(): NodePortUse[] {
  return OPENKEEL_SERVICES.flatMap((s) =>
    Object.entries(s.components).flatMap(([component, c]) =>
      c.publicApi ? [{ release: releaseName(s.name), path: [component, "service", "nodePort"], port: c.publicApi.labNodePort }] : [],
    ),
  );
}

/** The lab's NodePort of the identity service's API (Keystone's): where `openstack --os-auth-url` points. */
export function labIdentityPort(): number | undefined {
  const identity = OPENKEEL_SERVICES.find((s) => s.identity);
  return identity ? Object.values(identity.components).find((c) => c.publicApi)?.publicApi?.labNodePort : undefined;
}
