/**
 * How a model-generating client (openapi-python-client, and generators like it) names the
 * schemas of an OpenAPI document: a component by its key; an inline object or enum by its
 * `title`, else by where it sits (`<operationId>Body`, `<operationId>Response<status>`,
 * `<Parent><Property>`, `<Parent>Item`, `<Parent>Type<i>` for a union member,
 * `<Parent>AdditionalProperty`). Two schemas with one class name make such a generator drop one.
 */
type Json = Record<string, unknown>

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** `custom_message`, `custom-message`, `customMessage` → `CustomMessage`. */
export function className (name: string): string {
  return name.split(/[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/).filter((part) => part !== '')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1).toLowerCase()).join('')
}

/** True for a schema such a generator makes a class of. */
function isModel (schema: Json): boolean {
  return schema.$ref === undefined && (schema.type === 'object' || isJson(schema.properties) || Array.isArray(schema.enum))
}

/** Every class name the document's schemas get, with where each comes from. */
export function generatedNames (document: Json): Array<{ name: string, at: string }> {
  const names: Array<{ name: string, at: string }> = []
  const visit = (schema: unknown, name: string, at: string): void => {
    if (!isJson(schema) || schema.$ref !== undefined) return
    const own = typeof schema.title === 'string' ? className(schema.title) : name
    if (isModel(schema)) names.push({ name: own, at })
    if (isJson(schema.properties)) {
      for (const [key, value] of Object.entries(schema.properties)) visit(value, own + className(key), `${at}/properties/${key}`)
    }
    if (isJson(schema.items)) visit(schema.items, `${own}Item`, `${at}/items`)
    if (isJson(schema.additionalProperties)) visit(schema.additionalProperties, `${own}AdditionalProperty`, `${at}/additionalProperties`)
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      const members = schema[key]
      if (Array.isArray(members)) members.forEach((member, i) => { visit(member, `${own}Type${i}`, `${at}/${key}/${i}`) })
    }
  }
  const components = isJson(document.components) && isJson(document.components.schemas) ? document.components.schemas : {}
  for (const [key, schema] of Object.entries(components)) {
    names.push({ name: className(key), at: `#/components/schemas/${key}` })
    // The component itself is named by its key; what it holds is named after it.
    if (isJson(schema)) visit({ ...schema, type: undefined, properties: undefined, enum: undefined, title: undefined }, className(key), `#/components/schemas/${key}`)
    if (isJson(schema) && isJson(schema.properties)) {
      for (const [prop, value] of Object.entries(schema.properties)) visit(value, className(key) + className(prop), `#/components/schemas/${key}/properties/${prop}`)
    }
    if (isJson(schema) && isJson(schema.additionalProperties)) visit(schema.additionalProperties, `${className(key)}AdditionalProperty`, `#/components/schemas/${key}/additionalProperties`)
  }
  for (const [path, item] of Object.entries(isJson(document.paths) ? document.paths : {})) {
    if (!isJson(item)) continue
    for (const [method, operation] of Object.entries(item)) {
      if (!isJson(operation)) continue
      const op = className(typeof operation.operationId === 'string' ? operation.operationId : `${method} ${path}`)
      const at = `#/paths/${path}/${method}`
      const body = isJson(operation.requestBody) && isJson(operation.requestBody.content) ? operation.requestBody.content : {}
      for (const [type, media] of Object.entries(body)) if (isJson(media)) visit(media.schema, `${op}Body`, `${at}/requestBody/${type}`)
      const responses = isJson(operation.responses) ? operation.responses : {}
      for (const [status, response] of Object.entries(responses)) {
        const content = isJson(response) && isJson(response.content) ? response.content : {}
        for (const [type, media] of Object.entries(content)) if (isJson(media)) visit(media.schema, `${op}Response${status}`, `${at}/responses/${status}/${type}`)
      }
      const parameters = Array.isArray(operation.parameters) ? operation.parameters : []
      for (const parameter of parameters) {
        if (isJson(parameter)) visit(parameter.schema, op + className(String(parameter.name)), `${at}/parameters/${String(parameter.name)}`)
      }
    }
  }
  return names
}

/** Class names given to more than one schema, with their places. */
export function collidingNames (document: Json): Record<string, string[]> {
  const byName = new Map<string, string[]>()
  for (const { name, at } of generatedNames(document)) byName.set(name, [...(byName.get(name) ?? []), at])
  return Object.fromEntries([...byName].filter(([, places]) => places.length > 1))
}

/** The request bodies whose schema (through `$ref`s) is a union at its top. */
export function unionBodies (document: Json): string[] {
  const components = isJson(document.components) && isJson(document.components.schemas) ? document.components.schemas : {}
  const resolve = (schema: unknown): unknown => {
    for (let hops = 0; isJson(schema) && typeof schema.$ref === 'string' && hops < 10; hops++) {
      schema = components[schema.$ref.replace('#/components/schemas/', '')]
    }
    return schema
  }
  const found: string[] = []
  for (const [path, item] of Object.entries(isJson(document.paths) ? document.paths : {})) {
    for (const [method, operation] of Object.entries(isJson(item) ? item : {})) {
      const content = isJson(operation) && isJson(operation.requestBody) && isJson(operation.requestBody.content) ? operation.requestBody.content : {}
      for (const [type, media] of Object.entries(content)) {
        const schema = resolve(isJson(media) ? media.schema : undefined)
        if (isJson(schema) && (schema.oneOf !== undefined || schema.anyOf !== undefined)) found.push(`${method.toUpperCase()} ${path} ${type}`)
      }
    }
  }
  return found
}
