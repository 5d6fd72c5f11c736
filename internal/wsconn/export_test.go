package wsconn

import "reflect"

// FastPathTypes names the message types WriteJSON has seen that it encodes
// without the JSON round trip.
func FastPathTypes() []string {
	var out []string
	layouts.Range(func(k, v any) bool {
		if v.(*layout) != nil {
			out = append(out, k.(reflect.Type).String())
		}
		return true
	})
	return out
}
