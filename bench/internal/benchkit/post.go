package benchkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Post sends a prepared JSON body to url with c, with tok as the bearer token
// unless it is empty, and returns the whole answer; an answer other than 200
// is an error that carries its beginning. It does only what every request
// needs, for load generators to call in their loops.
func Post(c *http.Client, url, tok string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, raw)
	}
	return raw, err
}

// GQL posts a GraphQL query and its variables and returns the data, or the
// errors as an error: for setting up and checking, where an encoding per
// request does not matter.
func GQL(c *http.Client, url, tok, query string, vars map[string]any) (map[string]any, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, err
	}
	raw, err := Post(c, url, tok, body)
	if err != nil {
		return nil, err
	}
	var out struct {
		Data   map[string]any `json:"data"`
		Errors []any          `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%w: %s", err, raw)
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("%v", out.Errors)
	}
	return out.Data, nil
}
