package rehearse

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	apigw "github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/tools/internal/ddblimits"
)

// The line document in a queued sale (QueueConfig.LinePolls; docs/design.md, "The
// line document"): every buyer waiting with a position reads GET /skus/{skuId}/line
// once a second, through CloudFront. Those reads are CDN hits, not API requests, so
// they are counted, not sent: each whole second of the sale, the first read after the
// copy expired fetches the document from the origin (waitroom.Room.Line, the real
// handler, on the store's frontier cache), and every waiting buyer reads that copy
// once during the second, at its own phase (its arrival's fraction of a second). The
// first copy that says soldOut tells every buyer with a position beyond its
// admittedThrough SOLD_OUT at that read; such a buyer polls its ticket no more.
// Buyers not placed yet keep polling their ticket, as the mini-program does.

// LineSummary is what the waiting buyers' reads of the line document came to.
type LineSummary struct {
	// Reads are the buyers' reads of the document (CDN hits but for the Fetches);
	// Fetches the origin's answers (an API request and a createOrder invocation each,
	// one a second at most) and FetchReadUnits and FetchWriteUnits their DynamoDB
	// units in all.
	Reads           int     `json:"reads"`
	Fetches         int     `json:"fetches"`
	FetchReadUnits  float64 `json:"fetchReadUnits"`
	FetchWriteUnits float64 `json:"fetchWriteUnits"`
	// Told is how many waiting buyers the line told SOLD_OUT (the others learnt it
	// from their ticket: SoldOutSummary counts both).
	Told int `json:"told"`
}

// lineModel is the line document's state in a running queued sale.
type lineModel struct {
	ended   []bool // by buyer: told SOLD_OUT, by the line or its ticket
	soldOut bool   // a fetched copy said soldOut
	meter   *ddblimits.Meter
	ctx     context.Context
	sum     LineSummary
}

// startLine sets up the line document's model when the sale's buyers read it.
func (q *queueSale) startLine(ctx context.Context) {
	if !q.cfg.LinePolls {
		return
	}
	l := &lineModel{ended: make([]bool, q.cfg.Buyers), meter: &ddblimits.Meter{}}
	l.ctx = ddblimits.WithMeter(ctx, l.meter)
	q.line = l
}

// isEnded reports whether buyer b was told SOLD_OUT by the line (false without a line).
func (l *lineModel) isEnded(b int32) bool { return l != nil && l.ended[b] }

// end notes that buyer b's ticket told it SOLD_OUT, so the line tells it nothing more.
func (l *lineModel) end(b int32) {
	if l != nil {
		l.ended[b] = true
	}
}

// lineSecond plays the line document's second that starts at at (a whole second of
// the sale): the origin's fetch, when anyone reads it, and the reads.
func (q *queueSale) lineSecond(at time.Duration) error {
	l := q.line
	if l == nil || l.soldOut || at%time.Second != 0 {
		return nil
	}
	readers := 0
	for i := range q.buyers {
		if q.readsLine(int32(i)) {
			readers++
		}
	}
	if readers == 0 {
		return nil
	}
	resp, err := q.room.Line(l.ctx, apigw.APIGatewayV2HTTPRequest{PathParameters: map[string]string{"skuId": queueSKU}})
	if err != nil {
		return fmt.Errorf("line document: %w", err)
	}
	l.sum.Fetches++
	l.sum.Reads += readers
	var doc struct {
		AdmittedThrough int  `json:"admittedThrough"`
		SoldOut         bool `json:"soldOut"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &doc); err != nil {
		return fmt.Errorf("line document: %w", err)
	}
	if !doc.SoldOut {
		return nil
	}
	l.soldOut = true
	for i := range q.buyers {
		if b := &q.buyers[i]; q.readsLine(int32(i)) && int(b.position) > doc.AdmittedThrough {
			l.ended[i] = true
			l.sum.Told++
			q.rec.toldSoldOut = append(q.rec.toldSoldOut, at+b.arrived%time.Second)
		}
	}
	return nil
}

// readsLine reports whether buyer b reads the line: placed, not admitted, not told
// SOLD_OUT.
func (q *queueSale) readsLine(b int32) bool {
	buyer := &q.buyers[b]
	return buyer.position > 0 && buyer.admission == "" && !q.line.ended[b]
}

// summary is the line's summary (nil without a line).
func (l *lineModel) summary() *LineSummary {
	if l == nil {
		return nil
	}
	s := l.sum
	s.FetchReadUnits, s.FetchWriteUnits = l.meter.ReadUnits(), l.meter.WriteUnits()
	return &s
}

// writeText writes the line's figures (nothing without a line).
func (s *LineSummary) writeText(w io.Writer) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "  line document: %d reads at the CDN, %d origin fetches (%.1f read units, %g write units in all); %d buyers told SOLD_OUT by it\n",
		s.Reads, s.Fetches, s.FetchReadUnits, s.FetchWriteUnits, s.Told)
}
