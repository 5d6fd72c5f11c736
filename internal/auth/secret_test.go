package auth

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestLoadOrCreateSecretCreatesOnceAndReuses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "dev")
	first, err := LoadOrCreateSecret(dir)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if len(first) < MinSecretBytes {
		t.Errorf("secret is %d bytes, want at least %d", len(first), MinSecretBytes)
	}
	info, err := os.Stat(filepath.Join(dir, SecretFileName))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Errorf("mode = %#o, want 0600", info.Mode().Perm())
	}
	second, err := LoadOrCreateSecret(dir)
	if err != nil {
		t.Fatalf("reuse: %v", err)
	}
	if !bytes.Equal(first, second) {
		t.Error("second call returned a different secret")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only %s", len(entries), SecretFileName)
	}
	// The secret works for signing and verifying.
	if _, err := NewVerifier(VerifierOpts{HS256Secret: first}); err != nil {
		t.Errorf("NewVerifier with the created secret: %v", err)
	}
	other, err := LoadOrCreateSecret(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, other) {
		t.Error("two directories got the same secret")
	}
}

func TestLoadOrCreateSecretRacingCallersAgree(t *testing.T) {
	for round := range 20 {
		dir := t.TempDir()
		const n = 8
		secrets := make([][]byte, n)
		errs := make([]error, n)
		var start, wg sync.WaitGroup
		start.Add(1)
		for i := range n {
			wg.Go(func() {
				start.Wait()
				secrets[i], errs[i] = LoadOrCreateSecret(dir)
			})
		}
		start.Done()
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("round %d caller %d: %v", round, i, errs[i])
			}
			if !bytes.Equal(secrets[i], secrets[0]) {
				t.Fatalf("round %d: callers got different secrets", round)
			}
		}
		onDisk, err := LoadOrCreateSecret(dir)
		if err != nil || !bytes.Equal(onDisk, secrets[0]) {
			t.Fatalf("round %d: the file does not hold the secret the callers got", round)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("round %d: %d entries left in the directory, want 1", round, len(entries))
		}
	}
}

func TestLoadOrCreateSecretRefusesBadFiles(t *testing.T) {
	valid := hex.EncodeToString(bytes.Repeat([]byte{0xab}, 32)) + "\n"
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
	}{
		{"readable by others", valid, 0o644, "chmod 600"},
		{"not hex", strings.Repeat("zz", 32), 0o600, "not hex"},
		{"too short", hex.EncodeToString([]byte("short")), 0o600, "want at least"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if runtime.GOOS == "windows" && tt.mode != 0o600 {
				t.Skip("file modes are not enforced on Windows")
			}
			dir := t.TempDir()
			path := filepath.Join(dir, SecretFileName)
			if err := os.WriteFile(path, []byte(tt.content), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			_, err := LoadOrCreateSecret(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), strings.TrimSpace(tt.content)) {
				t.Errorf("error %q shows the file content", err)
			}
		})
	}
	if _, err := LoadOrCreateSecret(""); err == nil {
		t.Error("empty directory name accepted")
	}
}

// TestLoadOrCreateSecretRacingProcessesAgree runs several copies of the test
// binary at once against one empty directory; they must all print one secret.
func TestLoadOrCreateSecretRacingProcessesAgree(t *testing.T) {
	if dir := os.Getenv("SCIDEX_AUTH_SECRET_HELPER_DIR"); dir != "" {
		secret, err := LoadOrCreateSecret(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Print(hex.EncodeToString(secret))
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("cannot find the test binary:", err)
	}
	dir := t.TempDir()
	const n = 4
	cmds := make([]*exec.Cmd, n)
	outs := make([]bytes.Buffer, n)
	for i := range n {
		cmds[i] = exec.Command(exe, "-test.run=^TestLoadOrCreateSecretRacingProcessesAgree$")
		cmds[i].Env = append(os.Environ(), "SCIDEX_AUTH_SECRET_HELPER_DIR="+dir)
		cmds[i].Stdout = &outs[i]
		cmds[i].Stderr = os.Stderr
	}
	for i := range n {
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if err := cmds[i].Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	for i := range n {
		if outs[i].Len() == 0 || outs[i].String() != outs[0].String() {
			t.Fatalf("process %d printed %d bytes differing from process 0", i, outs[i].Len())
		}
	}
	mine, err := LoadOrCreateSecret(dir)
	if err != nil || hex.EncodeToString(mine) != outs[0].String() {
		t.Fatalf("the file does not hold the secret the processes got (err %v)", err)
	}
}
