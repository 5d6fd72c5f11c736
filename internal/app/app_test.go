package app_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/scidex/substrate/internal/app"
	"github.com/scidex/substrate/internal/auth"
	"github.com/scidex/substrate/internal/dbtest"
	"github.com/scidex/substrate/internal/event"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// Stop has ended the background work when it returns: the hub's subscriptions
// are over, with the reason, before the caller may close the pool.
func TestStopEndsTheBackgroundWork(t *testing.T) {
	a, err := app.New(app.Config{Pool: dbtest.Pool(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err == nil {
		t.Error("a second Start was accepted")
	}
	sub := a.Hub.Subscribe(context.Background(), event.SubscribeOpts{Actor: auth.System()})
	if err := a.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	select {
	case <-sub.Done():
	default:
		t.Fatal("a subscription outlived Stop")
	}
	if !strings.Contains(sub.Reason(), "shutting down") {
		t.Errorf("the subscription ended with %q", sub.Reason())
	}
	if err := a.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
}

// A hub that cannot LISTEN stops Start within its timeout, saying so, and
// leaves nothing running.
func TestStartFailsWhenTheHubCannotListen(t *testing.T) {
	pool := dbtest.Pool(t)
	listen, err := pgx.ParseConfig("host=/nonexistent port=5432 user=nobody dbname=nowhere sslmode=disable connect_timeout=1")
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(app.Config{Pool: pool, Listen: listen, HubTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = a.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "event hub") {
		t.Fatalf("Start with an unreachable LISTEN connection: %v", err)
	}
	if err := a.Stop(); err != nil {
		t.Errorf("Stop after a failed Start: %v", err)
	}
}
