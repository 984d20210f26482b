package tool

import "encoding/json"

// Object is the input schema {"type": "object", "properties": {},
// "required": []} of a tool that takes no arguments and is declared
// without [Args] (a test's tool). Tools with arguments declare them as a
// struct ([Args]): one declaration, generated and validated from there.
func Object() json.RawMessage {
	return json.RawMessage(`{"properties":{},"required":[],"type":"object"}`)
}
