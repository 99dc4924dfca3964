// Issue 47 item 2: what an object of a component's custom kind offers once its controller acts on
// it is the component's knowledge (`kindOffers` of its descriptor), handed to plan/needs.ts: a
// Certificate the Secret cert-manager writes, a MetalLB pool the addresses of LoadBalancer Services.
import { describe, expect, it } from "vitest";
import { fact, objectFacts } from "../../plan/needs";
import type { K8sObject } from "../../plan/plan";
import { certManager } from "../../platform/cert-manager";
import { kindOffersOf, type PlatformComponent } from "../../platform/component";
import { metallb } from "../../platform/metallb";

const certificate = (spec: Record<string, unknown>): K8sObject => ({
  apiVersion: "cert-manager.io/v1",
  kind: "Certificate",
  metadata: { name: "webhook", namespace: "ops" },
  spec,
});
const pool: K8sObject = { apiVersion: "metallb.io/v1beta1", kind: "IPAddressPool", metadata: { name: "p", namespace: "metallb-system" }, spec: {} };
const vip: K8sObject = { apiVersion: "v1", kind: "Service", metadata: { name: "vip", namespace: "apps" }, spec: { type: "LoadBalancer" } };

describe("what objects of a component's kinds offer", () => {
  it("a Certificate offers the Secret of its secretName in its namespace with cert-manager's kindOffers, and nothing without them", () => {
    const kinds = kindOffersOf([certManager]);
    expect([...objectFacts([certificate({ secretName: "webhook-cert" })], undefined, kinds).offers]).toEqual([fact.secret("ops", "webhook-cert")]);
    expect([...objectFacts([certificate({ secretName: "webhook-cert" })]).offers]).toEqual([]);
    expect([...objectFacts([certificate({ secretName: "" })], undefined, kinds).offers]).toEqual([]);
  });

  it("an IPAddressPool offers the addresses a LoadBalancer Service uses with MetalLB's kindOffers, and nothing without them", () => {
    const withPool = objectFacts([pool, vip], undefined, kindOffersOf([metallb]));
    expect([...withPool.offers]).toEqual([fact.loadBalancer]);
    expect([...withPool.uses]).not.toContain(fact.loadBalancer);
    expect([...objectFacts([pool, vip]).uses]).toContain(fact.loadBalancer);
    // another component's kinds say nothing of a pool
    expect([...objectFacts([pool], undefined, kindOffersOf([certManager])).offers]).toEqual([]);
  });

  it("a kind is one component's: a second component that claims it is a bug, named", () => {
    const copy: PlatformComponent = { ...certManager, name: "Other issuer" };
    expect(() => kindOffersOf([certManager, copy])).toThrow(
      "Other issuer claims what objects of cert-manager.io/Certificate offer, which another component already does",
    );
  });
});
