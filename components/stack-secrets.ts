// The stack's generated secrets (the metadata proxy shared secret, …): the Plan names them
// (SecretRef); here each is generated once per stack, kept encrypted in the Pulumi state, and
// handed to the units as Pulumi secrets only.
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { isSecretRef } from "../plan/plan";

/** The arguments of StackSecrets. */
export interface StackSecretsArgs {
  /** Names of the secrets the plan refers to (SecretRef); each becomes one RandomPassword, duplicates once. */
  names: string[];
}

/**
 * The stack's generated secrets (metadata proxy shared secret, …). Generated once, kept encrypted
 * in the Pulumi state, and handed to units as Pulumi secrets only.
 */
export class StackSecrets extends pulumi.ComponentResource {
  readonly values: Record<string, pulumi.Output<string>> = {};
  constructor(name: string, args: StackSecretsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("openkeel:secrets:StackSecrets", name, {}, opts);
    for (const secret of [...new Set(args.names)].sort()) {
      const pw = new random.RandomPassword(secret, { length: 48, special: false }, { parent: this });
      this.values[secret] = pulumi.secret(pw.result);
    }
    this.registerOutputs({});
  }
}

/** Every SecretRef name in a value tree. */
export function secretNames(value: unknown, into = new Set<string>()): Set<string> {
  if (isSecretRef(value)) into.add(value.secretRef);
  else if (Array.isArray(value)) value.forEach((v) => secretNames(v, into));
  else if (value !== null && typeof value === "object") Object.values(value).forEach((v) => secretNames(v, into));
  return into;
}

/** Replace SecretRefs by the stack's Pulumi secrets. */
export function resolveSecrets(value: unknown, secrets: Record<string, pulumi.Output<string>>): pulumi.Input<unknown> {
  if (isSecretRef(value)) {
    const s = secrets[value.secretRef];
    if (!s) throw new Error(`secret ${value.secretRef} was not generated`);
    return s;
  }
  if (Array.isArray(value)) return value.map((v) => resolveSecrets(v, secrets));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveSecrets(v, secrets)]));
  }
  return value;
}
