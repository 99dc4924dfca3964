// The CrossGuard pack: `pulumi preview --policy-pack policy -s <stack>` (the engine starts it) or
// `npm run policy` (scripts/policy.ts starts it the same way). The rules live in ./rules, so tests
// import them without starting the gRPC server this constructor starts.
import { PolicyPack } from "@pulumi/policy";
import { policies } from "./rules";

new PolicyPack("openkeel-placement", {
  description:
    "OpenKeel node placement decisions D1–D8 (design § 0). Lab stacks are exempt from all but the secret rule; production stacks are held to every decision.",
  enforcementLevel: "mandatory",
  policies: policies(),
});
