// Issue 47 item 2: what an object of a component's custom kind offers once its controller acts on
// it is the component's knowledge (`kindOffers` of its descriptor), handed to plan/needs.ts: a
// Certificate the Secret cert-manager writes.
import { describe, expect, it } from "vitest";
import { fact, objectFacts } from "../../plan/needs";
import type { K8sObject } from "../../plan/plan";
import { certManager } from "../../platform/cert-manager";
import { kindOffersOf, type PlatformComponent } from "../../platform/component";

const certificate = (spec: Record<string, unknown>): K8sObject => ({
  apiVersion: "cert-manager.io/v1",
  kind: "Certificate",
  metadata: { name: "webhook", namespace: "ops" },
  spec,
});

describe("what objects of a component's kinds offer", () => {
  it("a Certificate offers the Secret of its secretName in its namespace with cert-manager's kindOffers, and nothing without them", () => {
    const kinds = kindOffersOf([certManager]);
    expect([...objectFacts([certificate({ secretName: "webhook-cert" })], undefined, kinds).offers]).toEqual([fact.secret("ops", "webhook-cert")]);
    expect([...objectFacts([certificate({ secretName: "webhook-cert" })]).offers]).toEqual([]);
    expect([...objectFacts([certificate({ secretName: "" })], undefined, kinds).offers]).toEqual([]);
  });

  it("a kind is one component's: a second component that claims it is a bug, named", () => {
    const copy: PlatformComponent = { ...certManager, name: "Other issuer" };
    expect(() => kindOffersOf([certManager, copy])).toThrow(
      "Other issuer claims what objects of cert-manager.io/Certificate offer, which another component already does",
    );
  });
});
