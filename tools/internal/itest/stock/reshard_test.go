package stock_test

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stockguard/stockguard/internal/testing/testkit"
)

// Buyers keep buying while the SKU is resharded 1 → 16 → 4 (and on, 16 ↔ 4, until
// they are done): units move between shards in MOVE transactions, and yet no buyer is
// told STOCK_OUT while units remain, and no unit is sold twice. There are exactly as
// many buyers as units, so every STOCK_OUT answer would be a false one; one more buyer
// afterwards gets the one true STOCK_OUT. Each buyer group buys a third of its units
// while 1 → 16 runs, the next third from when it is done (while 16 → 4 runs), and the
// rest from when that is done, so that every step races buyers.
func TestReshard_BuyersRacingAReshardSeeNoFalseStockOutAndNoOversell(t *testing.T) {
	const stock, groups, perGroup = 120, 8, 15
	e := newEnv(t)
	e.must(t, http.StatusCreated, "POST", "/admin/skus", fmt.Sprintf(`{"skuId":"hot","delivery":"none","name":"Hot","price":100,"stock":%d}`, stock))
	var (
		mu                  sync.Mutex
		orders              []string
		served, falseOut    int
		busy, other         int
		done                atomic.Bool
		reshards, moved     int
		reshardBusy, ladder int
		steps               = []chan struct{}{make(chan struct{}), make(chan struct{})}
	)
	testkit.Parallel(groups+1, func(g int) {
		if g == groups { // the operator
			for i := 0; i == 0 || !done.Load(); i++ {
				target := []int{16, 4}[i%2]
				code, res := e.call("PUT", "/admin/skus/hot/shards", fmt.Sprintf(`{"shards":%d}`, target))
				switch code {
				case http.StatusOK:
					reshards++
					moved += num(res["moved"])
					if i < len(steps) {
						close(steps[i]) // the next third of the buyers may go
					}
					if i == 1 {
						ladder = 1 // 1 → 16 → 4 ran
					}
				case http.StatusServiceUnavailable:
					reshardBusy++
				default:
					t.Errorf("reshard to %d: %d %v", target, code, res)
				}
			}
			return
		}
		for k := range perGroup {
			if third := k * 3 / perGroup; third > 0 {
				<-steps[third-1]
			}
			for {
				code, out := e.buy(fmt.Sprintf("buyer-%d-%d", g, k), "hot", 1)
				mu.Lock()
				switch {
				case code == http.StatusCreated:
					served++
					orders = append(orders, out["orderId"].(string))
				case code == http.StatusConflict && out["code"] == "STOCK_OUT":
					falseOut++
				case code == http.StatusServiceUnavailable:
					busy++
				default:
					other++
					t.Errorf("buyer %d-%d: %d %v", g, k, code, out)
				}
				mu.Unlock()
				if code != http.StatusServiceUnavailable {
					break
				}
			}
		}
		if mu.Lock(); served+falseOut+other == groups*perGroup {
			done.Store(true)
		}
		mu.Unlock()
	})
	t.Logf("%d buyers: %d served, %d false STOCK_OUT, %d BUSY (retried); %d reshards (%d BUSY), %d units moved",
		groups*perGroup, served, falseOut, busy, reshards, reshardBusy, moved)
	if served != stock || falseOut != 0 || other != 0 || ladder != 1 {
		t.Fatalf("served %d (want %d), false STOCK_OUT %d, other answers %d, 1→16→4 ran: %v", served, stock, falseOut, other, ladder == 1)
	}
	if code, out := e.buy("one-more", "hot", 1); code != http.StatusConflict || out["code"] != "STOCK_OUT" {
		t.Errorf("buyer %d: %d %v, want STOCK_OUT", stock+1, code, out)
	}
	if a, r, h := e.stock(t, "hot"); a != 0 || r != stock || h != stock {
		t.Errorf("sold out: available %d, reserved %d, on-hand %d; want 0, %d, %d", a, r, h, stock, stock)
	}
	e.clean(t)
	// Release everything; the last reshard to 4 can then drop the emptied shards.
	for _, id := range orders {
		o := e.must(t, http.StatusOK, "GET", "/admin/orders/"+id, "")
		e.stack.Call(t, "POST", "/orders/"+id+"/cancel", o["userId"].(string), nil, "")
	}
	res := e.must(t, http.StatusOK, "PUT", "/admin/skus/hot/shards", `{"shards":4}`)
	if res["shards"] != 4.0 || res["complete"] != true {
		t.Errorf("final reshard to 4: %v", res)
	}
	if a, r, h := e.stock(t, "hot"); a != stock || r != 0 || h != stock {
		t.Errorf("released: available %d, reserved %d, on-hand %d; want %d, 0, %d", a, r, h, stock, stock)
	}
	e.clean(t)
}
