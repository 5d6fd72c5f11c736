package e2e

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// FindChromium returns the Chromium to drive: $SCIDEX_CHROMIUM, else
// /usr/bin/chromium (Debian's `apt-get install chromium`), else chromium on
// $PATH. Without one the test is skipped, unless SCIDEX_REQUIRE_BROWSER=1
// (CI), where a missing browser is a failure.
func FindChromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SCIDEX_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("SCIDEX_CHROMIUM=%s: %v", p, err)
		}
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium: install it (apt-get install -y chromium) or set SCIDEX_CHROMIUM"
	if os.Getenv("SCIDEX_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg + " (SCIDEX_REQUIRE_BROWSER=1)")
	}
	t.Skip(msg)
	return ""
}

// NewBrowser starts a headless Chromium with a fresh profile; it stops when
// the test ends.
func NewBrowser(t testing.TB, exe string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox, // as root in a container
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	}
	// The whole browser session gets one deadline, so that a hang fails
	// the test instead of eating the go test timeout.
	parent, cancelParent := context.WithTimeout(context.Background(), 3*time.Minute)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(parent, opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc() // waits for the browser process to exit
		cancelParent()
	})
	return ctx
}
