package promfake

import "encoding/json"

// NonFinite rewrites a real Prometheus answer so every sample value is NaN,
// +Inf or -Inf in turn (for a proxy in front of a real server).
func NonFinite(body []byte) []byte {
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil {
		return body
	}
	data, _ := doc["data"].(map[string]any)
	result, _ := data["result"].([]any)
	values := []string{"NaN", "+Inf", "-Inf"}
	n := 0
	set := func(pt any) {
		if p, ok := pt.([]any); ok && len(p) == 2 {
			p[1] = values[n%len(values)]
			n++
		}
	}
	for _, s := range result {
		m, _ := s.(map[string]any)
		if v, ok := m["value"]; ok {
			set(v)
		}
		if vs, ok := m["values"].([]any); ok {
			for _, v := range vs {
				set(v)
			}
		}
	}
	if data != nil && data["resultType"] == "scalar" {
		set(data["result"])
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}

// AddWarning returns a rewrite that adds a Thanos/Mimir-style
// partial-response warning to every successful answer.
func AddWarning(w string) func([]byte) []byte {
	return func(body []byte) []byte {
		var doc map[string]any
		if json.Unmarshal(body, &doc) != nil || doc["status"] != "success" {
			return body
		}
		ws, _ := doc["warnings"].([]any)
		doc["warnings"] = append(ws, w)
		out, err := json.Marshal(doc)
		if err != nil {
			return body
		}
		return out
	}
}
