package main

import (
	"bytes"
	"strings"
	"testing"
)

// A bad flag is one line naming it, exit status 2, and no sale.
func TestRun_RefusesBadFlagsNamingThem(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-skus", "0"}, "-skus: must be 1 to 1,000"},
		{[]string{"-skus", "ten"}, `invalid value "ten" for flag -skus`},
		{[]string{"-stock", "-1"}, "-stock: must be at least 1"},
		{[]string{"-shards", "65"}, "-shards: must be 0 (planned) to 64"},
		{[]string{"-buyers", "0"}, "-buyers: must be 1 to 10,000,000"},
		{[]string{"-over", "0s"}, "-over: must be positive"},
		{[]string{"-over", "soon"}, `invalid value "soon" for flag -over`},
		{[]string{"-page-views", "-2"}, "-page-views: must be 0 to 100"},
		{[]string{"-pay-ratio", "1.5"}, "-pay-ratio: must be 0 to 1"},
		{[]string{"-pay-ratio", "0.8", "-cancel-ratio", "0.3"}, "-pay-ratio: -pay-ratio + -cancel-ratio + -late-ratio must be at most 1"},
		{[]string{"-payment-timeout", "10s", "-pay-after", "8s"}, "-pay-after: must be positive and 1.5× it below -payment-timeout"},
		{[]string{"-seed", "-1"}, `invalid value "-1" for flag -seed`},
		{[]string{"-slowdown", "0.5"}, "-slowdown: must be 0 (chosen) or at least 1"},
		{[]string{"-reserved", "CloseOrderFunction"}, `invalid value "CloseOrderFunction" for flag -reserved`},
		{[]string{"-usd-wru", "-1"}, "-usd-wru: must not be negative"},
		// "Amazon API Gateway quotas": the account burst is not requestable.
		{[]string{"-api-burst", "100000"}, `-api-burst: an API Gateway account burst of 100000 is not a setting AWS grants: the burst is 5000 and cannot be requested ("Amazon API Gateway quotas"`},
		{[]string{"-warm-rcu", "-1"}, "-warm-wcu: -warm-wcu and -warm-rcu must not be negative"},
		{[]string{"-frobnicate"}, "flag provided but not defined: -frobnicate"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != 2 || out.Len() != 0 || strings.Count(errOut.String(), "\n") != 1 || !strings.HasPrefix(errOut.String(), "rehearse: ") || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("rehearse %s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", strings.Join(tc.args, " "), code, out.String(), errOut.String(), tc.want)
		}
	}
}
