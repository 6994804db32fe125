package rehearse

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stockguard/stockguard/tools/internal/ddblimits"
	"github.com/stockguard/stockguard/tools/internal/testing/booktest"
)

// recorder keeps what the buyers saw. Safe for concurrent use.
type recorder struct {
	mu        sync.Mutex
	answers   map[string]int // by HTTP status
	byRequest map[string]int // by "step status code"
	// timeline series, counts per bucket of model time
	series                    map[string][]int
	orderLatency, pageLatency []float32 // ms at 1×
	// buyerLatency is each ordering buyer's wait from the first POST /orders to the
	// final answer (created, or refused with no retry left), retries and the waits
	// before them included; ms at 1×.
	buyerLatency         []float32
	orders               []createdOrder
	stockOuts            [][]booktest.Window // per SKU
	soldOutAt            []time.Duration     // per SKU; -1 never
	left                 map[string]int
	refusedBuyers        int
	refusedWU, refusedRU float64
	// refusedLate* are the refused buyers whose first POST /orders came after their
	// SKU was seen sold out, and their units: the rest were in flight as it sold out.
	refusedLate                  int
	refusedLateWU, refusedLateRU float64
	// refusedOps is the refused buyers' units per DynamoDB operation.
	refusedOps [len(ddblimits.MeteredOperations)]float64
	units      map[string]*units // by what the requests were for
}

// createdOrder is one 201.
type createdOrder struct {
	id         string
	sku        int32
	start, end time.Time
}

// units are the DynamoDB units and requests of one kind of request.
type units struct {
	requests            int
	write, read         float64
	minWrite            float64         // the cheapest request's write units among those that wrote
	writes              map[float64]int // requests whose writes all applied at their first send, by their write units
	dynamoDB, throttled int64
}

// bucket is the timeline's resolution, in model time.
const bucket = 100 * time.Millisecond

// Timeline series.
const (
	seriesOrders     = "orders"
	seriesPages      = "pages"
	seriesThrottled  = "throttled"
	seriesFailed     = "failed"
	seriesIndex      = "indexThrottles"
	seriesItem       = "itemThrottles"
	seriesTableQuota = "tableThrottles"
)

// count adds one to series at model time now; the caller holds r.mu.
func (r *recorder) count(series string, now time.Duration) {
	b := max(int(now/bucket), 0)
	s := r.series[series]
	for len(s) <= b {
		s = append(s, 0)
	}
	s[b]++
	r.series[series] = s
}

// throttled records a DynamoDB refusal by limit at model time now.
func (r *recorder) throttled(limit string, now time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case strings.HasPrefix(limit, "index "):
		r.count(seriesIndex, now)
	case strings.HasPrefix(limit, "item "):
		r.count(seriesItem, now)
	case strings.HasPrefix(limit, "partition "):
		// "partition T.I#3 key" is an index's, "partition T#17 key" a table's.
		if part, _, _ := strings.Cut(strings.TrimPrefix(limit, "partition "), "#"); strings.Contains(part, ".") {
			r.count(seriesIndex, now)
		} else {
			r.count(seriesItem, now)
		}
	default:
		r.count(seriesTableQuota, now)
	}
}

func newRecorder(skus int) *recorder {
	r := &recorder{
		series:  map[string][]int{},
		answers: map[string]int{}, byRequest: map[string]int{}, left: map[string]int{}, units: map[string]*units{},
		stockOuts: make([][]booktest.Window, skus), soldOutAt: make([]time.Duration, skus),
	}
	for i := range r.soldOutAt {
		r.soldOutAt[i] = -1
	}
	return r
}

var stepNames = map[step]string{
	stepView: "GET /skus/{skuId}", stepOrder: "POST /orders", stepPrepay: "POST /orders/{orderId}/pay",
	stepPay: "pay at WeChat Pay", stepCancel: "POST /orders/{orderId}/cancel", stepLatePay: "late payment notified",
}

// answer records one answer to a buyer's request, its latency d (real), at model
// time now.
func (r *recorder) answer(st step, status int, code string, d time.Duration, slow float64, now time.Duration, sku int32) {
	ms := float32(float64(d) / slow / float64(time.Millisecond))
	r.mu.Lock()
	defer r.mu.Unlock()
	if st != stepPay && st != stepLatePay {
		r.answers[strconv.Itoa(status)]++
	}
	key := stepNames[st] + " " + strconv.Itoa(status)
	if code != "" {
		key += " " + code
	}
	r.byRequest[key]++
	switch {
	case status == http.StatusTooManyRequests:
		r.count(seriesThrottled, now)
	case status >= 500:
		r.count(seriesFailed, now)
	}
	switch {
	case st == stepView && status == http.StatusOK:
		r.count(seriesPages, now)
		r.pageLatency = append(r.pageLatency, ms)
	case st == stepOrder && (status == http.StatusCreated || status == http.StatusOK):
		r.count(seriesOrders, now)
		r.orderLatency = append(r.orderLatency, ms)
	}
}

// add counts the units of one request on the kind it was for.
func (r *recorder) add(kind string, m *ddblimits.Meter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.units[kind]
	if u == nil {
		u = &units{}
		r.units[kind] = u
	}
	if w := m.WriteUnits(); w > 0 {
		if u.minWrite == 0 || w < u.minWrite {
			u.minWrite = w
		}
		if u.writes == nil {
			u.writes = map[float64]int{}
		}
		if m.Unapplied() == 0 {
			u.writes[w]++
		}
	}
	u.requests++
	u.write += m.WriteUnits()
	u.read += m.ReadUnits()
	u.dynamoDB += m.Requests()
	u.throttled += m.Throttles()
}

func (r *recorder) created(id string, sku int32, start, end time.Time, now time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.orders = append(r.orders, createdOrder{id, sku, start, end})
}

func (r *recorder) stockOut(sku int32, start, end time.Time, now time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stockOuts[sku] = append(r.stockOuts[sku], booktest.Window{Start: start, End: end})
	r.soldOutLocked(sku, now)
}

func (r *recorder) soldOut(sku int32, now time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.soldOutLocked(sku, now)
}

// soldOutBy reports whether sku was seen sold out (a STOCK_OUT or a page showing
// none available) before model time at.
func (r *recorder) soldOutBy(sku int32, at time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.soldOutAt[sku] >= 0 && r.soldOutAt[sku] < at
}

func (r *recorder) soldOutLocked(sku int32, now time.Duration) {
	if r.soldOutAt[sku] < 0 || now < r.soldOutAt[sku] {
		r.soldOutAt[sku] = now
	}
}

func (r *recorder) leave(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.left[why]++
}

// buyerAnswered records one ordering buyer's wait d (model time) from the first
// click to the final answer.
func (r *recorder) buyerAnswered(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buyerLatency = append(r.buyerLatency, float32(float64(d)/float64(time.Millisecond)))
}

// opUnits is units per DynamoDB operation, in the order of ddblimits.MeteredOperations.
type opUnits [len(ddblimits.MeteredOperations)]float32

// refused records a buyer whose order requests all failed, and their write and read
// units, also per operation (ops); late: their first POST /orders came after the SKU
// was seen sold out.
func (r *recorder) refused(writeUnits, readUnits float64, ops *opUnits, late bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refusedBuyers++
	if ops != nil {
		for i, u := range ops {
			r.refusedOps[i] += float64(u)
		}
	}
	r.refusedWU += writeUnits
	r.refusedRU += readUnits
	if late {
		r.refusedLate++
		r.refusedLateWU += writeUnits
		r.refusedLateRU += readUnits
	}
	r.left["refused an order"]++
}

// typical is the write units most requests that wrote took (the smaller of a tie), and
// how many requests wrote; 0, 0 when none did. Only requests whose every write applied
// at its first send count: a write refused (a reconcile cut's epoch, a conflict, a
// throttle) is sent again and its units counted twice, which the planner leaves out.
func (u *units) typical() (wu float64, wrote int) {
	most := 0
	for w, n := range u.writes {
		wrote += n
		if n > most || (n == most && w < wu) {
			wu, most = w, n
		}
	}
	return wu, wrote
}
