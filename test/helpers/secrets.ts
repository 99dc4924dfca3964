// Scanners for secret values: in the inputs the Pulumi program registers (a secret may appear only
// inside Pulumi's secret envelope, which the engine encrypts into the state) and in rendered files
// (a secret may appear only as its `<pulumi-secret:NAME>` placeholder).
import { parseAllDocuments } from "yaml";

/** Pulumi's wire format of a secret value: `{[SIG_KEY]: SECRET_SIG, value}` (@pulumi/pulumi runtime/rpc). */
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

export interface SecretScan {
  /** Paths where the value appears outside a secret envelope. */
  leaks: string[];
  /** How many secret envelopes hold the value. */
  enveloped: number;
}

function isEnvelope(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[SIG_KEY] === SECRET_SIG;
}

/** Where `needle` occurs in a registered resource's inputs, inside and outside secret envelopes. */
export function scanInputs(value: unknown, needle: string, at = "", into: SecretScan = { leaks: [], enveloped: 0 }): SecretScan {
  if (isEnvelope(value)) {
    if (JSON.stringify(value).includes(needle)) into.enveloped++;
  } else if (typeof value === "string") {
    if (value.includes(needle)) into.leaks.push(at || "(value)");
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => scanInputs(v, needle, `${at}[${i}]`, into));
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes(needle)) into.leaks.push(`${at}.${k} (key)`);
      scanInputs(v, needle, at ? `${at}.${k}` : k, into);
    }
  }
  return into;
}

/** Keys whose values are credentials (the values contract refuses literals under the same names). */
const SECRET_KEY = /secret|password|passwd|token|credential|api[-_]?key|private[-_]?key/i;
/** Keys that name a secret rather than hold one (`secretName: my-tls`, `existingSecret`…). */
const SECRET_REFERENCE_KEY = /(secret|token)(Name|Ref|Namespace|Key)$|^existingSecret$/;
export const PLACEHOLDER = /^<pulumi-secret:[a-z0-9][a-z0-9-]*>$/;

/**
 * Problems of a rendered file: a value under a credential key, or in a Secret's data, that is not a
 * placeholder; `secretValues` anywhere in the text.
 */
export function scanRendered(file: string, text: string, secretValues: string[]): string[] {
  const problems: string[] = [];
  for (const v of secretValues) if (text.includes(v)) problems.push(`${file}: holds a secret value`);
  if (!file.endsWith(".yaml")) return problems;
  const walk = (v: unknown, at: string, credential: boolean) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`, credential));
    else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk(x, at ? `${at}.${k}` : k, credential || (SECRET_KEY.test(k) && !SECRET_REFERENCE_KEY.test(k)));
    } else if (credential && !(typeof v === "string" && PLACEHOLDER.test(v)) && v !== undefined && v !== null && v !== "") {
      problems.push(`${file}: ${at}: holds a literal ${typeof v}, not a <pulumi-secret:NAME> placeholder`);
    }
  };
  for (const doc of parseAllDocuments(text)) {
    const body = doc.toJS() as Record<string, unknown> | null;
    if (body && body.kind === "Secret") {
      for (const field of ["data", "stringData"]) walk(body[field], field, true);
    }
    walk(body, "", false);
  }
  return problems;
}
