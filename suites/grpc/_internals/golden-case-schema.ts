// The JSON Schema of a golden case (fixtures/golden/grpc/README.md describes each field), and the ajv options it is
// compiled with: by the build into standalone code (scripts/golden-case-validator.js), or at load when that code is
// absent (golden-case-validator.ts). Data only, so that the build can read it without loading the checks.
import { PROTOCOL_NAMES } from "../../../harness/protocols/index.js";
import { Status } from "../../../harness/protocols/rpc.js";

const STATUS_NAMES = [...Object.keys(Status), "not-ok"];
const hex = { type: "string", pattern: "^(?:[0-9a-fA-F]{2}|\\s)*$", maxLength: 16384 } as const;
const text = { type: "string", minLength: 1, maxLength: 1024 } as const;

export const GOLDEN_CASE_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["description", "severity", "profile", "spec", "request", "expect"],
  properties: {
    id: { type: "string", pattern: "^grpc\\.[a-z0-9-]+(\\.[a-z0-9-]+)*$", maxLength: 200 },
    description: text,
    severity: { enum: ["MUST", "SHOULD"] },
    profile: { enum: ["contract", "protocol"] },
    spec: text,
    subject: text,
    statusFrom: { enum: ["wire", "client"] },
    protocols: { type: "array", minItems: 1, maxItems: 16, items: { enum: [...PROTOCOL_NAMES] } },
    request: {
      type: "object",
      additionalProperties: false,
      properties: {
        hex,
        path: { type: "string", pattern: "^/", maxLength: 1024 },
        headers: {
          type: "object",
          maxProperties: 64,
          additionalProperties: { type: ["string", "null"], maxLength: 8192 },
        },
        frames: {
          type: "array",
          maxItems: 64,
          items: {
            type: "object",
            additionalProperties: false,
            required: ["hex"],
            properties: {
              hex,
              compressed: { type: "boolean" },
              length: { type: "integer", minimum: 0, maximum: 0xffffffff },
            },
          },
        },
      },
    },
    expect: {
      type: "object",
      additionalProperties: false,
      required: ["anyOf"],
      properties: {
        anyOf: {
          type: "array",
          minItems: 1,
          maxItems: 32,
          items: {
            oneOf: [
              {
                type: "object",
                additionalProperties: false,
                required: ["status"],
                properties: { status: { enum: STATUS_NAMES } },
              },
              {
                type: "object",
                additionalProperties: false,
                required: ["reply"],
                properties: { reply: { const: "any" } },
              },
              { type: "object", additionalProperties: false, required: ["sameAs"], properties: { sameAs: hex } },
            ],
          },
        },
      },
    },
  },
} as const;

/** The options the schema is compiled with, by the build and at load alike: strict, the first error only. */
export const GOLDEN_CASE_AJV_OPTIONS = { allErrors: false, strict: true } as const;
