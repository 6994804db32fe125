package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/stockguard/stockguard/internal/clock"
)

// ErrUnsupportedSchedule is returned, wrapped, by ParseRate for a valid
// kind of schedule expression that does not run locally: cron(…) and at(…).
var ErrUnsupportedSchedule = errors.New("only rate(…) schedule expressions run locally")

// rateExpr matches "rate(<value> <unit>)".
var rateExpr = regexp.MustCompile(`^rate\(([0-9]+) (minutes?|hours?|days?)\)$`)

// rateUnits maps a rate expression's unit, singular, to its duration.
var rateUnits = map[string]time.Duration{
	"minute": time.Minute,
	"hour":   time.Hour,
	"day":    24 * time.Hour,
}

// ParseRate returns the period of an EventBridge rate expression, "rate(value
// unit)" (EventBridge user guide, "Schedule expressions for rules", and
// EventBridge Scheduler's "rate-based schedules"): value is a positive
// integer; unit is minute, hour or day, singular when value is 1 and plural
// (minutes, hours, days) otherwise. So "rate(1 minute)" is 1 min and
// "rate(2 hours)" 2 h, while "rate(1 minutes)", "rate(5 minute)",
// "rate(0 minutes)" and "rate(5  minutes)" are errors. A cron(…) or at(…)
// expression returns an error wrapping ErrUnsupportedSchedule.
func ParseRate(expr string) (time.Duration, error) {
	if strings.HasPrefix(expr, "cron(") || strings.HasPrefix(expr, "at(") {
		return 0, fmt.Errorf("schedule %q: %w", expr, ErrUnsupportedSchedule)
	}
	m := rateExpr.FindStringSubmatch(expr)
	if m == nil {
		return 0, fmt.Errorf("schedule %q: not rate(value unit) with unit minute(s), hour(s) or day(s)", expr)
	}
	value, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || value <= 0 {
		return 0, fmt.Errorf("schedule %q: value must be a positive integer (at most %d)", expr, int64(math.MaxInt64))
	}
	unit, plural := strings.CutSuffix(m[2], "s")
	if plural != (value != 1) {
		return 0, fmt.Errorf("schedule %q: the unit must be singular for 1 and plural otherwise", expr)
	}
	if value > int64(math.MaxInt64/rateUnits[unit]) {
		return 0, fmt.Errorf("schedule %q: period too long", expr)
	}
	return time.Duration(value) * rateUnits[unit], nil
}

// ScheduledEvent returns the event EventBridge sends a function for a
// scheduled rule (EventBridge user guide, "Amazon EventBridge events" and
// "Scheduled events"): version "0", a random UUID as id, detail-type
// "Scheduled Event", source "aws.events", account and region from ruleARN
// (arn:aws:events:<region>:<account>:rule/<name>; AccountID and Region when
// it is not such an ARN), time now in UTC to the second, resources
// [ruleARN] and detail {}.
//
// A rule with Input (SAM Schedule's Input) sends that Input instead, and
// EventBridge Scheduler (SAM ScheduleV2) never sends this event: its target
// gets the schedule's Input.
func ScheduledEvent(now time.Time, ruleARN string) events.CloudWatchEvent {
	region, account := Region, AccountID
	if parts := strings.SplitN(ruleARN, ":", 6); len(parts) == 6 && parts[0] == "arn" && parts[2] == "events" {
		region, account = parts[3], parts[4]
	}
	return events.CloudWatchEvent{
		Version:    "0",
		ID:         uuid.NewString(),
		DetailType: "Scheduled Event",
		Source:     "aws.events",
		AccountID:  account,
		Time:       now.UTC().Truncate(time.Second),
		Region:     region,
		Resources:  []string{ruleARN},
		Detail:     json.RawMessage("{}"),
	}
}

// Every calls fn(ctx) every period, the first time one period after it is
// called, until ctx is done, and returns once ctx is done and no call is
// running. Calls never overlap: fn runs in Every's goroutine, and when a
// call overruns, the ticks it overran are skipped, so the next call comes
// at the next tick, on the same grid (start + n·period), not at once. fn
// should return soon after ctx is done. Every panics if period is not
// positive, like time.NewTicker.
func Every(ctx context.Context, period time.Duration, fn func(context.Context)) {
	every(ctx, period, fn, time.Now, clock.Sleep)
}

// every is Every with its clock: now reads it, and wait blocks for a
// duration or until ctx is done.
func every(ctx context.Context, period time.Duration, fn func(context.Context),
	now func() time.Time, wait func(context.Context, time.Duration) error) {
	if period <= 0 {
		panic("local: non-positive period for Every")
	}
	next := now().Add(period)
	for {
		wait(ctx, next.Sub(now()))
		if ctx.Err() != nil {
			return
		}
		fn(ctx)
		if ctx.Err() != nil {
			return
		}
		// Skip the ticks at or before now: they passed while fn ran.
		if t := now(); !next.After(t) {
			next = next.Add((t.Sub(next)/period + 1) * period)
		}
	}
}
