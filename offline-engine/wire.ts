// The Pulumi wire types the offline engine side speaks (offline-engine/mock-run.ts records them,
// offline-engine/analyzer.ts sends them), and the one protobuf encoding fact it relies on.
import * as path from "node:path";
import { createRequire } from "node:module";
import type * as GrpcJs from "@grpc/grpc-js";
import type * as EmptyPb from "google-protobuf/google/protobuf/empty_pb";
import type * as StructPb from "google-protobuf/google/protobuf/struct_pb";

// The proto classes check `instanceof` against the google-protobuf / grpc-js copies that
// @pulumi/pulumi resolves, so messages are built with those exact copies (their types are the
// same packages' declarations, which the SDK's own proto typings import).
const pulumiDir = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
const fromPulumi = createRequire(path.join(pulumiDir, "package.json"));
export const grpc = fromPulumi("@grpc/grpc-js") as typeof GrpcJs;
export const { Struct } = fromPulumi("google-protobuf/google/protobuf/struct_pb") as typeof StructPb;
export const { Empty } = fromPulumi("google-protobuf/google/protobuf/empty_pb") as typeof EmptyPb;

/** google.protobuf.Struct: a resource's properties on the wire. */
export type StructMessage = StructPb.Struct;

/**
 * `head` (an encoded message) with one more length-delimited field appended. Protobuf parsers read
 * fields in any order and a concatenation of encodings as their merge (protobuf.dev, "Encoding":
 * "Last One Wins" and message merging), so a request can carry properties encoded once, ahead of
 * time, instead of re-encoding the same Struct for every request that holds it.
 */
export function withField(head: Uint8Array, field: number, body: Uint8Array): Uint8Array {
  return withFields(head, field, [body]);
}

/** `head` with a repeated length-delimited field appended, one entry per body, in order. */
export function withFields(head: Uint8Array, field: number, bodies: readonly Uint8Array[]): Uint8Array {
  const prefixes = bodies.map((b) => fieldPrefix(field, b.length));
  let size = head.length;
  bodies.forEach((b, i) => (size += prefixes[i].length + b.length));
  const out = new Uint8Array(size);
  out.set(head, 0);
  let at = head.length;
  bodies.forEach((b, i) => {
    out.set(prefixes[i], at);
    at += prefixes[i].length;
    out.set(b, at);
    at += b.length;
  });
  return out;
}

/** Tag (field number, wire type 2: length-delimited) and the body's length as a varint. */
function fieldPrefix(field: number, length: number): number[] {
  if (!Number.isInteger(field) || field < 1 || field > 15) throw new Error(`field ${field}: only fields 1–15 have a one-byte tag`);
  const prefix = [(field << 3) | 2];
  for (let n = length; ; n >>>= 7) {
    if (n < 0x80) {
      prefix.push(n);
      return prefix;
    }
    prefix.push((n & 0x7f) | 0x80);
  }
}
