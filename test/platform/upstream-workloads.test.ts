// Issue 23: the operators of the pinned release manifests (virt-operator, cdi-operator, the RabbitMQ
// operators, OLM's) are components of the placement model, their scheduling encoded in the module
// of their platform component (the manifests take no values: where they run is their release's
// choice). Held equal to the files themselves (test/helpers/upstream.ts: the mirror folder, or the
// pinned URL): an upgrade that moves a workload, or a manifest with a workload nobody encoded, fails
// here before the placement report can be wrong.
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ENVIRONMENTS } from "../../environments/registry";
import type { PlatformComponent } from "../../platform/component";
import { VIRT_OPERATOR } from "../../platform/kubevirt";
import { CERT_MANAGER_CRDS, KUBEVIRT_OPERATOR, type ManifestPin } from "../../platform/versions";
import { asShipped, pinnedManifest, shippedWorkloads, type ShippedWorkload } from "../helpers/upstream";

/**
 * Pinned manifests the mirror folder does not hold, and why they can have no workload to encode.
 * Where there is no mirror folder they are downloaded and checked like the others.
 */
const NOT_MIRRORED: Record<string, string> = {
  [CERT_MANAGER_CRDS.url]: "cert-manager's CRDs alone (pinned after ../shared/mirror was made): no workload",
};

const isManifestPin = (p: unknown): p is ManifestPin => typeof (p as ManifestPin).url === "string";
const COMPONENTS: PlatformComponent[] = [...new Set(Object.values(ENVIRONMENTS).flatMap((e) => e.platform))];
const byName = (a: ShippedWorkload, b: ShippedWorkload) => `${a.kind}/${a.namespace}/${a.name}`.localeCompare(`${b.kind}/${b.namespace}/${b.name}`);

const CASES = COMPONENTS.flatMap((c) => c.pins.filter(isManifestPin).map((pin) => [`${c.name}: ${path.posix.basename(pin.url)}`, c, pin] as const));

describe("the workloads of the pinned upstream manifests, as their modules encode them", () => {
  it.each(CASES)("%s", async (_name, component, pin) => {
    const encoded = (component.upstream ?? [])
      .filter((m) => m.pin === pin)
      .flatMap((m) => m.workloads)
      .map(asShipped)
      .sort(byName);
    if (NOT_MIRRORED[pin.url] && !(await readable(pin.url))) {
      expect(encoded, NOT_MIRRORED[pin.url]).toEqual([]);
      return;
    }
    expect(encoded).toEqual(shippedWorkloads(await pinnedManifest(pin.url)).sort(byName));
  });

  it("every encoded manifest is one of its component's pins", () => {
    for (const c of COMPONENTS) for (const m of c.upstream ?? []) expect(c.pins, `${c.name}: ${m.pin.url}`).toContain(m.pin);
  });

  it("the comparison sees a changed toleration (virt-operator without upstream's control-plane tolerations)", async () => {
    const shipped = shippedWorkloads(await pinnedManifest(KUBEVIRT_OPERATOR.url));
    expect([asShipped(VIRT_OPERATOR)]).toEqual(shipped);
    expect([asShipped({ ...VIRT_OPERATOR, scheduling: { ...VIRT_OPERATOR.scheduling, tolerations: [] } })]).not.toEqual(shipped);
  });
});

async function readable(url: string): Promise<boolean> {
  try {
    await pinnedManifest(url);
    return true;
  } catch {
    return false;
  }
}
