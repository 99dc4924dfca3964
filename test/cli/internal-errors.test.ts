// Issue 14, item 21: a bug in this repository is never reported as a mistake in a stack file. An
// invariant that fails is a plain Error: the CLIs print it with its stack trace and exit 3, and a
// child render's crash stays a crash (exit 3) in the commands that run one (drift, preview).
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../config/problems";
import { planStack } from "../../environments";
import { neutron } from "../../openkeel/services/neutron";
import { multus } from "../../platform/multus";
import { secretRef } from "../../plan/plan";
import { capture } from "../../cli/cli";
import { EXIT_INTERNAL_ERROR, renderFailureExit } from "../../cli/errors";
import { renderCommand } from "../../pipeline/render-command";
import { shippedConfig, STACKS_DIR } from "../helpers/stacks";

afterEach(() => vi.restoreAllMocks());

describe("a developer mistake is not the stack's", () => {
  it("a crash in a platform module: exit 3, 'internal error', the stack trace, and no stack file blamed", async () => {
    vi.spyOn(multus, "units").mockImplementation(() => {
      throw new Error("multus: an invariant of this module broke");
    });
    const r = await capture(renderCommand, ["--stacks-dir", STACKS_DIR, "--stack", "lab", "--out", "/nonexistent-openkeel-out"]);
    expect(r.code).toBe(EXIT_INTERNAL_ERROR);
    expect(r.stderr).toMatch(/^internal error \(a bug in this repository, please report it\):\nError: multus: an invariant of this module broke\n\s+at /);
    expect(r.stderr).not.toMatch(/stacks\/Pulumi\.lab\.yaml: /);
  });

  it("D4: metadata secrets that differ without any override are the descriptors' bug, not a problem of the stack", () => {
    const values = neutron.values!;
    vi.spyOn(neutron, "values").mockImplementation((ctx) => ({ ...values(ctx), metadataAgent: { sharedSecret: secretRef("another-secret") } }));
    let thrown: unknown;
    try {
      planStack(shippedConfig("prod-medium"));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect(thrown).not.toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toMatch(
      /D4: the descriptors give Nova \(metadata-proxy-shared-secret\) and Neutron \(another-secret\) different metadata secrets/,
    );
  });

  it("a child render's exit: a stack's mistake (2) or failed checks (1) pass on, a crash stays a crash", () => {
    expect(renderFailureExit(1)).toBe(1);
    expect(renderFailureExit(2)).toBe(2);
    expect(renderFailureExit(3)).toBe(EXIT_INTERNAL_ERROR);
    expect(renderFailureExit(null)).toBe(EXIT_INTERNAL_ERROR);
    expect(renderFailureExit(134)).toBe(EXIT_INTERNAL_ERROR);
  });
});
