package flashsale

import (
	"cmp"
	"slices"
	"time"
)

// Latency summarises latencies in milliseconds: of buyers, whose latency runs from
// their first attempt being sent to their final answer, retries and back-off included;
// or of pay and cancel requests (one attempt each), sent to answered.
// Percentiles use the nearest-rank method: the p-th percentile of n sorted samples is the
// sample at 1-based rank ceil(p/100 × n), so it is always an observed value.
type Latency struct {
	// Samples is the number of buyers (or requests) measured.
	Samples int `json:"samples"`
	// P50Ms, P90Ms and P99Ms are nearest-rank percentiles, ms.
	P50Ms float64 `json:"p50Ms"`
	P90Ms float64 `json:"p90Ms"`
	P99Ms float64 `json:"p99Ms"`
	// MaxMs is the slowest sample, ms.
	MaxMs float64 `json:"maxMs"`
}

// nearestRank returns the pct-th percentile (1..100) of sorted ascending samples by the
// nearest-rank method, or 0 when there are none.
func nearestRank(sorted []time.Duration, pct int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (pct*len(sorted) + 99) / 100 // ceil(pct/100 × n) in integers
	return sorted[max(rank, 1)-1]
}

// summarise sorts a copy of samples and summarises them.
func summarise(samples []time.Duration) Latency {
	s := slices.Clone(samples)
	slices.Sort(s)
	l := Latency{Samples: len(s)}
	if len(s) == 0 {
		return l
	}
	l.P50Ms = ms(nearestRank(s, 50))
	l.P90Ms = ms(nearestRank(s, 90))
	l.P99Ms = ms(nearestRank(s, 99))
	l.MaxMs = ms(s[len(s)-1])
	return l
}

// ms converts d to milliseconds.
func ms(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

// perSecond returns n per second of d, or 0 for an empty d.
func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Answer counts final answers with one HTTP status and error code: of buyers (their
// POST /orders), or of pay or cancel requests.
type Answer struct {
	// Status is the HTTP status; 0 means no HTTP answer (a transport error or timeout).
	Status int `json:"status"`
	// Code is the error code of the body ("STOCK_OUT", "FAIL" from the payment notify
	// route), empty for success and bodies without one.
	Code string `json:"code,omitempty"`
	// Count is the number of buyers or requests.
	Count int `json:"count"`
}

// countAnswers tallies the buyers' final answers by status and code, sorted by status
// then code.
func countAnswers(outcomes []outcome) []Answer {
	finals := make([]attempt, len(outcomes))
	for i, o := range outcomes {
		finals[i] = o.final()
	}
	return tally(finals)
}

// tally counts answers by status and code, sorted by status then code.
func tally(as []attempt) []Answer {
	type key struct {
		status int
		code   string
	}
	counts := make(map[key]int)
	for _, a := range as {
		counts[key{a.status, a.code}]++
	}
	answers := make([]Answer, 0, len(counts))
	for k, n := range counts {
		answers = append(answers, Answer{Status: k.status, Code: k.code, Count: n})
	}
	slices.SortFunc(answers, func(a, b Answer) int {
		return cmp.Or(cmp.Compare(a.Status, b.Status), cmp.Compare(a.Code, b.Code))
	})
	return answers
}
