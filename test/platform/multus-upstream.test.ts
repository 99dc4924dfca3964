// Issue 14, item 8: our Multus objects (platform/multus.ts) equal the v4.3.0 release manifest
// (test/fixtures/upstream/multus-daemonset-thick.v4.3.0.yml) field by field, but for the changes
// docs/platform.md names: the pinned image, the DaemonSet's priority class, and on Talos the netns
// path and the daemon's resources. Any other difference, a ClusterRole rule upstream's release does
// not have included, fails here.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { imageRef, MULTUS_IMAGE } from "../../platform/versions";
import { objectsOf, planOf } from "../helpers/plans";
import { REPO } from "../helpers/stacks";

const UPSTREAM = parseAllDocuments(fs.readFileSync(path.join(REPO, "test/fixtures/upstream/multus-daemonset-thick.v4.3.0.yml"), "utf8")).map(
  (d) => d.toJS() as { kind: string; metadata: { name: string } },
);

const DS = "DaemonSet kube-multus-ds";
const pod = "spec.template.spec";
/** The documented changes: where, and the value we write there (undefined: upstream's field removed). */
const EVERYWHERE: Record<string, unknown> = {
  [`${DS} ${pod}.containers.0.image`]: imageRef(MULTUS_IMAGE),
  [`${DS} ${pod}.initContainers.0.image`]: imageRef(MULTUS_IMAGE),
  [`${DS} ${pod}.priorityClassName`]: "system-node-critical",
};
const TALOS: Record<string, unknown> = {
  ...EVERYWHERE,
  [`${DS} ${pod}.volumes.8.hostPath.path`]: "/var/run/netns/",
  [`${DS} ${pod}.containers.0.resources.requests.cpu`]: "200m",
  [`${DS} ${pod}.containers.0.resources.requests.memory`]: "100Mi",
  [`${DS} ${pod}.containers.0.resources.limits.cpu`]: "300m",
  [`${DS} ${pod}.containers.0.resources.limits.memory`]: "150Mi",
};

/** Every leaf where two values differ: `path` → our value. */
function differences(upstream: unknown, ours: unknown, at: string, out: Record<string, unknown> = {}): Record<string, unknown> {
  if (JSON.stringify(upstream) === JSON.stringify(ours)) return out;
  const isNode = (v: unknown) => v !== null && typeof v === "object";
  if (isNode(upstream) && isNode(ours) && Array.isArray(upstream) === Array.isArray(ours)) {
    const keys = new Set([...Object.keys(upstream as object), ...Object.keys(ours as object)]);
    for (const k of keys) differences((upstream as any)[k], (ours as any)[k], `${at}${at.endsWith(" ") ? "" : "."}${k}`, out);
  } else out[at] = ours;
  return out;
}

describe("Multus equals the v4.3.0 release manifest but for the documented changes", () => {
  it.each([
    ["prod-small", TALOS],
    ["lab", EVERYWHERE],
  ] as const)("%s", (stack, allowed) => {
    const ours = objectsOf(planOf(stack), "multus");
    expect(ours.map((o) => `${o.kind} ${o.metadata.name}`).sort()).toEqual(UPSTREAM.map((o) => `${o.kind} ${o.metadata.name}`).sort());
    const found: Record<string, unknown> = {};
    for (const up of UPSTREAM) {
      const mine = ours.find((o) => o.kind === up.kind && o.metadata.name === up.metadata.name);
      differences(up, mine, `${up.kind} ${up.metadata.name} `, found);
    }
    expect(found).toEqual(allowed);
  });

  it("the ClusterRole has upstream's three rules only (no resource.k8s.io rule, which only upstream's main branch has)", () => {
    const role = objectsOf(planOf("prod-medium"), "multus").find((o) => o.kind === "ClusterRole") as any;
    expect(role.rules.map((r: any) => r.apiGroups.join(","))).toEqual(["k8s.cni.cncf.io", "", ",events.k8s.io"]);
  });
});
