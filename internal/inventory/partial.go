package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Partial refunds (docs/design.md, "Refunds: goods before money"; docs/contract.md,
// "Merchant API"): an order's payment is refunded in one or more refunds, each its own
// record on the order (OrderRefund) with its own out_refund_no, lines, amount and
// status, each started by its own goods step and settled by its own money step.

// ErrRefundExceedsPaid: a refund asks for more of a line, or of the order, than is
// left to refund. docs/contract.md: 409 REFUND_EXCEEDS_PAID.
var ErrRefundExceedsPaid = errors.New("refund exceeds what is left to refund")

// WeChat Pay's own rules on refunds of one payment (WeChat Pay APIv3 docs, 申请退款,
// 注意: "一笔订单最多支持50次部分退款"; "交易时间超过一年的订单无法提交退款"; "同一笔订单
// 多次退款的请求需相隔1分钟"). The first two are checked before any goods move
// (RefundStep); the third is the money step's: a second refund's request answered
// FREQUENCY_LIMITED waits its turn in the refund queue.
const (
	// MaxRefundsPerOrder is how many refunds one payment takes at most.
	MaxRefundsPerOrder = 50
	// RefundPeriod is how long after its payment an order can be refunded.
	RefundPeriod = 365 * 24 * time.Hour
)

// MaxOrderRefunds is how many refunds one order takes at most, below WeChat Pay's
// MaxRefundsPerOrder: the order's item carries every refund (docs/design.md, "Refunds
// on the order's item"), about 250 bytes each besides its reason (up to
// MaxReasonLength characters, 600 bytes of CJK text), and every later write of the
// order costs a write unit per KB of it, twice in a transaction (DynamoDB Developer
// Guide, "DynamoDB read and write capacity", "Capacity management for
// transactions"). 20 refunds (one per line of the largest cart, MaxLines) keep an
// order's item under about 20 KB. The 21st is refused, 409 REFUND_NOT_ALLOWED
// (docs/contract.md).
const MaxOrderRefunds = 20

// MaxRefundIDLength bounds a refundId: 1 to 64 printable ASCII characters, like an
// Idempotency-Key.
const MaxRefundIDLength = 64

// RefundLine is one line of a refund: units of one SKU of the order.
type RefundLine struct {
	SKU string `json:"skuId"` // SKU id, one of the order's lines
	Qty int    `json:"qty"`   // units, ≥ 1
}

// RefusalError is a refusal whose reason, in words safe to show the caller, says more
// than its sentinel's fixed text (e.g. the order's status and which statuses can be
// refunded). It unwraps to the sentinel (ErrRefundNotAllowed, ErrRefundExceedsPaid,
// ErrIdempotencyKeyReused), so errors.Is selects the answer and errors.As reads the
// reason.
type RefusalError struct {
	Err    error
	Reason string
}

// Error reports the sentinel's text and the reason.
func (e *RefusalError) Error() string { return e.Err.Error() + ": " + e.Reason }

// Unwrap lets errors.Is see the sentinel.
func (e *RefusalError) Unwrap() error { return e.Err }

func refusal(err error, format string, args ...any) error {
	return &RefusalError{Err: err, Reason: fmt.Sprintf(format, args...)}
}

// OrderRefund is one refund of an order's own payment, held on the order.
type OrderRefund struct {
	RefundID     string       // the caller's idempotency key (refundId), or one derived from the request (RefundRequest.Key)
	OutRefundNo  string       // out_refund_no: OutRefundNo(order id, n) for the order's n-th refund
	Lines        []RefundLine // the units refunded, by SKU (sorted)
	Amount       int64        // fen: Σ qty × unit price of Lines (for a REFUND_PENDING order, the whole payment)
	Status       Status       // REFUNDING, then REFUNDED once WeChat Pay says SUCCESS
	Since        time.Time    // when its goods step committed
	Restocked    bool         // its units went back to stock (RETURN entries keyed by RefundLedgerRef)
	By           string       // who asked: principal ARN, user id or "stockguard"
	Reason       string       // why, as the caller said
	Body         string       // the request's lines and goods as asked (RefundRequest.Body); the same refundId asking other ones, or another Reason, is refused
	RefundedAt   *time.Time   // when WeChat Pay reported it done
	RefundAmount int64        // fen WeChat Pay reported refunded, once REFUNDED
	Error        string       // why WeChat Pay closed it, marked it abnormal or refused it for good
	Resolution   string       // an operator's last retry or settlement of it: what, by whom (IAM principal), why
}

// OutRefundNo is the out_refund_no of the n-th refund (n ≥ 1) of order id's own
// payment: the order id (6–32 of [0-9A-Za-z_-]) and "_R" for the first, "_R<n>" for
// the others, at most 36 characters, so every retry of one refund carries the same
// number and WeChat Pay refunds it once.
func OutRefundNo(orderID string, n int) string {
	if n <= 1 {
		return orderID + orderRefundSuffix
	}
	return orderID + orderRefundSuffix + strconv.Itoa(n)
}

// ownRefundOf parses an own refund's out_refund_no into its order id, or ok false.
func ownRefundOf(no string) (string, bool) {
	i := strings.LastIndex(no, orderRefundSuffix)
	if i < 0 {
		return "", false
	}
	switch n := no[i+len(orderRefundSuffix):]; {
	case n == "":
	case n[0] == '0':
		return "", false
	default:
		k, err := strconv.Atoi(n)
		if err != nil || k < 2 || k > MaxRefundsPerOrder {
			return "", false
		}
	}
	return no[:i], true
}

// RefundLedgerRef is the reference keying the RETURN ledger entries of refund r of
// order id: the order id for its first refund (as before partial refunds), the
// out_refund_no for the others, so each refund's entries are its own.
func RefundLedgerRef(orderID string, r OrderRefund) string {
	if r.OutRefundNo == OutRefundNo(orderID, 1) {
		return orderID
	}
	return r.OutRefundNo
}

// Key is the refundId of r: the caller's, or, when absent, one derived from what it
// asks: "all" for the whole of what is left (no lines), else "lines-" and 16 hex
// characters of SHA-256 of its lines, so that a request sent again without a refundId
// never refunds twice (to refund the same lines again, give a refundId).
// derivedKey matches the keys Key derives for a request without a refundId; a
// refundId given is refused when it matches (ValidateLines), so that the two never
// name each other's refund.
var derivedKey = regexp.MustCompile(`^(all|lines-[0-9a-f]{16})$`)

func (r RefundRequest) Key() string {
	switch {
	case r.RefundID != "":
		return r.RefundID
	case len(r.Lines) == 0:
		return "all"
	}
	sum := sha256.Sum256([]byte(linesText(r.Lines)))
	return "lines-" + hex.EncodeToString(sum[:8])
}

// Body is what r asks besides its reason, in one line: its lines as asked and its
// goods. The same refundId must come with the same body and reason (OrderRefund.Asks);
// the reason is kept once, in OrderRefund.Reason, so that an order's item does not
// grow by it twice.
func (r RefundRequest) Body() string {
	return fmt.Sprintf("lines=%s goods=%d", linesText(r.Lines), r.Goods)
}

// Asks reports whether req asks what made r: the same body (lines and goods as asked)
// and the same reason.
func (r *OrderRefund) Asks(req RefundRequest) bool {
	return r.Body == req.Body() && r.Reason == req.Reason
}

func linesText(lines []RefundLine) string {
	if len(lines) == 0 {
		return "all"
	}
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = l.SKU + ":" + strconv.Itoa(l.Qty)
	}
	return strings.Join(parts, ",")
}

// ValidateLines checks r's refundId (absent, or 1 to MaxRefundIDLength printable ASCII)
// and lines (absent, or 1 to MaxLines of valid SKU ids and quantities 1..MaxQty), and
// merges lines naming one SKU, sorted. The error wraps ErrInvalidRequest.
func (r *RefundRequest) ValidateLines() error {
	if r.RefundID != "" && !validKey(r.RefundID, MaxRefundIDLength) {
		return InvalidError("refundId must be 1 to %d printable ASCII characters", MaxRefundIDLength)
	}
	if derivedKey.MatchString(r.RefundID) {
		return InvalidError("refundId %q is reserved: it names the refunds asked without a refundId", r.RefundID)
	}
	if r.Lines == nil {
		return nil
	}
	in := make([]Line, len(r.Lines))
	for i, l := range r.Lines {
		in[i] = Line(l)
	}
	cart, err := newCart("lines", in)
	if err != nil {
		return err
	}
	r.Lines = r.Lines[:0]
	for _, l := range cart {
		r.Lines = append(r.Lines, RefundLine(l))
	}
	return nil
}

// validKey reports whether s is 1..max printable ASCII characters.
func validKey(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// Refund returns o's refund with refundId id, or nil.
func (o *Order) Refund(id string) *OrderRefund {
	for i := range o.Refunds {
		if o.Refunds[i].RefundID == id {
			return &o.Refunds[i]
		}
	}
	return nil
}

// refundIndex is the index in o.Refunds of the refund with out_refund_no no, or -1.
func (o *Order) refundIndex(no string) int {
	return slices.IndexFunc(o.Refunds, func(r OrderRefund) bool { return r.OutRefundNo == no })
}

// RefundedUnits is how many units of sku o's refunds cover (restocked says whether
// to count only those that went back to stock).
func (o *Order) RefundedUnits(sku string, restockedOnly bool) int {
	n := 0
	for _, r := range o.Refunds {
		if restockedOnly && !r.Restocked {
			continue
		}
		for _, l := range r.Lines {
			if l.SKU == sku {
				n += l.Qty
			}
		}
	}
	return n
}

// RefundsAmount is Σ of o's refunds' amounts (fen), whatever their status: what is no
// longer left to refund.
func (o *Order) RefundsAmount() int64 {
	var n int64
	for _, r := range o.Refunds {
		n += r.Amount
	}
	return n
}

// RefundedAmount is Σ of what WeChat Pay reported refunded of o's refunds (fen).
func (o *Order) RefundedAmount() int64 {
	var n int64
	for _, r := range o.Refunds {
		if r.Status == StatusRefunded {
			n += r.RefundAmount
		}
	}
	return n
}

// refundLines resolves what req asks of o into lines and their amount (fen): absent
// lines ask for every unit left; given lines must each name a line of o with at most
// the units left on it. Errors wrap ErrRefundExceedsPaid (nothing left, or more than
// is left).
func (o *Order) refundLines(req RefundRequest) ([]RefundLine, int64, error) {
	var lines []RefundLine
	var amount int64
	if req.Lines == nil {
		for _, it := range o.Items {
			if left := it.Qty - o.RefundedUnits(it.SKU, false); left > 0 {
				lines = append(lines, RefundLine{SKU: it.SKU, Qty: left})
				amount += int64(left) * it.UnitPrice
			}
		}
		if len(lines) == 0 {
			return nil, 0, refusal(ErrRefundExceedsPaid, "order %s is refunded whole already: nothing is left to refund", o.ID)
		}
		return lines, amount, nil
	}
	for _, l := range req.Lines {
		i := slices.IndexFunc(o.Items, func(it OrderItem) bool { return it.SKU == l.SKU })
		if i < 0 {
			return nil, 0, refusal(ErrRefundExceedsPaid, "order %s has no line of SKU %s", o.ID, l.SKU)
		}
		if left := o.Items[i].Qty - o.RefundedUnits(l.SKU, false); l.Qty > left {
			return nil, 0, refusal(ErrRefundExceedsPaid, "order %s: %d units of %s asked, %d of %d paid are left to refund", o.ID, l.Qty, l.SKU, left, o.Items[i].Qty)
		}
		lines = append(lines, l)
		amount += int64(l.Qty) * o.Items[i].UnitPrice
	}
	return lines, amount, nil
}

// returnShards is where the units of refund lines of item go back: the shards the
// item was committed on, in shard order, after the units earlier refunds restocked
// (skip), q units in all.
func returnShards(item OrderItem, skip, q int) map[int]int {
	out := map[int]int{}
	keys := mapsKeys(item.Shards)
	slices.Sort(keys)
	for _, n := range keys {
		units := item.Shards[n]
		take := min(units, skip)
		skip -= take
		units -= take
		if units <= 0 || q == 0 {
			continue
		}
		take = min(units, q)
		out[n] = take
		q -= take
	}
	return out
}

func mapsKeys(m map[int]int) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// errNothingToResolve: an operator's retry or settlement names a refund that WeChat
// Pay neither refused, closed nor marked abnormal (or one already REFUNDED).
// docs/contract.md: 409 REFUND_NOT_ALLOWED with the reason.
var errNothingToResolve = ErrRefundNotAllowed

// Resolution is what an operator does with a refund WeChat Pay did not make.
type Resolution int

// Resolutions.
const (
	// RetryRefund asks WeChat Pay again under the same out_refund_no, once the cause of
	// a refusal (REFUSED) is fixed: its error is cleared and the money step runs again.
	RetryRefund Resolution = iota + 1
	// SettleRefund records that the money went back outside WeChat Pay's refund API (by
	// hand, in the merchant platform): the refund REFUNDED, settled by the operator.
	SettleRefund
)

// ResolveRefund decides an operator's resolution of o's refund outRefundNo at now,
// recorded with by (their IAM principal) and reason: RetryRefund clears a REFUSED
// refund's error (it stays REFUNDING; the caller puts it on the refund queue);
// SettleRefund marks a refund with an error (REFUSED, CLOSED or ABNORMAL; not WAITING,
// which the queue asks again) REFUNDED, its
// whole amount settled outside WeChat Pay (off the REFUNDING list; the order REFUNDED
// with the last of its refunds). Conditioned on the order's refunds as read. Errors:
// ErrRefundNotFound; a *RefusalError wrapping ErrRefundNotAllowed when the refund has
// nothing to resolve that way.
func (o *Order) ResolveRefund(outRefundNo string, how Resolution, by, reason string, now time.Time) (Change, error) {
	i := o.refundIndex(outRefundNo)
	if i < 0 {
		return Change{}, fmt.Errorf("refund %s of order %s: %w", outRefundNo, o.ID, ErrRefundNotFound)
	}
	c, err := o.RefundByNo(outRefundNo).Resolve(how, by, reason, now)
	if err != nil {
		return Change{}, err
	}
	out := o.withRefund(i, c.Refund, c.Marker)
	out.Order.Refunds[i].Resolution = c.Refund.Resolution
	return out, nil
}

// Resolve decides an operator's resolution of r at now (see Order.ResolveRefund, which
// it decides for an order's own refunds; a second payment's refund is decided by it
// alone, conditioned on its out_refund_no as read): RetryRefund clears a REFUSED
// refund's error, SettleRefund marks a refund with an error (not WAITING) REFUNDED,
// its whole amount settled outside WeChat Pay. Resolution records what, by whom and
// why. Errors: a *RefusalError wrapping ErrRefundNotAllowed when r has nothing to
// resolve that way.
func (r *Refund) Resolve(how Resolution, by, reason string, now time.Time) (Change, error) {
	switch {
	case r.Status != StatusRefunding || r.Error == "":
		return Change{}, refusal(errNothingToResolve, "refund %s is %s without an error from WeChat Pay: nothing to retry or settle", r.OutRefundNo, r.Status)
	case r.Waiting():
		return Change{}, refusal(errNothingToResolve, "refund %s is asked of WeChat Pay again by itself (%s): settling it by hand too would pay twice", r.OutRefundNo, r.Error)
	case how == RetryRefund && !r.Refused():
		return Change{}, refusal(errNothingToResolve, "refund %s is %s at WeChat Pay, which takes no second request under its out_refund_no: settle it by hand", r.OutRefundNo, r.Error)
	}
	next := *r
	next.Resolution = fmt.Sprintf("%s by %s: %s", map[Resolution]string{RetryRefund: "retried", SettleRefund: "settled outside WeChat Pay"}[how], by, reason)
	c := Change{Kind: ChangeRefundResult, From: r.Status, Refund: &next, Guards: GuardRefundNo}
	if how == RetryRefund {
		next.Error = ""
	} else {
		next.Status, next.RefundedAt, next.RefundAmount = StatusRefunded, &now, r.Amount
		c.Marker = &Marker{OutRefundNo: r.OutRefundNo, Remove: true}
	}
	return c, nil
}
