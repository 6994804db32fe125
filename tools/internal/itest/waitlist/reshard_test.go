package waitlist_test

import (
	"fmt"
	"maps"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stockguard/stockguard/internal/inventory"
	"github.com/stockguard/stockguard/tools/internal/testing/stacktest"
)

// heldOnTwo is a stack where "tee" (4 units over 2 shards, 4 per buyer) sold out to b,
// w1 joined its waitlist, b cancelled and a pass gave w1 a hold of all 4 units: 2 on
// each shard.
func heldOnTwo(t *testing.T) *stacktest.Stack {
	t.Helper()
	s := stacktest.New(t, stacktest.Options{Seed: `[{"skuId":"tee","delivery":"none","name":"tee","price":1000,"stock":4,"shards":2,"limitPerUser":4}]`})
	id := s.Order(t, "b", `{"items":[{"skuId":"tee","qty":4}]}`)
	join(t, s, "w1")
	pass(t, s, false)
	if code, out := s.Call(t, "POST", "/orders/"+id+"/cancel", "b", nil, ""); code != http.StatusOK {
		t.Fatalf("cancel: %d %v", code, out)
	}
	if p := pass(t, s, true); p.Units != 4 {
		t.Fatalf("pass: %+v", p)
	}
	if e := entry(t, s, "w1"); !maps.Equal(e.Shards, map[int]int{0: 2, 1: 2}) {
		t.Fatalf("hold on %v, want 2 units on each shard", e.Shards)
	}
	return s
}

// shards lists tee's shard items as "available/onHand/reserved" by shard number.
func shards(t *testing.T, s *stacktest.Stack) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, it := range s.Scan(t, s.Tables.SKUs) {
		if it["kind"] == "SHARD" && it["skuId"] == "tee" {
			out[fmt.Sprint(it["shard"])] = fmt.Sprintf("%v/%v/%v", it["available"], it["onHand"], it["reserved"])
		}
	}
	return out
}

func reshard(t *testing.T, s *stacktest.Stack, n int) map[string]any {
	t.Helper()
	code, out := s.Call(t, "PUT", "/admin/skus/tee/shards", "", nil, fmt.Sprintf(`{"shards":%d}`, n))
	if code != http.StatusOK {
		t.Fatalf("reshard to %d: %d %v", n, code, out)
	}
	return out
}

// A shrinking reshard moves a live hold with its units to the shard that stays and
// completes: the buyer keeps the hold and orders with it, or it runs out and its
// units become available there; the books and reconcile stay clean throughout.
func TestReshard_MovesAWaitlistHoldWithItsUnits(t *testing.T) {
	for _, end := range []string{"ordered", "ran out"} {
		t.Run(end, func(t *testing.T) {
			s := heldOnTwo(t)
			if res := reshard(t, s, 1); res["complete"] != true || res["shards"] != 1.0 {
				t.Errorf("2 → 1 with a hold on shard 1: %v, want complete on 1 shard", res)
			}
			if got, want := shards(t, s), map[string]string{"0": "0/4/4"}; !maps.Equal(got, want) {
				t.Errorf("shards after 2 → 1: %v, want %v", got, want)
			}
			if e := entry(t, s, "w1"); e.State != inventory.WaitHeld || !maps.Equal(e.Shards, map[int]int{0: 4}) || e.Units != 4 {
				t.Errorf("hold after 2 → 1: %+v, want 4 units held on shard 0", e)
			}
			reconciled(t, s)
			want := map[string]string{"0": "0/4/4"}
			if end == "ordered" {
				if code, out := order(t, s, "w1", 4); code != http.StatusCreated {
					t.Fatalf("w1 orders with the moved hold: %d %v", code, out)
				}
			} else {
				s.Clock.Advance((inventory.WaitlistHoldSeconds + 1) * time.Second)
				if p := pass(t, s, true); p.Passed != 1 {
					t.Fatalf("pass: %+v", p)
				}
				want = map[string]string{"0": "4/4/0"}
			}
			if got := shards(t, s); !maps.Equal(got, want) {
				t.Errorf("shards after the hold %s: %v, want %v", end, got, want)
			}
			reconciled(t, s)
		})
	}
}

// A buyer ordering with the hold while the reshard moves it: whichever lands first,
// the order takes exactly the 4 held units, nothing is given back to a shard the
// hold left, and the books stay exact (the order reads the entry again when the move
// changed it).
func TestReshard_AndAnOrderWithTheHoldRacing(t *testing.T) {
	s := heldOnTwo(t)
	var wg sync.WaitGroup
	var res map[string]any
	wg.Go(func() { res = reshard(t, s, 1) })
	wg.Go(func() {
		if code, out := order(t, s, "w1", 4); code != http.StatusCreated {
			t.Errorf("w1 orders with the hold: %d %v", code, out)
		}
	})
	wg.Wait()
	if e := entry(t, s, "w1"); e.State != inventory.WaitDone {
		t.Errorf("entry: %+v, want DONE", e)
	}
	var a, h, r int
	for _, it := range s.Scan(t, s.Tables.SKUs) {
		if it["kind"] == "SHARD" && it["skuId"] == "tee" {
			a, h, r = a+int(it["available"].(float64)), h+int(it["onHand"].(float64)), r+int(it["reserved"].(float64))
		}
	}
	if a != 0 || h != 4 || r != 4 {
		t.Errorf("tee available %d, on-hand %d, reserved %d; want 0, 4, 4 (reshard %v)", a, h, r, res)
	}
	if res["complete"] == true && len(shards(t, s)) != 1 {
		t.Errorf("complete with shards %v", shards(t, s))
	}
	reconciled(t, s)
}
