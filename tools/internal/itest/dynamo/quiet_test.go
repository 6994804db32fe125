package dynamo_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/dynamo"
	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// claims runs n concurrent ClaimQuiet calls of key at now and returns how many won.
func claims(t *testing.T, e *env, n int, key string, period time.Duration, now time.Time) int {
	t.Helper()
	var won, failed atomic.Int64
	testkit.Parallel(n, func(int) {
		_, ok, err := e.store.ClaimQuiet(context.Background(), key, period, now)
		switch {
		case err != nil:
			failed.Add(1)
			t.Errorf("ClaimQuiet: %v", err)
		case ok:
			won.Add(1)
		}
	})
	return int(won.Load())
}

// Of 40 containers claiming the same alarm at once, exactly one wins; none wins until
// the period has passed, then exactly one again; another key is claimed on its own.
func TestClaimQuiet_OneOfManyConcurrentClaimsWinsPerPeriod(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil)
	t0 := time.Date(2026, 11, 11, 8, 0, 0, 0, time.UTC)
	const period = 30 * time.Minute
	for _, step := range []struct {
		at   time.Time
		key  string
		want int
	}{
		{t0, "alarm#ReconcileDifferencesAlarm#wecom-1", 1},
		{t0.Add(time.Second), "alarm#ReconcileDifferencesAlarm#wecom-1", 0},
		{t0.Add(period - time.Millisecond), "alarm#ReconcileDifferencesAlarm#wecom-1", 0},
		{t0, "alarm#ReconcileDifferencesAlarm#slack-2", 1},
		{t0.Add(period), "alarm#ReconcileDifferencesAlarm#wecom-1", 1},
		{t0.Add(period + time.Minute), "alarm#ReconcileDifferencesAlarm#wecom-1", 0},
	} {
		if got := claims(t, e, 40, step.key, period, step.at); got != step.want {
			t.Errorf("%s at +%v: %d of 40 claims won, want %d", step.key, step.at.Sub(t0), got, step.want)
		}
	}
	var items int
	for _, it := range e.Scan(t, e.Tables.Orders) {
		if it["kind"] != "QUIET" {
			continue
		}
		items++
		pk, _ := it["pk"].(string)
		until, ttl := it["until"].(float64), it["ttl"].(float64)
		if !strings.HasPrefix(pk, dynamo.QuietKeyPrefix) || strings.Contains(pk, "Reconcile") || ttl != until/1000+period.Seconds() {
			t.Errorf("claim item %v: want pk quiet#<digest>, ttl a period after until", it)
		}
	}
	if items != 2 {
		t.Errorf("%d claim items, want 2 (one per key)", items)
	}
}

// A released claim frees the key at once; a release with another token (a claim that
// lapsed and was taken since) changes nothing.
func TestReleaseQuiet_FreesOnlyItsOwnClaim(t *testing.T) {
	e := newEnv(t, dynamo.Options{}, nil)
	ctx, t0, key := context.Background(), time.Date(2026, 11, 11, 8, 0, 0, 0, time.UTC), "books#cup-01#wecom-1"
	first, ok, err := e.store.ClaimQuiet(ctx, key, time.Hour, t0)
	if err != nil || !ok {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if err := e.store.ReleaseQuiet(ctx, key, "not-the-token"); err != nil {
		t.Fatal(err)
	}
	if got := claims(t, e, 10, key, time.Hour, t0.Add(time.Minute)); got != 0 {
		t.Errorf("after a release with another token: %d claims won, want 0", got)
	}
	if err := e.store.ReleaseQuiet(ctx, key, first); err != nil {
		t.Fatal(err)
	}
	if got := claims(t, e, 10, key, time.Hour, t0.Add(2*time.Minute)); got != 1 {
		t.Errorf("after the holder's release: %d of 10 claims won, want 1", got)
	}
	if err := e.store.ReleaseQuiet(ctx, key, first); err != nil {
		t.Errorf("releasing a claim that is no longer held: %v", err)
	}
	if got := claims(t, e, 10, key, time.Hour, t0.Add(3*time.Minute)); got != 0 {
		t.Errorf("the stale release freed the new holder's claim: %d won", got)
	}
	if _, _, err := e.store.ClaimQuiet(ctx, key, time.Millisecond, t0); err == nil {
		t.Error("a period under a second was accepted")
	}
}

// A claim whose UpdateItem was applied but whose answer was lost is retried by the SDK;
// the retry finds its own token and the claim is won, not lost to itself.
func TestClaimQuiet_AWriteWhoseAnswerWasLostIsStillWon(t *testing.T) {
	var drop atomic.Int64
	e := newEnv(t, dynamo.Options{}, dropAnswers(".UpdateItem", &drop))
	drop.Store(1)
	t0 := time.Date(2026, 11, 11, 8, 0, 0, 0, time.UTC)
	if _, ok, err := e.store.ClaimQuiet(context.Background(), "k", time.Hour, t0); err != nil || !ok {
		t.Fatalf("claim with its answer lost: won %v, %v; want won", ok, err)
	}
	if got := claims(t, e, 10, "k", time.Hour, t0); got != 0 {
		t.Errorf("%d later claims won, want 0", got)
	}
	if left := drop.Load(); left != -11 {
		t.Errorf("%d UpdateItem requests after the dropped one, want 11 (the SDK's retry and the 10 claims)", -left)
	}
}
