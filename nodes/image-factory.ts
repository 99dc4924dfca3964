// Talos Image Factory schematics: the boot-time customisation of a node (system extensions and
// kernel arguments). The machine config's install.extraKernelArgs and install.extensions are
// deprecated or ignored since Talos v1.10-v1.12, so these live here.
//
// The factory names a schematic by the SHA-256 of its canonical YAML (siderolabs/image-factory
// pkg/schematic: yaml.v3 Marshal of the Schematic struct, 4-space indent, fields in struct order,
// empty ones omitted). schematicId() writes that form for the fields this repository uses, so the
// installer image reference can be rendered offline; POSTing the file returns the same ID.
import { createHash } from "node:crypto";
import { TALOS_IMAGE_FACTORY, TALOS_VERSION } from "../platform/versions";

export interface Schematic {
  customization: {
    extraKernelArgs?: string[];
    systemExtensions?: { officialExtensions: string[] };
  };
}

/** Official extensions: `siderolabs/<name>` (siderolabs/extensions manifests). */
const EXTENSION = /^[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9-]*$/;
/**
 * Strings yaml.v3 writes as plain scalars, unquoted: what the ID computation relies on. Starts
 * with a letter (never a number), no spaces, quotes, colons or '#'.
 */
const PLAIN_SCALAR = /^[A-Za-z_][A-Za-z0-9_.,/=+-]*$/;
/** YAML 1.1 booleans and nulls, which yaml.v3 quotes. */
const QUOTED_WORDS = /^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL)$/;

function plain(value: string, what: string): string {
  if (!PLAIN_SCALAR.test(value) || QUOTED_WORDS.test(value) || value.length > 64) {
    throw new Error(`schematic ${what} '${value}' is not a plain YAML scalar: its schematic ID cannot be computed offline`);
  }
  return value;
}

/** The factory's canonical text of a schematic (what its ID hashes). */
export function canonicalSchematic(s: Schematic): string {
  const args = s.customization.extraKernelArgs ?? [];
  const extensions = s.customization.systemExtensions?.officialExtensions ?? [];
  if (args.length === 0 && extensions.length === 0) return "customization: {}\n";
  let out = "customization:\n";
  if (args.length > 0) {
    out += "    extraKernelArgs:\n";
    for (const a of args) out += `        - ${plain(a, "kernel argument")}\n`;
  }
  if (extensions.length > 0) {
    out += "    systemExtensions:\n        officialExtensions:\n";
    for (const e of extensions) {
      if (!EXTENSION.test(e)) throw new Error(`schematic extension '${e}' is not <publisher>/<name>`);
      out += `            - ${plain(e, "extension")}\n`;
    }
  }
  return out;
}

export function schematicId(s: Schematic): string {
  return createHash("sha256").update(canonicalSchematic(s)).digest("hex");
}

/** The installer image of a schematic, for machine.install.image and `talosctl upgrade --image`. */
export function installerImage(id: string, version = TALOS_VERSION): string {
  return `${TALOS_IMAGE_FACTORY}/installer/${id}:${version}`;
}
