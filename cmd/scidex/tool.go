package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// toolCmd runs `scidex tool <subcommand>`.
func toolCmd(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "register" {
		return &configError{problems: []string{"usage: scidex tool register [flags] <dir> (or --runtime … --config … for an external tool); see scidex tool register -h"}}
	}
	return toolRegister(ctx, args[1:])
}

// bundleRuntimes run their bundle's files: every file of the directory but
// the manifest, README and examples is uploaded. Other runtimes upload only
// the files their manifest lists.
var bundleRuntimes = map[string]bool{"bwrap": true}

// toolRegister reads tools/<name>/tool.json and the bundle, and registers
// them through the GraphQL API with the caller's token (registerTool):
// created, a new version when something changed, nothing when nothing did.
func toolRegister(ctx context.Context, args []string) error {
	f := newFlags("tool register")
	url := f.str("url", "SCIDEX_URL", "http://127.0.0.1:8080/graphql", "the server's GraphQL endpoint")
	token := f.str("token", "SCIDEX_TOKEN", "", "your token (a bearer JWT)")
	runtime := f.str("runtime", "", "", "the runtime, for an external tool or to override the manifest's (http_post, mcp_server…)")
	config := f.str("config", "", "", "runtime_config as JSON, replacing the manifest's")
	manifestFile := f.str("manifest", "", "", "the manifest file, when it is not <dir>/tool.json")
	var dir string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := f.Parse(args); err != nil {
		return err
	}
	if dir == "" && f.NArg() > 0 {
		dir = f.Arg(0)
	}
	if *token == "" {
		return &configError{problems: []string{"no token: set SCIDEX_TOKEN (or --token) to a token with the contributor permission (admin for in_process tools)"}}
	}
	m, err := readManifest(dir, *manifestFile)
	if err != nil {
		return err
	}
	if *runtime != "" {
		m["runtime"] = *runtime
	}
	if *config != "" {
		var c map[string]any
		if err := json.Unmarshal([]byte(*config), &c); err != nil || c == nil {
			return &configError{problems: []string{fmt.Sprintf("--config: want a JSON object: %v", err)}}
		}
		m["runtime_config"] = c
	}
	rt, _ := m["runtime"].(string)
	files, err := bundle(dir, m, bundleRuntimes[rt])
	if err != nil {
		return err
	}
	res, err := postRegister(ctx, *url, *token, m, files)
	if err != nil {
		return err
	}
	return report(res)
}

func readManifest(dir, file string) (map[string]any, error) {
	if file == "" && dir == "" {
		return map[string]any{}, nil
	}
	var b []byte
	var err error
	if file == "" {
		// The bundle's own manifest is a bundle file: no symlink either.
		file = filepath.Join(dir, "tool.json")
		var bd *bundleDir
		if bd, err = openBundle(dir); err == nil {
			b, err = bd.readFile("tool.json")
			_ = bd.Close()
		}
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("read the manifest: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s is not a JSON object: %v", file, err)
	}
	return m, nil
}

type upload struct {
	Path          string `json:"path"`
	ContentBase64 string `json:"contentBase64"`
}

// bundle collects the files to upload: those the manifest lists, or, for a
// runtime that runs its bundle, every file of dir but tool.json, README.md
// and examples/. Each is read inside dir without following a symlink
// (bundleDir); one refused file refuses the bundle, before anything is sent.
func bundle(dir string, m map[string]any, whole bool) ([]upload, error) {
	listed, isListed := m["files"].([]any)
	delete(m, "files") // the server makes the list from what is uploaded
	if !isListed && (!whole || dir == "") {
		return []upload{}, nil
	}
	if dir == "" {
		dir = "."
	}
	b, err := openBundle(dir)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	var paths []string
	if isListed {
		for _, l := range listed {
			if p, _ := l.(map[string]any)["path"].(string); p != "" {
				paths = append(paths, p)
			}
		}
	} else if paths, err = b.walk(); err != nil {
		return nil, err
	}
	sort.Strings(paths)
	out := make([]upload, 0, len(paths))
	for _, p := range paths {
		data, err := b.readFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, upload{Path: p, ContentBase64: base64.StdEncoding.EncodeToString(data)})
	}
	return out, nil
}

const registerMutation = `mutation($m: JSON!, $files: [ToolFileInput!]) { registerTool(input: {manifest: $m, files: $files}) {
  __typename
  ... on WriteSuccess { ref warnings artifact { ... on Tool { name version lifecycleState } } }
  ... on ValidationFailed { message problems { path message } }
  ... on Problem { message } } }`

type registerResult struct {
	Typename string `json:"__typename"`
	Ref      string
	Warnings []string
	Artifact struct{ Name, Version, LifecycleState string }
	Message  string
	Problems []struct{ Path, Message string }
}

func postRegister(ctx context.Context, url, token string, m map[string]any, files []upload) (*registerResult, error) {
	body, _ := json.Marshal(map[string]any{"query": registerMutation, "variables": map[string]any{"m": m, "files": files}})
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reach the server at %s: %w", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var out struct {
		Data struct {
			RegisterTool registerResult `json:"registerTool"`
		}
		Errors []struct{ Message string }
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("the server answered %s: %.200s", resp.Status, raw)
	}
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("the server refused the request: %s", out.Errors[0].Message)
	}
	return &out.Data.RegisterTool, nil
}

func report(r *registerResult) error {
	if r.Typename != "WriteSuccess" {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s", r.Typename, r.Message)
		for _, p := range r.Problems {
			fmt.Fprintf(&b, "\n  %s: %s", p.Path, p.Message)
		}
		return errors.New(b.String())
	}
	fmt.Printf("%s %s (%s) %s\n", r.Artifact.Name, r.Artifact.Version, r.Artifact.LifecycleState, r.Ref)
	for _, w := range r.Warnings {
		fmt.Println("  " + w)
	}
	return nil
}
