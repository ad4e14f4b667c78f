package tools

// objectSchema is an object's schema (JSON Schema 2020-12 subset) from its properties;
// outputSchema builds every output schema with it.
func objectSchema(props map[string]any, required ...string) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required}
}
