// A small checker of a JSON body against an action's request schema from `/api/openapi.json`:
// `required`, `type`, `enum`, `maxLength`, `additionalProperties: false` and `$ref`, into objects
// and arrays. Enough to catch a mistyped field before sending; the server checks the rest
// (formats, bounds) and its 422 is shown as it comes.

let openapiDocument = null;

/** The request schema of `action` (`reset`) for OCPP `version` (`1.6`), or null. */
export async function requestSchema(action, version) {
  openapiDocument ??= fetch("/api/openapi.json").then((r) => (r.ok ? r.json() : null)).catch(() => null);
  const openapi = await openapiDocument;
  const name = `Ocpp${version === "2.0.1" ? "201" : "16"}${action.split("-").map((w) => w[0].toUpperCase() + w.slice(1)).join("")}Request`;
  const schema = openapi?.components?.schemas?.[name];
  return schema ? { schema, openapi } : null;
}

/** The problems of `value` against `schema`, as `["type: must be one of Hard, Soft", ...]`. */
export function check(value, { schema, openapi }, at = "") {
  const resolve = (s) => (s?.$ref ? resolve(openapi.components.schemas[s.$ref.split("/").pop()]) : s);
  schema = resolve(schema);
  if (!schema) return [];
  const name = at || "the body";
  const problems = [];
  const types = [].concat(schema.type || []);
  if (types.length && !types.some((t) => is(value, t))) return [`${name}: must be ${types.join(" or ")}`];
  if (schema.enum && !schema.enum.includes(value)) problems.push(`${name}: must be one of ${schema.enum.join(", ")}`);
  if (typeof value === "string" && schema.maxLength != null && value.length > schema.maxLength) {
    problems.push(`${name}: at most ${schema.maxLength} characters`);
  }
  if (is(value, "object")) {
    for (const key of schema.required || []) if (!(key in value)) problems.push(`${join(at, key)}: is required`);
    for (const [key, item] of Object.entries(value)) {
      const property = schema.properties?.[key];
      if (property) problems.push(...check(item, { schema: property, openapi }, join(at, key)));
      else if (schema.additionalProperties === false) problems.push(`${join(at, key)}: is not a field of this action`);
    }
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => problems.push(...check(item, { schema: schema.items, openapi }, join(at, String(i)))));
  }
  return problems;
}

const join = (at, key) => (at ? `${at}.${key}` : key);

function is(value, type) {
  switch (type) {
    case "object": return value !== null && typeof value === "object" && !Array.isArray(value);
    case "array": return Array.isArray(value);
    case "integer": return Number.isInteger(value);
    case "number": return typeof value === "number";
    case "string": return typeof value === "string";
    case "boolean": return typeof value === "boolean";
    case "null": return value === null;
    default: return true;
  }
}
