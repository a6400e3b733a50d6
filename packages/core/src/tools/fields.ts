import { describeValue } from "../describe-value.js";
import { ContextError } from "../errors.js";

/**
 * A tool's input, declared once as a table of fields: `inputSchema` turns it into the JSON Schema the model
 * sees, `readInput` checks what the model sent against it, and `InputOf` is its TypeScript type.
 */
export type FieldSpec =
  | { type: "string"; description: string; required?: boolean; enum?: readonly string[] }
  | { type: "object"; description: string; required?: boolean; fields: FieldTable };

export type FieldTable = { readonly [name: string]: FieldSpec };

type FieldValue<Spec> = Spec extends { type: "object"; fields: infer Fields extends FieldTable }
  ? InputOf<Fields>
  : Spec extends { enum: readonly (infer Value extends string)[] }
    ? Value
    : string;
type RequiredNames<Fields extends FieldTable> = {
  [Name in keyof Fields]: Fields[Name] extends { required: true } ? Name : never;
}[keyof Fields];

/** The arguments a field table describes: required fields as declared, the others optional. */
export type InputOf<Fields extends FieldTable> = {
  [Name in RequiredNames<Fields>]: FieldValue<Fields[Name]>;
} & { [Name in Exclude<keyof Fields, RequiredNames<Fields>>]?: FieldValue<Fields[Name]> };

/** A JSON Schema object, as tool definitions carry it. */
export type JsonSchema = { [key: string]: unknown };

function fieldSchema(spec: FieldSpec): JsonSchema {
  if (spec.type === "object") {
    const parts = objectParts(spec.fields);
    return { type: "object", description: spec.description, ...parts, additionalProperties: false };
  }
  return {
    type: "string",
    ...(spec.enum ? { enum: [...spec.enum] } : {}),
    description: spec.description,
  };
}

function objectParts(fields: FieldTable): JsonSchema {
  const required = Object.keys(fields).filter((name) => fields[name]?.required);
  const properties = Object.fromEntries(
    Object.entries(fields).map(([name, spec]) => [name, fieldSchema(spec)]),
  );
  return { properties, ...(required.length > 0 ? { required } : {}) };
}

/** The JSON Schema of a tool's input: an object of the table's fields, nothing else. */
export function inputSchema(fields: FieldTable): JsonSchema {
  return { type: "object", ...objectParts(fields), additionalProperties: false };
}

/**
 * Checks tool input against its table and returns the fields it declares, read from the input's own
 * properties only (an inherited `label` does not count). `null` counts as absent; unknown fields are
 * ignored. Enum fields other than labels are checked here; labels are checked by the tool, which knows
 * why a label is not allowed.
 */
export function readInput<Fields extends FieldTable>(
  tool: string,
  fields: Fields,
  input: unknown,
  path = "",
): InputOf<Fields> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ContextError(
      "INVALID_INPUT",
      path === ""
        ? `${tool} expects an object of arguments, got ${describeValue(input)}`
        : `${tool}: "${path}" must be an object, got ${describeValue(input)}`,
    );
  }
  const result: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(fields)) {
    const value = Object.hasOwn(input, name) ? (input as Record<string, unknown>)[name] : undefined;
    const field = path === "" ? name : `${path}.${name}`;
    if (value === undefined || value === null) {
      if (spec.required) throw new ContextError("INVALID_INPUT", `${tool}: "${field}" is required`);
      continue;
    }
    if (spec.type === "object") {
      result[name] = readInput(tool, spec.fields, value, field);
      continue;
    }
    if (typeof value !== "string") {
      throw new ContextError(
        "INVALID_INPUT",
        `${tool}: "${field}" must be a string, got ${describeValue(value)}`,
      );
    }
    if (spec.enum && name !== "label" && !spec.enum.includes(value)) {
      const allowed = spec.enum.map((candidate) => `"${candidate}"`).join(" or ");
      throw new ContextError("INVALID_INPUT", `${tool}: "${field}" must be ${allowed}, got "${value}"`);
    }
    result[name] = value;
  }
  return result as InputOf<Fields>;
}
