// Command testpg starts one private PostgreSQL cluster for a whole test run, so
// test packages share it instead of each starting their own. It prints
// "SCIDEX_TEST_DATABASE_URL=<conn string>" once the server is ready and stops the
// cluster when its standard input closes or it gets SIGINT/SIGTERM. However it
// ends, even SIGKILLed, its watchdog (internal/dbtest/watchdog) then stops
// whatever still runs in -dir and removes the directory.
//
//	go run ./internal/dbtest/testpg -dir /tmp/x
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/dbtest/watchdog"
	"github.com/scidex/substrate/internal/pgembed"
)

func main() {
	dir := flag.String("dir", "", "directory for the cluster (created; must be traversable by the postgres user when run as root)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "testpg: -dir is required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "testpg:", err)
		os.Exit(1)
	}
	if err := watchdog.Watch(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "testpg:", err)
		os.Exit(1)
	}
	defer watchdog.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(*dir, "pg"), Settings: dbtest.FastSettings,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testpg:", err)
		os.Exit(1)
	}
	fmt.Printf("%s=%s\n", dbtest.EnvURL, c.ConnString())
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(done) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "testpg: stop:", err)
		os.Exit(1)
	}
}
