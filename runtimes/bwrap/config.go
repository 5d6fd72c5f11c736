package bwrap

import (
	"fmt"
	"path"
	"strings"

	"github.com/scidex/substrate/runtimes"
)

// config is a bwrap tool's runtime_config: the one shape accepted. The
// server builds the bwrap command line itself, so a manifest can say which
// program of its bundle runs and which of its directories are data, and
// nothing about mounts, namespaces or capabilities.
type config struct {
	// Command is the program, a path inside the bundle, and its arguments.
	Command []string `json:"command"`
	// DataPaths are directories of the bundle also mounted read-only at
	// /data/<path>.
	DataPaths []string `json:"data_paths,omitempty"`
}

// configShape is what a problem message quotes as the expected shape.
const configShape = `{"command": ["<bundle-relative program>", "args"...], "data_paths": ["<bundle-relative dir>"]}`

// sandboxRoots are the sandbox's own top-level paths, which an argument may
// name (a host path would mean nothing inside; one outside these is a sign
// the manifest expects to reach the host).
var sandboxRoots = []string{"/bundle", "/data", "/tmp", "/work", "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"}

// rawFlags are the bwrap options a manifest might try to slip into its
// command; any argument starting with one is refused, so that no reader of
// the manifest mistakes it for something the server honours.
var rawFlags = []string{"--bind", "--ro-bind", "--dev-bind", "--share-", "--unshare-", "--cap-add", "--uid", "--gid",
	"--userns", "--pidns", "--setenv", "--unsetenv", "--chdir", "--symlink", "--proc", "--dev", "--tmpfs", "--mqueue",
	"--dir", "--file", "--bind-data", "--ro-bind-data", "--remount-ro", "--exec-label", "--file-label", "--seccomp",
	"--add-seccomp-fd", "--block-fd", "--sync-fd", "--info-fd", "--json-status-fd", "--lock-file", "--as-pid-1",
	"--die-with-parent", "--new-session", "--hostname", "--argv0", "--clearenv", "--perms", "--size", "--chmod"}

// decodeConfig decodes and checks runtime_config against the tool's files.
func decodeConfig(t *runtimes.Tool) (*config, []runtimes.Problem) {
	c, err := runtimes.DecodeConfig[config](t.Config)
	if err != nil {
		return nil, []runtimes.Problem{{Path: "runtime_config", Constraint: "bwrap_config",
			Message: fmt.Sprintf("a bwrap runtime_config is %s and nothing else (the server builds the bwrap command line; raw flags are not accepted): %v", configShape, err)}}
	}
	files := map[string]bool{}
	for _, f := range t.Files {
		files[f.Path] = true
	}
	var ps []runtimes.Problem
	if len(c.Command) == 0 || c.Command[0] == "" {
		ps = append(ps, runtimes.Problem{Path: "runtime_config.command", Constraint: "required",
			Message: "a bwrap tool names its program, a file of its bundle, in runtime_config.command[0]"})
	} else if msg := bundlePath(c.Command[0]); msg != "" {
		ps = append(ps, runtimes.Problem{Path: "runtime_config.command[0]", Constraint: "bundle_path", Message: msg})
	} else if !files[c.Command[0]] {
		ps = append(ps, runtimes.Problem{Path: "runtime_config.command[0]", Constraint: "bundle_file",
			Message: fmt.Sprintf("the program %q is not one of the bundle's files", c.Command[0])})
	}
	for i, a := range c.Command {
		if i == 0 {
			continue
		}
		if msg := argProblem(a); msg != "" {
			ps = append(ps, runtimes.Problem{Path: fmt.Sprintf("runtime_config.command[%d]", i), Constraint: "sandbox_argument", Message: msg})
		}
	}
	for i, d := range c.DataPaths {
		p := fmt.Sprintf("runtime_config.data_paths[%d]", i)
		if msg := bundlePath(d); msg != "" {
			ps = append(ps, runtimes.Problem{Path: p, Constraint: "bundle_path", Message: msg})
			continue
		}
		if !hasDir(t.Files, d) {
			ps = append(ps, runtimes.Problem{Path: p, Constraint: "bundle_dir",
				Message: fmt.Sprintf("the data path %q is not a directory of the bundle (no registered file is under it)", d)})
		}
	}
	for i, f := range t.Files {
		if msg := bundlePath(f.Path); msg != "" {
			ps = append(ps, runtimes.Problem{Path: fmt.Sprintf("files[%d].path", i), Constraint: "bundle_path", Message: msg})
		}
		if !isSHA256(f.SHA256) {
			ps = append(ps, runtimes.Problem{Path: fmt.Sprintf("files[%d].sha256", i), Constraint: "sha256",
				Message: fmt.Sprintf("the sha256 of %q must be 64 lowercase hex digits", f.Path)})
		}
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return &c, nil
}

// bundlePath says what is wrong with p as a path inside the bundle, or "".
func bundlePath(p string) string {
	switch {
	case p == "":
		return "a bundle path must not be empty"
	case strings.HasPrefix(p, "/"):
		return fmt.Sprintf("%q is an absolute path; a bwrap tool can only name paths inside its bundle, relative to it", p)
	case strings.ContainsRune(p, 0) || strings.Contains(p, `\`):
		return fmt.Sprintf("%q contains a NUL or a backslash", p)
	case p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return fmt.Sprintf("%q escapes the bundle with ..", p)
	case path.Clean(p) != p || p == ".":
		return fmt.Sprintf("%q is not a clean relative path (want %q)", p, path.Clean(p))
	}
	return ""
}

// argProblem says what is wrong with a command argument, or "".
func argProblem(a string) string {
	for _, f := range rawFlags {
		if strings.HasPrefix(a, f) {
			return fmt.Sprintf("%q looks like a raw bwrap flag; the server builds the sandbox's command line and runtime_config may not add to it", a)
		}
	}
	for _, part := range strings.Split(a, "/") {
		if part == ".." {
			return fmt.Sprintf("%q contains a .. path element; name paths inside the sandbox (/bundle, /data, /tmp, /work) directly", a)
		}
	}
	if strings.HasPrefix(a, "/") {
		for _, r := range sandboxRoots {
			if a == r || strings.HasPrefix(a, r+"/") {
				return ""
			}
		}
		return fmt.Sprintf("%q is a host path; a bwrap tool sees only /bundle, /data, /tmp and /work", a)
	}
	return ""
}

// hasDir reports whether some file lies under the directory d.
func hasDir(files []runtimes.File, d string) bool {
	for _, f := range files {
		if strings.HasPrefix(f.Path, d+"/") {
			return true
		}
	}
	return false
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
